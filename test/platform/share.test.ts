import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog } from "../helpers/fixtures.js";

/**
 * One Application's burst never fills the admission queue the others wait in: it holds at most
 * HTTP_MAX_PER_APPLICATION slots and places in the queue, and its next request is 429 at once.
 */

let app: TestApp;
let abuser: Tenant;
let victim: Tenant;
let orderId: string;
let lock: pg.Client;

beforeAll(async () => {
  app = await startTestApp({ HTTP_MAX_IN_FLIGHT: "4", HTTP_MAX_QUEUED: "4", HTTP_QUEUE_TIMEOUT_MS: "3000", HTTP_MAX_PER_APPLICATION: "2" });
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

it("an Application whose requests are stuck holds its share only; the next is 429 and other Applications are served", async () => {
  // The order's row is locked: every status change of it waits, holding its admission slot.
  await lock.query("BEGIN");
  await lock.query(`SELECT 1 FROM "Order" WHERE id = $1 FOR UPDATE`, [orderId]);
  const stuck = Array.from({ length: 10 }, () =>
    call(app, "PATCH", `/public/v1/orders/${orderId}/status`, { token: abuser.token, body: { status: "CONFIRMED" } }),
  );
  // Wait until two of them run (blocked on the lock), then read as the other Application.
  await expect.poll(async () => (await lock.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`)).rows[0].n, { timeout: 10_000 }).toBe(2);
  // Two at a time (its own share), eight in all.
  const reads: number[] = [];
  for (let i = 0; i < 4; i++) {
    const pair = await Promise.all([0, 1].map(() => call(app, "GET", "/public/v1/orders?limit=5", { token: victim.token })));
    reads.push(...pair.map((r) => r.status));
  }
  expect(reads).toEqual(Array(8).fill(200));
  await lock.query("ROLLBACK");
  const answers = await Promise.all(stuck);
  const refused = answers.filter((r) => r.status === 429);
  expect(refused).toHaveLength(8);
  for (const r of refused) {
    expect(r.headers.get("retry-after")).toBe("1");
    expect((r.body as { code: string }).code).toBe("RATE_LIMIT_EXCEEDED");
  }
  // Of the two that ran, one moved the order and the other found it CONFIRMED already (422: not a move from there).
  expect(
    answers
      .filter((r) => r.status !== 429)
      .map((r) => r.status)
      .sort(),
  ).toEqual([200, 422]);
});
