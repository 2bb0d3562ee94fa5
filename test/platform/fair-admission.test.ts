import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import { createCatalog } from "../helpers/fixtures.js";
import { createApplication, createGrant, createStore } from "../../src/modules/admin/operations.js";
import { expectProblem, startOfFreshMinute } from "./support.js";

/**
 * Admission through the real service: a partner's parallel client inside its per-minute limits is never refused for
 * concurrency on a process with room, its per-minute limits stay exact, and a flow past its own share of the queue is
 * refused with a code of its own while another Application is served.
 */

const rate = (res: ApiResponse<unknown>) => ({
  limit: res.headers.get("x-ratelimit-limit"),
  remaining: res.headers.get("x-ratelimit-remaining"),
});

describe("a partner's parallel client, on a process with the default admission limits", () => {
  let app: TestApp;

  beforeAll(async () => {
    // The defaults of a process: as many slots as the pool's 10 connections, twice as many places in the queue.
    app = await startTestApp({ DB_POOL_SIZE: "10", HTTP_MAX_QUEUED: "20", HTTP_QUEUE_TIMEOUT_MS: "1000" });
  }, 60_000);
  afterAll(() => app?.close());

  it("5 stores × bursts of 20 concurrent requests up to 100 each are all served; then the 101st of a store and the 501st of the Application are 429 RATE_LIMIT_EXCEEDED", async () => {
    const db = app.services.db;
    const { application, clientSecret } = await createApplication(db, { name: "parallel sync", environment: "SANDBOX", scopes: ["merchant:read"] });
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) {
      const store = await createStore(db, { name: `Parallel ${i}`, environment: "SANDBOX" });
      await createGrant(db, { clientId: application.clientId, storeId: store.id });
      tokens.push(await getToken(app, application.clientId, clientSecret, { tenant_id: store.code }));
    }
    const [sixth] = tokens.splice(5, 1);
    // All 502 requests in one minute of the limiter's clock, so the count is exact.
    await startOfFreshMinute(25);
    const statuses = new Map<number, number>();
    const remaining: number[] = [];
    for (let burst = 0; burst < 25; burst++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(app, "GET", "/public/v1/store", { token: tokens[i % 5] })));
      for (const a of answers) {
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        remaining.push(Number(a.headers.get("x-ratelimit-remaining")));
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 500 });
    // Each store's 100 took every slot of its limit: the last answers left none.
    expect(Math.min(...remaining)).toBe(0);

    const storeOver = await call(app, "GET", "/public/v1/store", { token: tokens[0] });
    expect(expectProblem(storeOver, 429, "RATE_LIMIT_EXCEEDED").detail).toMatch(/100 requests per minute for this store/);
    expect(rate(storeOver)).toEqual({ limit: "100", remaining: "0" });
    expect(Number(storeOver.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const appOver = await call(app, "GET", "/public/v1/store", { token: sixth });
    expect(expectProblem(appOver, 429, "RATE_LIMIT_EXCEEDED").detail).toMatch(/500 requests per minute for this Application/);
    expect(rate(appOver)).toEqual({ limit: "500", remaining: "0" });
  }, 120_000);

  it("20 concurrent sandbox events are all fired", async () => {
    const tenant = await createTenant(app);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(app, "POST", "/public/v1/sandbox/events", { token: tenant.token, body: { type: "customer.created" } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
  });
});

describe("an Application past its share of the queue", () => {
  let app: TestApp;
  let abuser: Tenant;
  let victim: Tenant;
  let orderId: string;
  let lock: pg.Client;

  beforeAll(async () => {
    app = await startTestApp({ HTTP_MAX_IN_FLIGHT: "2", HTTP_MAX_QUEUED: "10", HTTP_QUEUE_TIMEOUT_MS: "20000", HTTP_MAX_QUEUED_PER_APPLICATION: "2" });
    abuser = await createTenant(app);
    victim = await createTenant(app);
    const { products } = await createCatalog(app.services.db, abuser.storeId);
    const created = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
      token: abuser.token,
      body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] },
    });
    expect(created.status).toBe(201);
    orderId = created.body.id;
    lock = new pg.Client({ connectionString: app.databaseUrl });
    await lock.connect();
  }, 60_000);

  afterAll(async () => {
    await lock?.end();
    await app?.close();
  });

  it("is refused with 429 CONCURRENCY_LIMIT_EXCEEDED, counted in /metrics and against no budget, while another Application's requests are served", async () => {
    const before = await call(app, "GET", "/public/v1/store", { token: abuser.token });
    expect(before.status).toBe(200);
    const remainingBefore = Number(before.headers.get("x-ratelimit-remaining"));

    // The order's row is locked: the abuser's two status changes hold both slots until it is released.
    await lock.query("BEGIN");
    await lock.query(`SELECT 1 FROM "Order" WHERE id = $1 FOR UPDATE`, [orderId]);
    const stuck = [0, 1].map(() => call(app, "PATCH", `/public/v1/orders/${orderId}/status`, { token: abuser.token, body: { status: "CONFIRMED" } }));
    await expect.poll(async () => (await lock.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`)).rows[0].n, { timeout: 10_000 }).toBe(2);

    // Two of the abuser's reads wait (its share), the next four are refused at once; the victim's two wait too.
    const queued = [0, 1].map(() => call(app, "GET", "/public/v1/store", { token: abuser.token }));
    await expect.poll(() => metric(app, "http_requests_queued")).toBe(2);
    const refused = await Promise.all([0, 1, 2, 3].map(() => call(app, "GET", "/public/v1/store", { token: abuser.token })));
    const victims = [0, 1].map(() => call(app, "GET", "/public/v1/orders?limit=5", { token: victim.token }));
    await expect.poll(() => metric(app, "http_requests_queued")).toBe(4);
    for (const r of refused) {
      const body = expectProblem(r, 429, "CONCURRENCY_LIMIT_EXCEEDED");
      expect(body.detail).toMatch(/Nothing was counted against your per-minute limits/);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("x-ratelimit-remaining")).toBeNull();
    }
    expect(await metric(app, 'http_requests_concurrency_limited_total{flow="application"}')).toBe(4);

    await lock.query("ROLLBACK");
    expect((await Promise.all(victims)).map((r) => r.status)).toEqual([200, 200]);
    expect((await Promise.all(queued)).map((r) => r.status)).toEqual([200, 200]);
    // Of the two that ran, one moved the order and the other found it CONFIRMED already (422: not a move from there).
    expect((await Promise.all(stuck)).map((r) => r.status).sort()).toEqual([200, 422]);

    // The budget counted the five requests that ran and this one, not the four refused.
    const after = await call(app, "GET", "/public/v1/store", { token: abuser.token });
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(remainingBefore - 5);
  }, 60_000);
});

/** One sample of the process's /metrics, by its name and labels as printed. */
async function metric(app: TestApp, series: string): Promise<number> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(" ")[1]) : 0;
}
