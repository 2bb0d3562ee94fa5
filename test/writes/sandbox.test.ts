import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, graphql, type Tenant } from "../helpers/tenants.js";
import { createApplication, createGrant } from "../../src/modules/admin/operations.js";
import { tableCounter } from "../platform/support.js";

let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  // Partners test without write scopes.
  t = await createTenant(app, { scopes: [] });
});
afterAll(() => app.close());

type Order = {
  id: string;
  status: string;
  type: string;
  deliveryFee: number;
  discount: number;
  total: number;
  subtotal: number;
  couponCode: string | null;
  scheduledFor: string | null;
  notes: string | null;
  items: { productId: string; name: string; quantity: number; unitPrice: number; total: number }[];
  deliveryAddress: Record<string, string> | null;
  payments: { method: string; status: string; value: number; changeFor: number | null }[];
  customer: { id: string; name: string } | null;
  cancellationReason: string | null;
  statusHistory: { status: string; reason: string | null }[];
};

const generate = (scenario: string, token = t.token) => call<Order>(app, "POST", "/public/v1/sandbox/orders", { token, body: { scenario } });
const eventsFor = async (orderId: string) =>
  (await app.services.db.event.findMany({ where: { storeId: t.storeId }, orderBy: { sequence: "asc" } }))
    .filter((e) => (e.data as { orderId?: string }).orderId === orderId)
    .map((e) => e.type);

describe("POST /public/v1/sandbox/seed", () => {
  it("fills the store once; calling it again duplicates nothing", async () => {
    const first = await call<{ storeId: string; categories: number; products: number; customers: number }>(app, "POST", "/public/v1/sandbox/seed", {
      token: t.token,
    });
    expect(first.status).toBe(201);
    expect(first.body.storeId).toBe(t.storeId);
    expect(first.body.categories).toBeGreaterThan(0);
    expect(first.body.products).toBeGreaterThan(first.body.categories);
    expect(first.body.customers).toBeGreaterThan(0);
    const second = await call(app, "POST", "/public/v1/sandbox/seed", { token: t.token });
    expect(second.body).toEqual(first.body);
    const variations = await app.services.db.productVariation.count({ where: { product: { storeId: t.storeId } } });
    const additionals = await app.services.db.productAdditional.count({ where: { product: { storeId: t.storeId } } });
    expect(variations).toBeGreaterThan(0);
    expect(additionals).toBeGreaterThan(0);
  });
});

