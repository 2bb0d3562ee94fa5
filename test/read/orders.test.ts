import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createOrder, createCustomer } from "../helpers/fixtures.js";
import { ISO_MS, expectMoney, expectProblem, expectResponseSchema, walk, type PageBody } from "./support.js";
import type { OrderStatus } from "../../src/platform/db/prisma.js";

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
});
afterAll(() => app.close());

const LIST_FIELDS = [
  "id",
  "displayId",
  "orderNumber",
  "status",
  "type",
  "subtotal",
  "deliveryFee",
  "discount",
  "total",
  "totalAmount",
  "customer",
  "deliveryAddress",
  "items",
  "payments",
  "version",
  "createdAt",
  "updatedAt",
].sort();
const DETAIL_FIELDS = [...LIST_FIELDS, "couponCode", "statusHistory", "scheduledFor", "notes", "cancellationReason"].sort();
const STATUSES: OrderStatus[] = ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"];

type OrderBody = Record<string, unknown> & { id: string; status: string; createdAt: string; updatedAt: string };

describe("order fields", () => {
  it("detail: both field families, money with two decimals, ISO times with milliseconds, status history", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    const customer = await createCustomer(app.services.db, t.storeId, { name: "Marina Prado", phone: "+55 (11) 98765-4321" });
    const createdAt = new Date("2025-03-01T18:30:00.000Z");
    const order = await createOrder(app.services.db, t.storeId, {
      status: "DISPATCHED",
      customerId: customer.id,
      items: [
        { name: "Hambúrguer artesanal", quantity: 3, unitPriceCents: 1999, notes: "Ao ponto", additionals: [{ name: "Bacon", quantity: 2, priceCents: 250 }] },
        { name: "Batata frita", quantity: 1, unitPriceCents: 1001 },
      ],
      payments: [{ method: "CASH", status: "PENDING", changeForCents: 10000 }],
      deliveryFeeCents: 799,
      discountCents: 1000,
      couponCode: "DESCONTO10",
      notes: "Interfone quebrado, ligar ao chegar",
      scheduledFor: new Date("2025-03-01T20:00:00.000Z"),
      createdAt,
      updatedAt: new Date("2025-03-01T19:10:00.000Z"),
    });

    const res = await call<Record<string, unknown>>(app, "GET", `/public/v1/orders/${order.id}`, { token: t.token });
    expect(res.status).toBe(200);
    expectResponseSchema("getOrderById", res.body);
    const body = res.body;
    expect(Object.keys(body).sort()).toEqual(DETAIL_FIELDS);
    // 3 × (19.99 + 2 × 2.50) = 74.97; + 10.01 = 84.98; + 7.99 − 10.00 = 82.97
    expect(body).toMatchObject({
      id: order.id,
      displayId: String(order.orderNumber),
      orderNumber: order.orderNumber,
      status: "DISPATCHED",
      type: "DELIVERY",
      subtotal: 84.98,
      deliveryFee: 7.99,
      discount: 10,
      total: 82.97,
      totalAmount: 82.97,
      couponCode: "DESCONTO10",
      customer: { id: customer.id, name: "Marina Prado", phone: "+55 (11) 98765-4321" },
      notes: "Interfone quebrado, ligar ao chegar",
      scheduledFor: "2025-03-01T20:00:00.000Z",
      cancellationReason: null,
      createdAt: "2025-03-01T18:30:00.000Z",
      updatedAt: "2025-03-01T19:10:00.000Z",
      payments: [{ method: "CASH", status: "PENDING", value: 82.97, changeFor: 100 }],
    });
    expect(Object.keys(body.customer as object).sort()).toEqual(["id", "name", "phone"]);
    expect(order.orderNumber).toBeGreaterThan(1000);
    expect(body.deliveryAddress).toEqual({
      ...(order.deliveryAddress as object),
      complement: (order.deliveryAddress as { complement: string | null }).complement,
    });
    expect(body.items).toEqual([
      {
        id: order.items[0].id,
        productId: null,
        name: "Hambúrguer artesanal",
        quantity: 3,
        unitPrice: 19.99,
        total: 74.97,
        notes: "Ao ponto",
        additionals: [{ name: "Bacon", quantity: 2, price: 2.5 }],
      },
      { id: order.items[1].id, productId: null, name: "Batata frita", quantity: 1, unitPrice: 10.01, total: 10.01, notes: null, additionals: [] },
    ]);
    const history = body.statusHistory as { status: string; at: string; reason: string | null }[];
    expect(history.map((h) => h.status)).toEqual(["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED"]);
    for (const h of history) expect(h.at).toMatch(ISO_MS);
    for (const k of ["subtotal", "deliveryFee", "discount", "total", "totalAmount"]) expectMoney(body[k]);
  });

  it("list items carry the same Order fields as the detail, minus the detail-only ones", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    const order = await createOrder(app.services.db, t.storeId, { type: "PICKUP", status: "CANCELLED", customerId: null });
    const list = await call<PageBody<OrderBody>>(app, "GET", "/public/v1/orders", { token: t.token });
    expect(list.status).toBe(200);
    expectResponseSchema("listOrders", list.body);
    expect(list.body.data).toHaveLength(1);
    const item = list.body.data[0];
    expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
    expect(item).toMatchObject({ id: order.id, type: "PICKUP", status: "CANCELLED", customer: null, deliveryAddress: null, deliveryFee: 0 });
    const detail = await call<Record<string, unknown>>(app, "GET", `/public/v1/orders/${order.id}`, { token: t.token });
    for (const k of LIST_FIELDS) expect(detail.body[k]).toEqual(item[k]);
    expect(detail.body.cancellationReason).toBe("Cliente desistiu do pedido");
    expect(detail.body.statusHistory).toEqual([
      { status: "PENDING", at: expect.stringMatching(ISO_MS), reason: null },
      { status: "CANCELLED", at: expect.stringMatching(ISO_MS), reason: "Cliente desistiu do pedido" },
    ]);
    expect(list.body.pagination).toEqual({ hasMore: false, cursor: null, nextCursor: null });
  });
});

