import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage } from "node:http";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, partnerPrincipal, type Tenant } from "../helpers/tenants.js";
import { canonicalJson, idempotency } from "../../src/rest/idempotency.js";
import { ApiError } from "../../src/errors.js";
import type { AnyRoute, RouteInput, RouteResult } from "../../src/rest/route.js";
import type { PartnerPrincipal } from "../../src/auth/principal.js";

/**
 * The middleware against real PostgreSQL, around a counting operation: what matters is how often the
 * protected operation runs. End-to-end replays over HTTP are covered with the write routes.
 */

let app: TestApp;
let tenant: Tenant;
let principal: PartnerPrincipal;
const route = { method: "POST", status: 201 } as AnyRoute;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
  principal = await partnerPrincipal(app, tenant);
});
afterAll(() => app.close());

function request(key: string | undefined, body: unknown, url = "/public/v1/customers") {
  const input: RouteInput = { path: {}, query: {}, body, principal };
  const req = { url, headers: key === undefined ? {} : { "idempotency-key": key } } as unknown as IncomingMessage;
  return { route, input, rawBody: JSON.stringify(body), req };
}

function counting(result: () => Promise<RouteResult>) {
  const op = {
    calls: 0,
    run: async () => {
      op.calls++;
      return result();
    },
  };
  return op;
}

describe("Idempotency-Key", () => {
  const mw = () => idempotency(app.services.db);

  it("replays the recorded response without running again, marked Idempotent-Replayed", async () => {
    const op = counting(async () => ({ status: 201, body: { id: "c1", n: Math.random() } }));
    const first = await mw()(request("key-1", { name: "Ana" }), op.run);
    const second = await mw()(request("key-1", { name: "Ana" }), op.run);
    expect(op.calls).toBe(1);
    expect(second.body).toEqual(first.body);
    expect(second.headers?.["idempotent-replayed"]).toBe("true");
    expect(first.headers?.["idempotent-replayed"]).toBeUndefined();
  });

  it("the same key with a different payload or path is 409 IDEMPOTENCY_CONFLICT", async () => {
    const op = counting(async () => ({ body: {} }));
    await mw()(request("key-2", { name: "Ana" }), op.run);
    await expect(mw()(request("key-2", { name: "Bia" }), op.run)).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT", status: 409 });
    await expect(mw()(request("key-2", { name: "Ana" }, "/public/v1/orders"), op.run)).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
    expect(op.calls).toBe(1);
  });

  it("key order in the body does not change the fingerprint", async () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
    const op = counting(async () => ({ body: { ok: true } }));
    await mw()(request("key-3", { a: 1, b: 2 }), op.run);
    await mw()(request("key-3", { b: 2, a: 1 }), op.run);
    expect(op.calls).toBe(1);
  });

  it("ten concurrent duplicates have one effect and the same answer", async () => {
    const op = counting(async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { status: 201, body: { id: "only-once" } };
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => mw()(request("key-4", { name: "Caio" }), op.run)));
    expect(op.calls).toBe(1);
    for (const r of results) expect(r.body).toEqual({ id: "only-once" });
    expect(results.filter((r) => r.headers?.["idempotent-replayed"] === "true")).toHaveLength(9);
  });

  it("records a business error (422) and replays it, but not a 5xx, which may be retried", async () => {
    const failing = counting(async () => {
      throw new ApiError("UNPROCESSABLE_ENTITY", "nope");
    });
    await expect(mw()(request("key-5", {}), failing.run)).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY" });
    await expect(mw()(request("key-5", {}), failing.run)).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY", headers: { "idempotent-replayed": "true" } });
    expect(failing.calls).toBe(1);

    const crash = counting(async () => {
      throw new Error("database went away");
    });
    await expect(mw()(request("key-6", {}), crash.run)).rejects.toThrow("database went away");
    const ok = counting(async () => ({ body: { recovered: true } }));
    expect((await mw()(request("key-6", {}), ok.run)).body).toEqual({ recovered: true });
  });

  it("keys are scoped to (Application, Store): another tenant's identical key is independent", async () => {
    const other = await createTenant(app);
    const otherPrincipal = await partnerPrincipal(app, other);
    const op = counting(async () => ({ body: {} }));
    await mw()(request("shared-key", { x: 1 }), op.run);
    const r = request("shared-key", { x: 2 });
    r.input.principal = otherPrincipal;
    await mw()(r, op.run);
    expect(op.calls).toBe(2);
  });

  it("expired keys are treated as new; malformed keys are 400", async () => {
    const op = counting(async () => ({ body: {} }));
    await mw()(request("key-7", { a: 1 }), op.run);
    await app.services.db.idempotencyKey.updateMany({ where: { key: "key-7" }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await mw()(request("key-7", { a: 2 }), op.run);
    expect(op.calls).toBe(2);
    for (const bad of ["", "x".repeat(256), "has space", "naïve"]) {
      await expect(mw()(request(bad, {}), op.run)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    }
  });

  it("without the header the operation simply runs", async () => {
    const op = counting(async () => ({ body: {} }));
    await mw()(request(undefined, {}), op.run);
    await mw()(request(undefined, {}), op.run);
    expect(op.calls).toBe(2);
  });
});

describe("expiry", () => {
  it("the hourly cleanup job removes keys past their 24 h retention and keeps the rest", async () => {
    const { cleanupIdempotencyKeys } = await import("../../workers/tasks/cleanup-idempotency-keys.js");
    const op = counting(async () => ({ body: {} }));
    await idempotency(app.services.db)(request("old-key", {}), op.run);
    await idempotency(app.services.db)(request("fresh-key", {}), op.run);
    await app.services.db.idempotencyKey.updateMany({ where: { key: "old-key" }, data: { expiresAt: new Date(Date.now() - 1) } });
    await cleanupIdempotencyKeys(app.services)({}, {} as Parameters<ReturnType<typeof cleanupIdempotencyKeys>>[1]);
    const keys = (await app.services.db.idempotencyKey.findMany({ where: { key: { in: ["old-key", "fresh-key"] } } })).map((k) => k.key);
    expect(keys).toEqual(["fresh-key"]);
  });
});