describe("POST /public/v1/sandbox/orders", () => {
  it("delivery: fee, full address, a first-time customer (customer.created)", async () => {
    const res = await generate("delivery");
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: "DELIVERY", status: "PENDING" });
    expect(res.body.deliveryFee).toBeGreaterThan(0);
    expect(Object.keys(res.body.deliveryAddress ?? {})).toEqual(expect.arrayContaining(["street", "number", "neighborhood", "city", "state", "postalCode"]));
    const created = await app.services.db.event.findFirst({
      where: { storeId: t.storeId, type: "customer.created", data: { path: ["customerId"], equals: res.body.customer!.id } },
    });
    expect(created).not.toBeNull();
    expect(await eventsFor(res.body.id)).toEqual(["order.created"]);
  });

  it("pickup: PICKUP, no address, no delivery fee", async () => {
    const res = await generate("pickup");
    expect(res.body).toMatchObject({ type: "PICKUP", deliveryAddress: null, deliveryFee: 0, status: "PENDING" });
  });

  it("scheduled: scheduledFor in the future", async () => {
    const res = await generate("scheduled");
    expect(new Date(res.body.scheduledFor!).getTime()).toBeGreaterThan(Date.now());
  });

  it("cash: a CASH payment with changeFor above the total", async () => {
    const res = await generate("cash");
    const [p] = res.body.payments;
    expect(p).toMatchObject({ method: "CASH", value: res.body.total });
    expect(p.changeFor!).toBeGreaterThan(res.body.total);
  });

  it("online_payment: an APPROVED digital payment", async () => {
    const res = await generate("online_payment");
    expect(res.body.payments).toEqual([{ method: "ONLINE", status: "APPROVED", value: res.body.total, changeFor: null }]);
  });

  it("with_discount: a coupon discount", async () => {
    const res = await generate("with_discount");
    expect(res.body.couponCode).toBe("SANDBOX10");
    expect(res.body.discount).toBeGreaterThan(0);
    expect(res.body.total).toBeCloseTo(res.body.subtotal + res.body.deliveryFee - res.body.discount, 2);
  });

  it("cancelled: cancelled by the restaurant with a reason, emitting order.cancelled", async () => {
    const res = await generate("cancelled");
    expect(res.body.status).toBe("CANCELLED");
    expect(res.body.cancellationReason).toMatch(/restaurant/);
    expect(res.body.statusHistory.map((h) => h.status)).toEqual(["PENDING", "CANCELLED"]);
    expect(await eventsFor(res.body.id)).toEqual(["order.created", "order.cancelled"]);
  });

  it("an unknown scenario is 400; a store with no catalog is seeded first", async () => {
    const bad = await call<{ errors: { field: string }[] }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "teleport" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe("scenario");
    const fresh = await createTenant(app, { scopes: [] });
    const res = await generate("pickup", fresh.token);
    expect(res.status).toBe(201);
    expect(await app.services.db.product.count({ where: { storeId: fresh.storeId } })).toBeGreaterThan(0);
  });

  it("PRODUCTION tokens get 403 FORBIDDEN on sandbox routes and nothing is created", async () => {
    const prod = await createTenant(app, { environment: "PRODUCTION" });
    for (const path of ["/public/v1/sandbox/seed", "/public/v1/sandbox/orders"]) {
      const res = await call<{ code: string }>(app, "POST", path, { token: prod.token, body: { scenario: "delivery" } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    expect(await app.services.db.product.count({ where: { storeId: prod.storeId } })).toBe(0);
  });
});

describe("POST /public/v1/sandbox/orders with overrides", () => {
  type Problem = { code: string; errors: { field: string; code: string }[] };
  const withOverrides = (scenario: string, overrides: unknown) =>
    call<Order & Problem>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario, overrides } });
  const cola = () => app.services.db.product.findFirstOrThrow({ where: { storeId: t.storeId, name: "Cola" } });

  it("each override replaces the scenario's value; prices still come from the catalog", async () => {
    const product = await cola();
    const scheduledFor = "2031-05-04T18:30:00.000Z";
    const res = await withOverrides("scheduled", {
      items: [{ productId: product.id, quantity: 3, unitPrice: 0.01 }],
      customer: { name: "Olga Override", phone: "+55 11 95555-0000" },
      deliveryFee: 7.25,
      discount: 3.5,
      notes: "Ring twice",
      scheduledFor,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const price = product.priceCents / 100;
    expect(res.body.items).toEqual([expect.objectContaining({ productId: product.id, quantity: 3, unitPrice: price })]);
    expect(res.body).toMatchObject({ subtotal: 3 * price, deliveryFee: 7.25, discount: 3.5, notes: "Ring twice", scheduledFor, couponCode: null });
    expect(res.body.total).toBeCloseTo(3 * price + 7.25 - 3.5, 2);
    expect(res.body.payments.map((p) => p.value)).toEqual([res.body.total]);
    expect(res.body.customer?.name).toBe("Olga Override");
    const created = await app.services.db.event.findFirst({
      where: { storeId: t.storeId, type: "customer.created", data: { path: ["customerId"], equals: res.body.customer!.id } },
    });
    expect(created).not.toBeNull();
    const stored = await app.services.db.order.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored).toMatchObject({ deliveryFeeCents: 725, discountCents: 350, totalCents: 3 * product.priceCents + 725 - 350 });
  });

  it("a partial override keeps the rest of the scenario: with_discount keeps its coupon, pickup takes a fee, notes null clears", async () => {
    const discounted = await withOverrides("with_discount", { discount: 0.5 });
    expect(discounted.body).toMatchObject({ couponCode: "SANDBOX10", discount: 0.5 });
    expect(discounted.body.total).toBeCloseTo(discounted.body.subtotal + discounted.body.deliveryFee - 0.5, 2);
    const pickup = await withOverrides("pickup", { deliveryFee: 2 });
    expect(pickup.body).toMatchObject({ type: "PICKUP", deliveryAddress: null, deliveryFee: 2 });
    const cleared = await withOverrides("scheduled", { notes: null });
    expect(cleared.body.notes).toBeNull();
    expect(new Date(cleared.body.scheduledFor!).getTime()).toBeGreaterThan(Date.now());
    const free = await withOverrides("delivery", { deliveryFee: 0 });
    expect(free.body.deliveryFee).toBe(0);
  });

  it("a bad override is the same 400 on both doors and writes nothing", async () => {
    const product = await cola();
    const counts = await tableCounter(app);
    const before = await counts();
    const overrides = {
      items: [{ productId: product.id, quantity: 0 }],
      customer: { name: " " },
      deliveryFee: -1,
      discount: 1.234,
      notes: "x".repeat(501),
      scheduledFor: "tomorrow",
    };
    const expected = [
      { field: "overrides.items[0].quantity", code: "OUT_OF_RANGE" },
      { field: "overrides.customer.name", code: "INVALID_FORMAT" },
      { field: "overrides.deliveryFee", code: "OUT_OF_RANGE" },
      { field: "overrides.discount", code: "INVALID_VALUE" },
      { field: "overrides.notes", code: "TOO_LONG" },
      { field: "overrides.scheduledFor", code: "INVALID_FORMAT" },
    ];
    const rest = await withOverrides("delivery", overrides);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe("INVALID_REQUEST");
    expect(rest.body.errors.map(({ field, code }) => ({ field, code }))).toEqual(expect.arrayContaining(expected));
    expect(rest.body.errors).toHaveLength(expected.length);
    // GraphQL's DateTime refuses "tomorrow" itself, before the resolver: a valid instant lets the rest reach the check.
    const { scheduledFor: _, ...typed } = overrides;
    const [restTyped, gql] = await Promise.all([
      withOverrides("delivery", typed),
      graphql<{ sandboxCreateOrder: { id: string } }>(
        app,
        "mutation($o: SandboxOrderOverrides) { sandboxCreateOrder(scenario: DELIVERY, overrides: $o) { id } }",
        { o: typed },
        t.token,
      ),
    ]);
    expect(gql.errors?.[0].extensions?.code, JSON.stringify(gql)).toBe("INVALID_REQUEST");
    const pairs = (errors: unknown) => (errors as { field: string; code: string }[]).map(({ field, code }) => ({ field, code }));
    expect(pairs(gql.errors?.[0].extensions?.errors)).toEqual(pairs(restTyped.body.errors));
    expect(pairs(restTyped.body.errors)).toEqual(expected.slice(0, -1));
    expect(await counts()).toEqual(before);
  });

  it("an unknown product in overrides.items is 422, as on POST /orders, and writes nothing", async () => {
    const before = await app.services.db.order.count({ where: { storeId: t.storeId } });
    const res = await withOverrides("delivery", { items: [{ productId: "00000000-0000-4000-8000-000000000000", quantity: 1 }] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "overrides.items[0].productId", code: "UNKNOWN_PRODUCT" })]);
    expect(await app.services.db.order.count({ where: { storeId: t.storeId } })).toBe(before);
  });

  it("a discount above subtotal plus fee is 422: the total is never negative", async () => {
    const product = await cola();
    const res = await withOverrides("pickup", { items: [{ productId: product.id, quantity: 1 }], discount: product.priceCents / 100 + 0.01 });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "overrides.discount", code: "DISCOUNT_TOO_LARGE" })]);
    const exact = await withOverrides("pickup", { items: [{ productId: product.id, quantity: 1 }], discount: product.priceCents / 100 });
    expect(exact.body).toMatchObject({ total: 0, payments: [expect.objectContaining({ value: 0 })] });
  });
});