describe("order list order and pagination", () => {
  it("is newest first (createdAt, then id) and walks with no gaps or duplicates while orders arrive", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    const base = Date.parse("2025-04-01T12:00:00.000Z");
    const originals = [];
    // Groups of three share a timestamp, so the id tie-break is exercised across page boundaries.
    for (let i = 0; i < 25; i++) {
      originals.push(await createOrder(app.services.db, t.storeId, { customerId: null, createdAt: new Date(base - Math.floor(i / 3) * 60_000) }));
    }
    const expected = [...originals].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((o) => o.id);
    const late: string[] = [];
    const items = await walk<OrderBody>(app, t.token, "/public/v1/orders?limit=7", async (page) => {
      // A new order (newest: before the cursor, not part of this walk) and, once, an old one still ahead of it.
      await createOrder(app.services.db, t.storeId, { customerId: null });
      if (page === 0) late.push((await createOrder(app.services.db, t.storeId, { customerId: null, createdAt: new Date(base - 3_600_000) })).id);
    });
    const ids = items.map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...expected, ...late]);
  });

  it("limit defaults to 20 and honours 1 and 100", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    for (let i = 0; i < 21; i++)
      await createOrder(app.services.db, t.storeId, { customerId: null, items: [{ name: "Café", quantity: 1, unitPriceCents: 500 }] });
    const def = await call<PageBody>(app, "GET", "/public/v1/orders", { token: t.token });
    expect(def.body.data).toHaveLength(20);
    expect(def.body.pagination.hasMore).toBe(true);
    expect((await call<PageBody>(app, "GET", "/public/v1/orders?limit=1", { token: t.token })).body.data).toHaveLength(1);
    const all = await call<PageBody>(app, "GET", "/public/v1/orders?limit=100", { token: t.token });
    expect(all.body.data).toHaveLength(21);
    expect(all.body.pagination.hasMore).toBe(false);
  });
});

