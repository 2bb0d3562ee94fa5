import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { recordStatements, type StatementRecorder } from "../helpers/statements.js";

/**
 * How many statements a write sends, counted on the service's own pool connections (every statement is one round
 * trip): the write path's cost is mostly per statement, so a change that adds one should be a decision.
 */

let app: TestApp;
let t: Tenant;
let recorder: StatementRecorder;

beforeAll(async () => {
  // The embedded default: rate-limit counters in memory; with the grant cached too, every statement is the write's.
  app = await startTestApp({ RATE_LIMIT_BACKEND: "memory" });
  recorder = recordStatements(app.services.pool);
  await app.services.grants.listen();
  t = await createTenant(app);
  // The store's catalog is seeded by its first order, which also caches the grant (each test's write follows an
  // uncounted request within GRANT_CACHE_TTL_MS).
  await call(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" } });
});
afterAll(() => app.close());

describe("statements per write, with an Idempotency-Key", () => {
  it("a sandbox order: 8 (BEGIN, claim, the scenario's products and customer, the order number with the prices and customer check, the order with its rows and event, read-back, record, COMMIT)", async () => {
    const { result, statements } = await recorder.during(() =>
      call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" }, headers: { "idempotency-key": "rt-post" } }),
    );
    expect(result.status).toBe(201);
    expect(statements.length, statements.join("\n")).toBe(8);
  });

  it("a status change: 6 (BEGIN, claim, the move with its history and event, read-back, record, COMMIT)", async () => {
    const created = await call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" } });
    const { result, statements } = await recorder.during(() =>
      call(app, "PATCH", `/public/v1/orders/${created.body.id}/status`, {
        token: t.token,
        body: { status: "CONFIRMED" },
        headers: { "idempotency-key": "rt-patch" },
      }),
    );
    expect(result.status).toBe(200);
    expect(statements.length, statements.join("\n")).toBe(6);
  });
});