describe("POST /public/v1/sandbox/events", () => {
  type Fired = { eventId: string; eventType: string; sequence: number; tenantId: string; data: Record<string, unknown> };
  /** Firing an event needs the read scope of its type, as receiving it does; no write scope. */
  let reader: string;
  beforeAll(async () => {
    const { application, clientSecret } = await createApplication(app.services.db, {
      name: "Sandbox reader",
      environment: "SANDBOX",
      scopes: ["orders:read", "customers:read", "catalog:read", "merchant:read"],
      apiVersion: FIRST_API_VERSION,
    });
    await createGrant(app.services.db, { clientId: application.clientId, storeId: t.storeId });
    reader = await getToken(app, application.clientId, clientSecret);
  });
  const fire = (type: string, token = reader) => call<Fired>(app, "POST", "/public/v1/sandbox/events", { token, body: { type } });

  it.each(["order.created", "order.confirmed", "order.preparing", "order.ready", "order.dispatched", "order.delivered", "order.completed", "order.cancelled"])(
    "%s: an order walked through the real lifecycle, emitting every event on the way",
    async (type) => {
      const res = await fire(type);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ eventType: type, tenantId: t.storeCode });
      const stored = await app.services.db.event.findUniqueOrThrow({ where: { id: res.body.eventId } });
      expect(res.body.sequence).toBe(Number(stored.sequence));
      const orderId = String(res.body.data.orderId);
      const order = await app.services.db.order.findUniqueOrThrow({ where: { id: orderId }, select: { status: true, version: true } });
      const types = await eventsFor(orderId);
      expect(types[0]).toBe("order.created");
      // Reaching DELIVERED emits order.delivered then order.completed, one change and one version.
      const reached = order.status === "DELIVERED" ? ["order.delivered", "order.completed"] : [type];
      expect(types.slice(-reached.length)).toEqual(reached);
      expect(types).toHaveLength(order.version + reached.length - 1);
      expect(res.body.data.version).toBe(order.version);
    },
  );

  it("store.updated changes the store; customer.* create or update a customer", async () => {
    const before = await app.services.db.store.findUniqueOrThrow({ where: { id: t.storeId }, select: { phone: true } });
    const store = await fire("store.updated");
    expect(store.status).toBe(201);
    expect(store.body.data).toEqual({ storeId: t.storeId, changed: ["phone"] });
    expect((await app.services.db.store.findUniqueOrThrow({ where: { id: t.storeId }, select: { phone: true } })).phone).not.toBe(before.phone);

    const created = await fire("customer.created");
    expect(created.status).toBe(201);
    expect(await app.services.db.customer.findUnique({ where: { id: String(created.body.data.customerId) } })).not.toBeNull();
    const updated = await fire("customer.updated");
    expect(updated.status).toBe(201);
    expect(updated.body.data).toMatchObject({ changed: ["phone"] });
  });

  it("catalog.updated pauses or resumes a product and answers 202 with the change; the aggregated event follows", async () => {
    const res = await call<{ action: string; itemId: string; itemType: string }>(app, "POST", "/public/v1/sandbox/events", {
      token: reader,
      body: { type: "catalog.updated" },
    });
    expect(res.status).toBe(202);
    const product = await app.services.db.product.findUniqueOrThrow({ where: { id: res.body.itemId } });
    expect(res.body).toEqual({ itemType: "product", itemId: product.id, action: product.isActive ? "product.activated" : "product.paused" });
    expect(await app.services.db.catalogChange.count({ where: { storeId: t.storeId, itemId: product.id } })).toBeGreaterThan(0);
  });

  it("a type whose read scope the token lacks is 403 INSUFFICIENT_SCOPE naming it, on both doors, and changes nothing", async () => {
    await fire("customer.created");
    const merchantOnly = await createTenant(app, { scopes: ["merchant:read"] });
    // The same store: a second Application granted on it with merchant:read only.
    const { application, clientSecret } = await createApplication(app.services.db, {
      name: "Merchant only",
      environment: "SANDBOX",
      scopes: ["merchant:read"],
    });
    await createGrant(app.services.db, { clientId: application.clientId, storeId: t.storeId });
    const token = await getToken(app, application.clientId, clientSecret);
    const customers = () => app.services.db.customer.findMany({ where: { storeId: t.storeId }, orderBy: { id: "asc" } });
    const counts = await tableCounter(app);
    const [before, rows] = [await counts(), await customers()];
    for (const [type, scope] of [
      ["customer.updated", "customers:read"],
      ["customer.created", "customers:read"],
      ["order.created", "orders:read"],
      ["order.delivered", "orders:read"],
      ["catalog.updated", "catalog:read"],
    ]) {
      const res = await call<{ code: string; detail: string; data?: unknown }>(app, "POST", "/public/v1/sandbox/events", { token, body: { type } });
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.code).toBe("INSUFFICIENT_SCOPE");
      expect(res.body.detail).toContain(scope);
      expect(JSON.stringify(res.body)).not.toMatch(/phone|email/);
      const gql = await graphql(app, "mutation($type: String!) { sandboxFireEvent(type: $type) { event { data } } }", { type }, token);
      expect(gql.errors?.[0].extensions?.code, JSON.stringify(gql)).toBe("INSUFFICIENT_SCOPE");
      expect(gql.data).toBeNull();
    }
    expect(await counts()).toEqual(before);
    expect(await customers()).toEqual(rows);
    // What the token may read, it may fire.
    expect((await fire("store.updated", token)).status).toBe(201);
    expect((await fire("store.updated", merchantOnly.token)).status).toBe(201);
  });

  it("an unknown type or an operational one is 400; PRODUCTION tokens get 403", async () => {
    expect((await fire("order.shipped")).status).toBe(400);
    expect((await fire("webhook.test")).status).toBe(400);
    const prod = await createTenant(app, { environment: "PRODUCTION" });
    expect((await fire("order.created", prod.token)).status).toBe(403);
  });
});
