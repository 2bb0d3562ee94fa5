import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage } from "node:http";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, partnerPrincipal, type Tenant } from "../helpers/tenants.js";
import { canonicalJson, idempotency } from "../../src/rest/idempotency.js";
import { ApiError } from "../../src/platform/errors.js";
import type { Route, RouteInput, RouteResult } from "../../src/platform/route.js";
import type { PartnerPrincipal } from "../../src/platform/auth/principal.js";
import type { Tx } from "../../src/platform/db/prisma.js";
import { schema } from "../../src/graphql/schema.js";
import { operationCallsOut } from "../../src/platform/schema/commands.js";
import { routes } from "../../src/rest/routes.js";

/**
 * The middleware against real PostgreSQL, around a counting operation: what matters is how often the
 * protected operation runs. End-to-end replays over HTTP are covered with the write routes.
 */

let app: TestApp;
let tenant: Tenant;
let principal: PartnerPrincipal;
const route = { method: "POST", status: 201 } as Route;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
  principal = await partnerPrincipal(app, tenant);
});
afterAll(() => app.close());

/** Operations that call out over the network keep their record out of their transaction; both paths behave alike. */
let callsOut = false;

function request(key: string | undefined, body: unknown, url = "/public/v1/customers") {
  const input: RouteInput = { path: {}, query: {}, body, principal };
  const req = { url, headers: key === undefined ? {} : { "idempotency-key": key } } as unknown as IncomingMessage;
  return { route, input, rawBody: JSON.stringify(body), req, callsOut };
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

describe.each([
  ["in the operation's transaction", false],
  ["for an operation that calls out", true],
])("Idempotency-Key, recorded %s", (_name, out) => {
  const mw = () => idempotency(app.services.db);
  const key = (k: string) => `${k}${out ? "-out" : ""}`;
  beforeAll(() => {
    callsOut = out;
  });

  it("replays the recorded response without running again, marked Idempotent-Replayed", async () => {
    const op = counting(async () => ({ status: 201, body: { id: "c1", n: Math.random() } }));
    const first = await mw()(request(key("key-1"), { name: "Ana" }), op.run);
    const second = await mw()(request(key("key-1"), { name: "Ana" }), op.run);
    expect(op.calls).toBe(1);
    expect(second.body).toEqual(first.body);
    expect(second.headers?.["idempotent-replayed"]).toBe("true");
    expect(first.headers?.["idempotent-replayed"]).toBeUndefined();
  });

  it("the same key with a different payload or path is 409 IDEMPOTENCY_CONFLICT", async () => {
    const op = counting(async () => ({ body: {} }));
    await mw()(request(key("key-2"), { name: "Ana" }), op.run);
    await expect(mw()(request(key("key-2"), { name: "Bia" }), op.run)).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT", status: 409 });
    await expect(mw()(request(key("key-2"), { name: "Ana" }, "/public/v1/orders"), op.run)).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
    expect(op.calls).toBe(1);
  });

  it("key order in the body does not change the fingerprint", async () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
    const op = counting(async () => ({ body: { ok: true } }));
    await mw()(request(key("key-3"), { a: 1, b: 2 }), op.run);
    await mw()(request(key("key-3"), { b: 2, a: 1 }), op.run);
    expect(op.calls).toBe(1);
  });

  it("ten concurrent duplicates have one effect and the same answer", async () => {
    const op = counting(async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { status: 201, body: { id: "only-once" } };
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => mw()(request(key("key-4"), { name: "Caio" }), op.run)));
    expect(op.calls).toBe(1);
    for (const r of results) expect(r.body).toEqual({ id: "only-once" });
    expect(results.filter((r) => r.headers?.["idempotent-replayed"] === "true")).toHaveLength(9);
  });

  it("records a business error (422) and replays it, but not a 5xx, which may be retried", async () => {
    const failing = counting(async () => {
      throw new ApiError("UNPROCESSABLE_ENTITY", "nope");
    });
    await expect(mw()(request(key("key-5"), {}), failing.run)).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY" });
    await expect(mw()(request(key("key-5"), {}), failing.run)).rejects.toMatchObject({
      code: "UNPROCESSABLE_ENTITY",
      headers: { "idempotent-replayed": "true" },
    });
    expect(failing.calls).toBe(1);

    const crash = counting(async () => {
      throw new Error("database went away");
    });
    await expect(mw()(request(key("key-6"), {}), crash.run)).rejects.toThrow("database went away");
    const ok = counting(async () => ({ body: { recovered: true } }));
    expect((await mw()(request(key("key-6"), {}), ok.run)).body).toEqual({ recovered: true });
  });

  it("keys are scoped to (Application, Store): another tenant's identical key is independent", async () => {
    const other = await createTenant(app);
    const otherPrincipal = await partnerPrincipal(app, other);
    const op = counting(async () => ({ body: {} }));
    await mw()(request(key("shared-key"), { x: 1 }), op.run);
    const r = request(key("shared-key"), { x: 2 });
    r.input.principal = otherPrincipal;
    await mw()(r, op.run);
    expect(op.calls).toBe(2);
  });

  it("expired keys are treated as new; malformed keys are 400", async () => {
    const op = counting(async () => ({ body: {} }));
    await mw()(request(key("key-7"), { a: 1 }), op.run);
    await app.services.db.idempotencyKey.updateMany({ where: { key: key("key-7") }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await mw()(request(key("key-7"), { a: 2 }), op.run);
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

describe("the record commits in the write's transaction", () => {
  const mw = () => idempotency(app.services.db);
  beforeAll(() => {
    callsOut = false;
  });

  it("for every write but the webhook test, which waits on its receiver and so records apart", () => {
    const apart = routes.filter((r) => operationCallsOut(schema, r.document)).map((r) => r.operationId);
    expect(apart).toEqual(["testWebhookEndpoint"]);
  });

  /** The operation's own writes, on the transaction it is handed. */
  const insertCustomer = (tx: Tx | undefined, name: string) => {
    if (!tx) throw new Error("the operation was not handed a transaction");
    return tx.customer.create({ data: { storeId: tenant.storeId, name }, select: { id: true } });
  };

  it("over HTTP: the customer, its event and the record share one transaction, and the record holds the row", async () => {
    const key = "together-1";
    const res = await call<{ id: string; name: string; email: string | null }>(app, "POST", "/public/v1/customers", {
      token: tenant.token,
      body: { name: "Dora Together", email: "dora@example.com" },
      headers: { "idempotency-key": key },
    });
    expect(res.status).toBe(201);
    const { rows } = await app.services.pool.query<{ record: string; customer: string; event: string; state: string; status: number; body: string }>(
      `select k.xmin::text as record, c.xmin::text as customer, e.xmin::text as event, k.state, k."responseStatus" as status, k."responseBody" as body
       from "IdempotencyKey" k, "Customer" c, "Event" e
       where k.key = $1 and k."storeId" = $2 and c.id::text = $3 and e.type = 'customer.created' and e.data->>'customerId' = $3`,
      [key, tenant.storeId, res.body.id],
    );
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.record).toBe(row.customer);
    expect(row.event).toBe(row.customer);
    expect(row).toMatchObject({ state: "COMPLETED", status: 201 });
    const stored = await app.services.db.customer.findUniqueOrThrow({ where: { id: res.body.id } });
    const recorded = (JSON.parse(row.body) as { result: { body: Record<string, unknown> } }).result.body;
    expect(recorded).toEqual(res.body);
    expect(recorded).toMatchObject({ id: stored.id, name: stored.name, email: stored.email, createdAt: stored.createdAt.toISOString() });
  });

  it("the operation's statements wait on locks as they always did: the claim's bounded wait does not leak into them", async () => {
    const { rows } = await app.services.pool.query<{ lock_timeout: string }>("show lock_timeout");
    const seen: string[] = [];
    await mw()(request("together-2", {}), async (tx?: Tx) => {
      if (!tx) throw new Error("the operation was not handed a transaction");
      const [setting] = await tx.$queryRaw<{ lock_timeout: string }[]>`select current_setting('lock_timeout') as lock_timeout`;
      seen.push(setting.lock_timeout);
      return { body: {} };
    });
    expect(seen).toEqual([rows[0].lock_timeout]);
  });

  it("a business error rolls the operation's writes back and is still recorded and replayed", async () => {
    const name = "Rolled Back";
    let calls = 0;
    const op = async (tx?: Tx) => {
      calls++;
      await insertCustomer(tx, name);
      throw new ApiError("UNPROCESSABLE_ENTITY", "refused after writing");
    };
    await expect(mw()(request("together-3", { n: 1 }), op)).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY" });
    await expect(mw()(request("together-3", { n: 1 }), op)).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY", headers: { "idempotent-replayed": "true" } });
    expect(calls).toBe(1);
    expect(await app.services.db.customer.count({ where: { storeId: tenant.storeId, name } })).toBe(0);
  });

  it("a 5xx rolls back the writes and the claim, so the retry runs once", async () => {
    const name = "Runs Once After A Failure";
    await expect(
      mw()(request("together-4", { n: 1 }), async (tx?: Tx) => {
        await insertCustomer(tx, name);
        throw new Error("lost the connection");
      }),
    ).rejects.toThrow("lost the connection");
    const retry = await mw()(request("together-4", { n: 1 }), async (tx?: Tx) => ({ status: 201, body: await insertCustomer(tx, name) }));
    expect(await app.services.db.customer.findMany({ where: { storeId: tenant.storeId, name }, select: { id: true } })).toEqual([retry.body]);
  });

  it("no one sees the record before the write commits; a duplicate waits for it only so long (409 CONFLICT, Retry-After), then replays", async () => {
    let release = () => {};
    const running = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slow = async () => {
      calls++;
      await running;
      return { status: 201, body: { id: "slow" } };
    };
    const first = mw()(request("together-5", {}), slow);
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1);
    expect((await app.services.pool.query(`select state from "IdempotencyKey" where key = 'together-5'`)).rows).toEqual([]);
    const impatient = idempotency(app.services.db, { waitMs: 300 });
    const started = Date.now();
    const refused = await impatient(request("together-5", {}), slow).then(
      () => null,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: "CONFLICT", status: 409, headers: { "retry-after": "1" } });
    release();
    expect((await first).body).toEqual({ id: "slow" });
    const replay = await impatient(request("together-5", {}), slow);
    expect(replay).toMatchObject({ body: { id: "slow" }, headers: { "idempotent-replayed": "true" } });
    expect(calls).toBe(1);
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