describe("order filters", () => {
  it("status accepts each of the seven statuses and returns only those orders", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    for (const [i, status] of STATUSES.entries()) {
      for (let n = 0; n <= i % 2; n++) await createOrder(app.services.db, t.storeId, { status, customerId: null });
    }
    for (const [i, status] of STATUSES.entries()) {
      const res = await call<PageBody<OrderBody>>(app, "GET", `/public/v1/orders?status=${status}`, { token: t.token });
      expect(res.status).toBe(200);
      expect(res.body.data.map((o) => o.status)).toEqual(Array(1 + (i % 2)).fill(status));
    }
  });

  it("updated_since keeps updatedAt >= it, oldest change first, and pages forward through changes", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    const db = app.services.db;
    const base = Date.parse("2025-05-01T00:00:00.000Z");
    const at = (minutes: number) => new Date(base + minutes * 60_000);
    const before = await createOrder(db, t.storeId, { customerId: null, createdAt: at(-30), updatedAt: at(-1) });
    const exact = await createOrder(db, t.storeId, { customerId: null, status: "CONFIRMED", createdAt: at(-20), updatedAt: at(0) });
    const changed = [];
    for (let i = 1; i <= 12; i++) changed.push(await createOrder(db, t.storeId, { customerId: null, createdAt: at(-100 - i), updatedAt: at(i) }));
    const since = encodeURIComponent(at(0).toISOString());

    const arrived: string[] = [];
    const items = await walk<OrderBody>(app, t.token, `/public/v1/orders?updated_since=${since}&limit=5`, async (page) => {
      // Changes that happen while paging land at the end of the walk: nothing is skipped.
      if (page === 0) {
        const now = Date.now();
        await db.order.update({ where: { id: exact.id }, data: { status: "PREPARING", updatedAt: new Date(now) } });
        arrived.push(exact.id, (await createOrder(db, t.storeId, { customerId: null, createdAt: new Date(now + 1000) })).id);
      }
    });
    const ids = items.map((o) => o.id);
    expect(ids).not.toContain(before.id);
    expect(ids.slice(0, 13)).toEqual([exact.id, ...changed.map((o) => o.id)]);
    expect(ids.slice(13)).toEqual(arrived);
    for (let i = 1; i < items.length; i++) expect(items[i].updatedAt >= items[i - 1].updatedAt).toBe(true);

    // Combined with status; an offset form of the same instant means the same thing.
    const pending = await call<PageBody<OrderBody>>(app, "GET", `/public/v1/orders?updated_since=2025-04-30T21:00:00-03:00&status=PENDING`, { token: t.token });
    expect(pending.status).toBe(200);
    expect(pending.body.data.map((o) => o.id)).toEqual([...changed.map((o) => o.id), arrived[1]]);
  });
});

