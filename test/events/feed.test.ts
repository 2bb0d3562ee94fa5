import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, graphql, type Tenant } from "../helpers/tenants.js";
import { createApplication, createGrant } from "../../src/modules/admin/operations.js";
import { createCatalog, type FixtureProduct } from "../helpers/fixtures.js";

/** GET /public/v1/events and /public/v1/events/{eventId}: the feed over REST, against the real server. */

interface Envelope {
  eventId: string;
  eventType: string;
  timestamp: string;
  tenantId: string;
  sequence: number;
  data: { orderId?: string } & Record<string, unknown>;
}
interface FeedPage {
  data: Envelope[];
  pagination: { hasMore: boolean; cursor: string; nextCursor: string };
}

let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];

async function newOrder(tenant: Tenant): Promise<string> {
  const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
    token: tenant.token,
    body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function page(token: string, query: string): Promise<FeedPage> {
  const res = await call<FeedPage>(app, "GET", `/public/v1/events?${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  // The concurrent test sends a few hundred requests within the minute.
  app = await startTestApp({ RATE_LIMIT_SANDBOX_STORE: "100000", RATE_LIMIT_SANDBOX_APP: "100000" });
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
});

afterAll(async () => {
  await app?.close();
});

describe("GET /public/v1/events", () => {
  it("pages the store's events oldest first with the stored eventIds, and a cursor that is never null", async () => {
    const orders = [];
    for (let i = 0; i < 23; i++) orders.push(await newOrder(t));
    const stored = await app.services.db.event.findMany({ where: { storeId: t.storeId }, orderBy: { sequence: "asc" } });

    const first = await page(t.token, "");
    expect(first.data).toHaveLength(20);
    expect(first.pagination.hasMore).toBe(true);
    expect(first.data[0]).toEqual({
      eventId: stored[0].id,
      eventType: "order.created",
      timestamp: stored[0].createdAt.toISOString(),
      tenantId: t.storeCode,
      sequence: Number(stored[0].sequence),
      data: stored[0].data,
    });
    expect(first.pagination.nextCursor).toBe(String(first.data[19].sequence));

    const rest = await page(t.token, `after=${first.pagination.nextCursor}&limit=100`);
    expect(rest.pagination).toEqual({ hasMore: false, cursor: String(stored[22].sequence), nextCursor: String(stored[22].sequence) });
    expect([...first.data, ...rest.data].map((e) => e.eventId)).toEqual(stored.map((e) => e.id));
    expect([...first.data, ...rest.data].map((e) => e.data.orderId)).toEqual(orders);

    // Caught up: an empty page hands the same cursor back.
    const empty = await page(t.token, `after=${rest.pagination.nextCursor}`);
    expect(empty).toEqual({ data: [], pagination: { hasMore: false, cursor: rest.pagination.nextCursor, nextCursor: rest.pagination.nextCursor } });

    const one = await call<Envelope>(app, "GET", `/public/v1/events/${stored[3].id}`, { token: t.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first.data[3]);
  });

  it("filters by types and rejects bad parameters", async () => {
    const id = await newOrder(t);
    await call(app, "PATCH", `/public/v1/orders/${id}/status`, { token: t.token, body: { status: "CONFIRMED" } });
    const confirmed = await page(t.token, "types=order.confirmed,store.updated&limit=100");
    expect(confirmed.data.map((e) => e.eventType)).toEqual(["order.confirmed"]);
    expect(confirmed.data[0].data.orderId).toBe(id);

    for (const query of ["types=order.nope", "limit=0", "limit=101", "after=-1", "after=abc"]) {
      expect((await call(app, "GET", `/public/v1/events?${query}`, { token: t.token })).status, query).toBe(400);
    }
    expect((await call(app, "GET", "/public/v1/events/not-a-uuid", { token: t.token })).status).toBe(400);
  });

  it("leaves out the types a token's scopes do not cover, and another store's events are 404", async () => {
    // An order with a new customer: order.created and customer.created, the latter needing customers:read.
    const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
      token: t.token,
      body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }], customer: { name: "Feed Reader", phone: "(11) 91234-0001" } },
    });
    expect(res.status).toBe(201);
    const customerEvent = await app.services.db.event.findFirstOrThrow({ where: { storeId: t.storeId, type: "customer.created" } });

    // A second Application on the same store, with orders:read only.
    const { application, clientSecret } = await createApplication(app.services.db, {
      name: "Orders only",
      environment: "SANDBOX",
      scopes: ["orders:read"],
      apiVersion: FIRST_API_VERSION,
    });
    await createGrant(app.services.db, { clientId: application.clientId, storeId: t.storeId });
    const ordersOnly = await getToken(app, application.clientId, clientSecret);
    const all = await page(t.token, "limit=100");
    const seen = await page(ordersOnly, "limit=100");
    expect(all.data.some((e) => e.eventType === "customer.created")).toBe(true);
    expect(seen.data.map((e) => e.eventId)).toEqual(all.data.filter((e) => e.eventType.startsWith("order.")).map((e) => e.eventId));
    expect((await call(app, "GET", `/public/v1/events/${customerEvent.id}`, { token: ordersOnly })).status).toBe(404);
    expect((await call(app, "GET", `/public/v1/events/${customerEvent.id}`, { token: t.token })).status).toBe(200);

    const other = await createTenant(app);
    expect((await call(app, "GET", `/public/v1/events/${customerEvent.id}`, { token: other.token })).status).toBe(404);
    expect((await page(other.token, "")).data).toEqual([]);
  });

  it("refuses a cursor above the store's latest sequence (another store's) with 400 on `after`; the latest itself tails", async () => {
    const a = await createTenant(app);
    const b = await createTenant(app);
    await createCatalog(app.services.db, a.storeId);
    await createCatalog(app.services.db, b.storeId);
    const productOf = async (tenant: Tenant) => (await app.services.db.product.findFirstOrThrow({ where: { storeId: tenant.storeId } })).id;
    const orderIn = async (tenant: Tenant, productId: string) =>
      expect(
        (await call(app, "POST", "/public/v1/orders", { token: tenant.token, body: { type: "PICKUP", items: [{ productId, quantity: 1 }] } })).status,
      ).toBe(201);
    // A store with no events yet takes 0 only.
    expect((await call(app, "GET", "/public/v1/events?after=0", { token: a.token })).status).toBe(200);
    const empty = await call<{ errors: { field: string; code: string }[] }>(app, "GET", "/public/v1/events?after=1", { token: a.token });
    expect(empty.status, JSON.stringify(empty.body)).toBe(400);
    expect(empty.body).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "after", code: "INVALID_CURSOR" }] });

    const [pa, pb] = [await productOf(a), await productOf(b)];
    await orderIn(a, pa);
    for (let i = 0; i < 4; i++) await orderIn(b, pb);
    const latestOfB = (await page(b.token, "limit=100")).pagination.nextCursor;
    const above = await call<{ errors: { field: string }[] }>(app, "GET", `/public/v1/events?after=${latestOfB}`, { token: a.token });
    expect(above.status, JSON.stringify(above.body)).toBe(400);
    expect(above.body).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "after", code: "INVALID_CURSOR" }] });
    const viaGraphql = await graphql(app, "query($after: String) { events(after: $after) { data { eventId } } }", { after: latestOfB }, a.token);
    expect(viaGraphql.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "after", code: "INVALID_CURSOR" }] });

    // The latest sequence is a valid cursor: an empty page that hands it back, then exactly the next event.
    const latestOfA = (await page(a.token, "limit=100")).pagination.nextCursor;
    expect(await page(a.token, `after=${latestOfA}`)).toMatchObject({ data: [], pagination: { nextCursor: latestOfA } });
    await orderIn(a, pa);
    const next = await page(a.token, `after=${latestOfA}`);
    expect(next.data.map((e) => e.sequence)).toEqual([Number(latestOfA) + 1]);
  });

  it("answers PRODUCTION tokens too", async () => {
    const prod = await createTenant(app, { environment: "PRODUCTION" });
    const res = await call<FeedPage>(app, "GET", "/public/v1/events", { token: prod.token });
    expect(res.status).toBe(200);
    expect(res.body.pagination.nextCursor).toBe("0");
  });

  it("a reader paging continuously while writers commit concurrently ends with every event exactly once, in sequence order", async () => {
    const store = await createTenant(app);
    await createCatalog(app.services.db, store.storeId);
    const product = await app.services.db.product.findFirstOrThrow({ where: { storeId: store.storeId } });
    let writing = true;
    const writers = Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 12; i++) {
          const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
            token: store.token,
            body: { type: "PICKUP", items: [{ productId: product.id, quantity: 1 }] },
          });
          expect(res.status).toBe(201);
          const moved = await call(app, "PATCH", `/public/v1/orders/${res.body.id}/status`, { token: store.token, body: { status: "CONFIRMED" } });
          expect(moved.status).toBe(200);
        }
      }),
    ).finally(() => {
      writing = false;
    });

    const read: Envelope[] = [];
    let cursor = "0";
    let pages = 0;
    // Keep reading until the writers are done and one more page comes back empty.
    for (;;) {
      const done = !writing;
      // Whatever has committed is a cursor the feed takes, even while other writes are committing.
      const committed = await app.services.db.event.aggregate({ where: { storeId: store.storeId }, _max: { sequence: true } });
      await page(store.token, `after=${committed._max.sequence ?? 0n}&limit=1`);
      const p = await page(store.token, `after=${cursor}&limit=7`);
      pages++;
      read.push(...p.data);
      cursor = p.pagination.nextCursor;
      if (done && p.data.length === 0) break;
    }
    await writers;

    const stored = await app.services.db.event.findMany({ where: { storeId: store.storeId }, orderBy: { sequence: "asc" }, select: { id: true } });
    expect(stored).toHaveLength(6 * 12 * 2);
    expect(read.map((e) => e.eventId)).toEqual(stored.map((e) => e.id));
    const sequences = read.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    // The reader interleaved with the writers rather than reading everything at the end.
    expect(pages).toBeGreaterThan(stored.length / 7);
  });
});
