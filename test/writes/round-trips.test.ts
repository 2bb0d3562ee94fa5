import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";

/**
 * How many statements a write sends, counted on the service's own pool connections (every statement is one round
 * trip): the write path's cost is mostly per statement, so a change that adds one should be a decision.
 */

let app: TestApp;
let t: Tenant;
let counting = false;
let statements: string[] = [];

/** Counts each statement a pool connection sends while `counting`, from the moment it is first lent. */
function countStatements(pool: pg.Pool): void {
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (config: unknown, ...rest: unknown[]) => unknown;
    client.query = ((config: unknown, ...rest: unknown[]) => {
      if (counting) statements.push(typeof config === "string" ? config : String((config as { text?: unknown } | null)?.text));
      return query(config, ...rest);
    }) as typeof client.query;
  });
}

beforeAll(async () => {
  // The embedded default: rate-limit counters in memory, so the only statement before the write is the grant read.
  app = await startTestApp({ RATE_LIMIT_BACKEND: "memory" });
  countStatements(app.services.pool);
  t = await createTenant(app);
  // The store's catalog is seeded by its first order: not the write counted below.
  await call(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" } });
});
afterAll(() => app.close());

async function counted<T>(write: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  statements = [];
  counting = true;
  try {
    return { result: await write(), statements };
  } finally {
    counting = false;
  }
}

describe("statements per write, with an Idempotency-Key", () => {
  it("a sandbox order: 9 (grant read, BEGIN, claim, the scenario's products and customer, the order number with the prices and customer check, the order with its rows and event, read-back, record, COMMIT)", async () => {
    const { result, statements } = await counted(() =>
      call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" }, headers: { "idempotency-key": "rt-post" } }),
    );
    expect(result.status).toBe(201);
    expect(statements.length, statements.join("\n")).toBe(9);
  });

  it("a status change: 7 (grant read, BEGIN, claim, the move with its history and event, read-back, record, COMMIT)", async () => {
    const created = await call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cash" } });
    const { result, statements } = await counted(() =>
      call(app, "PATCH", `/public/v1/orders/${created.body.id}/status`, {
        token: t.token,
        body: { status: "CONFIRMED" },
        headers: { "idempotency-key": "rt-patch" },
      }),
    );
    expect(result.status).toBe(200);
    expect(statements.length, statements.join("\n")).toBe(7);
  });
});