describe("order validation", () => {
  const bad: [string, string][] = [
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=abc", "limit"],
    ["limit=2.5", "limit"],
    ["limit=", "limit"],
    ["status=SHIPPED", "status"],
    ["status=pending", "status"],
    ["updated_since=yesterday", "updated_since"],
    ["updated_since=2025-01-01", "updated_since"],
    ["updated_since=2025-01-01T10:00:00", "updated_since"],
    ["updated_since=2025-13-01T10:00:00Z", "updated_since"],
    ["updated_since=2016-12-31T23:59:60Z", "updated_since"],
    ["cursor=not-a-cursor", "cursor"],
    [`cursor=${randomUUID()}`, "cursor"],
  ];
  for (const [query, field] of bad) {
    it(`?${query} → 400 INVALID_REQUEST naming ${field}`, async () => {
      expectProblem(await call(app, "GET", `/public/v1/orders?${query}`, { token: tenant.token }), 400, "INVALID_REQUEST", field);
    });
  }

  it("a malformed id is 400, an unknown one 404 NOT_FOUND", async () => {
    expectProblem(await call(app, "GET", "/public/v1/orders/1042", { token: tenant.token }), 400, "INVALID_REQUEST", "id");
    expectProblem(await call(app, "GET", "/public/v1/orders/not-a-uuid", { token: tenant.token }), 400, "INVALID_REQUEST", "id");
    expectProblem(await call(app, "GET", `/public/v1/orders/${randomUUID()}`, { token: tenant.token }), 404, "NOT_FOUND");
  });

  it("GraphQL applies the same rules", async () => {
    const q = (args: string) => graphql(app, `{ orders(${args}) { data { id } } }`, {}, tenant.token);
    for (const args of ["limit: 0", "limit: 101", 'cursor: "zzz"']) expect((await q(args)).errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    const malformed = await graphql(app, `{ order(id: "1042") { id } }`, {}, tenant.token);
    expect(malformed.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    const unknown = await graphql(app, `query($id: ID!) { order(id: $id) { id } }`, { id: randomUUID() }, tenant.token);
    expect(unknown.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });

  it("needs orders:read: 403 INSUFFICIENT_SCOPE over REST and GraphQL", async () => {
    const t = await createTenant(app, { scopes: ["customers:read"] });
    const res = await call<{ detail: string }>(app, "GET", "/public/v1/orders", { token: t.token });
    expectProblem(res, 403, "INSUFFICIENT_SCOPE");
    expect(res.body.detail).toContain("orders:read");
    expect((await graphql(app, "{ orders { data { id } } }", {}, t.token)).errors?.[0].extensions?.code).toBe("INSUFFICIENT_SCOPE");
  });

  it("accepts X-Request-Id and echoes it", async () => {
    const requestId = randomUUID();
    const res = await call(app, "GET", "/public/v1/orders", { token: tenant.token, headers: { "x-request-id": requestId } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe(requestId);
    const missing = await call(app, "GET", `/public/v1/orders/${randomUUID()}`, { token: tenant.token, headers: { "x-request-id": requestId } });
    expect(missing.headers.get("x-request-id")).toBe(requestId);
    expect((missing.body as { requestId: string }).requestId).toBe(requestId);
  });
});

describe("GraphQL selections for dashboards", () => {
  it("follows order → customer → orders, and hides customer details without customers:read", async () => {
    const t = await createTenant(app, { scopes: ["orders:read", "customers:read"] });
    const customer = await createCustomer(app.services.db, t.storeId, { name: "Rafael Mendes" });
    const first = await createOrder(app.services.db, t.storeId, { customerId: customer.id, createdAt: new Date("2025-02-01T10:00:00.000Z") });
    const second = await createOrder(app.services.db, t.storeId, { customerId: customer.id, createdAt: new Date("2025-02-03T10:00:00.000Z") });
    const query = `query($id: ID!) { order(id: $id) { orderNumber customer { name email contactSummary { orderCount firstOrderAt lastOrderAt } orders { id total } } } }`;
    const res = await graphql<{ order: { customer: { email: string; contactSummary: unknown; orders: { id: string }[] } } }>(
      app,
      query,
      { id: first.id },
      t.token,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.order.customer.email).toBe(customer.email);
    expect(res.data?.order.customer.contactSummary).toEqual({
      orderCount: 2,
      firstOrderAt: "2025-02-01T10:00:00.000Z",
      lastOrderAt: "2025-02-03T10:00:00.000Z",
    });
    expect(res.data?.order.customer.orders.map((o) => o.id)).toEqual([second.id, first.id]);

    const ordersOnly = await createTenant(app, { scopes: ["orders:read"] });
    const theirs = await createOrder(app.services.db, ordersOnly.storeId);
    const hidden = await graphql(app, `query($id: ID!) { order(id: $id) { customer { id name phone email } } }`, { id: theirs.id }, ordersOnly.token);
    expect(hidden.errors?.[0].extensions?.code).toBe("INSUFFICIENT_SCOPE");
    const shown = await graphql(app, `query($id: ID!) { order(id: $id) { customer { id name phone } } }`, { id: theirs.id }, ordersOnly.token);
    expect(shown.errors).toBeUndefined();
  });
});
