import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, fakeAddress, type FixtureProduct } from "../helpers/fixtures.js";

let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
});
afterAll(() => app.close());

type OrderBody = {
  id: string;
  status: string;
  orderNumber: number;
  version: number;
  displayId: string;
  total: number;
  totalAmount: number;
  subtotal: number;
  deliveryFee: number;
  items: { unitPrice: number; total: number; quantity: number; additionals: { name: string; price: number }[] }[];
  statusHistory: { status: string; reason: string | null }[];
  customer: { id: string; name: string } | null;
  cancellationReason: string | null;
};

async function eventsOf(type?: string) {
  return app.services.db.event.findMany({ where: { storeId: t.storeId, ...(type ? { type } : {}) }, orderBy: { sequence: "asc" } });
}

function newOrder(overrides: Record<string, unknown> = {}) {
  return {
    type: "DELIVERY",
    items: [{ productId: products[0].id, quantity: 2, unitPrice: 0.01, total: 0.02 }],
    deliveryAddress: fakeAddress(),
    ...overrides,
  };
}

describe("POST /public/v1/orders", () => {
  it("prices come from the catalog, whatever the client sends; 201 with Location and order.created", async () => {
    const p = products[0];
    const extra = p.additionals[0];
    const res = await call<OrderBody>(app, "POST", "/public/v1/orders", {
      token: t.token,
      body: newOrder({
        items: [{ productId: p.id, quantity: 2, unitPrice: 0.01, total: 0.02, additionals: [{ name: extra.name, quantity: 1 }] }],
        customer: { name: "Nina Prado", phone: "+55 11 90000-0001" },
      }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/public/v1/orders/${res.body.id}`);
    const expectedItem = (2 * (p.priceCents + extra.priceCents)) / 100;
    expect(res.body.items[0]).toMatchObject({ unitPrice: p.priceCents / 100, total: expectedItem, quantity: 2 });
    expect(res.body.items[0].additionals).toEqual([{ name: extra.name, quantity: 1, price: extra.priceCents / 100 }]);
    expect(res.body.subtotal).toBe(expectedItem);
    expect(res.body.total).toBeCloseTo(expectedItem + res.body.deliveryFee, 2);
    expect(res.body.totalAmount).toBe(res.body.total);
    expect(res.body.displayId).toBe(String(res.body.orderNumber));
    expect(res.body.status).toBe("PENDING");
    expect(res.body.statusHistory.map((h) => h.status)).toEqual(["PENDING"]);
    const created = (await eventsOf("order.created")).find((e) => (e.data as { orderId: string }).orderId === res.body.id);
    expect(created?.data).toEqual({
      orderId: res.body.id,
      orderNumber: res.body.orderNumber,
      total: res.body.total,
      type: "DELIVERY",
      status: "PENDING",
      version: 1,
    });
    expect(res.body.version).toBe(1);
    const customerEvent = (await eventsOf("customer.created")).find((e) => (e.data as { customerId: string }).customerId === res.body.customer?.id);
    expect(customerEvent?.data).toMatchObject({ name: "Nina Prado", phone: "+55 11 90000-0001" });
  });

  it("orderNumber is a per-store sequence", async () => {
    const a = await call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body: newOrder() });
    const b = await call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body: newOrder() });
    expect(b.body.orderNumber).toBe(a.body.orderNumber + 1);
  });

  it("rejects bad input with 400 listing each field, and changes nothing", async () => {
    const before = await app.services.db.order.count();
    const cases: [unknown, string][] = [
      [newOrder({ items: [] }), "items"],
      [newOrder({ items: [{ productId: "nope", quantity: 1 }] }), "items[0].productId"],
      [newOrder({ items: [{ productId: products[0].id, quantity: 0 }] }), "items[0].quantity"],
      [newOrder({ type: "DINE_IN" }), "type"],
      [newOrder({ deliveryAddress: undefined }), "deliveryAddress"],
      [newOrder({ type: "PICKUP" }), "deliveryAddress"],
      [newOrder({ payments: [{ method: "BITCOIN", value: 1 }] }), "payments[0].method"],
      [newOrder({ payments: [{ method: "CASH", value: 1.001 }] }), "payments[0].value"],
      [{ items: [] }, "type"],
    ];
    for (const [body, field] of cases) {
      const res = await call<{ code: string; errors: { field: string }[] }>(app, "POST", "/public/v1/orders", { token: t.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("INVALID_REQUEST");
      expect(res.body.errors.map((e) => e.field)).toContain(field);
    }
    expect(await app.services.db.order.count()).toBe(before);
  });

  it("unknown or paused products, unknown customers and payments that do not add up are 422", async () => {
    await app.services.db.product.update({ where: { id: products[1].id }, data: { isActive: false } });
    const cases: [unknown, string][] = [
      [newOrder({ items: [{ productId: "00000000-0000-4000-8000-000000000000", quantity: 1 }] }), "UNKNOWN_PRODUCT"],
      [newOrder({ items: [{ productId: products[1].id, quantity: 1 }] }), "PRODUCT_INACTIVE"],
      [newOrder({ customerId: "00000000-0000-4000-8000-000000000000" }), "UNKNOWN_CUSTOMER"],
      [newOrder({ payments: [{ method: "PIX", value: 1 }] }), "PAYMENT_MISMATCH"],
      [newOrder({ items: [{ productId: products[0].id, quantity: 1, additionals: [{ name: "Gold leaf", quantity: 1 }] }] }), "UNKNOWN_ADDITIONAL"],
    ];
    for (const [body, code] of cases) {
      const res = await call<{ code: string; errors: { code: string }[] }>(app, "POST", "/public/v1/orders", { token: t.token, body });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e) => e.code)).toContain(code);
    }
    await app.services.db.product.update({ where: { id: products[1].id }, data: { isActive: true } });
  });

  it("another store's product is unknown here", async () => {
    const other = await createTenant(app);
    const theirs = (await createCatalog(app.services.db, other.storeId)).products[0];
    const res = await call<{ errors: { code: string }[] }>(app, "POST", "/public/v1/orders", {
      token: t.token,
      body: newOrder({ items: [{ productId: theirs.id, quantity: 1 }] }),
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe("UNKNOWN_PRODUCT");
  });

  it("needs orders:write", async () => {
    const reader = await createTenant(app, { scopes: ["orders:read"] });
    const res = await call<{ code: string }>(app, "POST", "/public/v1/orders", { token: reader.token, body: newOrder() });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("INSUFFICIENT_SCOPE");
  });
});

describe("Idempotency-Key over HTTP", () => {
  it("replays the same order with Idempotent-Replayed and conflicts on a different payload", async () => {
    const key = crypto.randomUUID();
    const body = newOrder();
    const first = await call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body, headers: { "idempotency-key": key } });
    const again = await call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body, headers: { "idempotency-key": key } });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const other = await call<{ code: string }>(app, "POST", "/public/v1/orders", {
      token: t.token,
      body: { ...body, notes: "different" },
      headers: { "idempotency-key": key },
    });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("IDEMPOTENCY_CONFLICT");
  });

  it("ten concurrent duplicates create one order", async () => {
    const key = crypto.randomUUID();
    const before = await app.services.db.order.count({ where: { storeId: t.storeId } });
    const body = newOrder({ notes: "dup" });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body, headers: { "idempotency-key": key } })),
    );
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await app.services.db.order.count({ where: { storeId: t.storeId } })).toBe(before + 1);
  });

  it("a malformed key is 400", async () => {
    const res = await call(app, "POST", "/public/v1/orders", { token: t.token, body: newOrder(), headers: { "idempotency-key": "x".repeat(256) } });
    expect(res.status).toBe(400);
  });
});

describe("PATCH /public/v1/orders/{id}/status", () => {
  async function order(type: "DELIVERY" | "PICKUP" = "DELIVERY") {
    const body = type === "PICKUP" ? newOrder({ type, deliveryAddress: undefined }) : newOrder();
    return (await call<OrderBody>(app, "POST", "/public/v1/orders", { token: t.token, body })).body;
  }
  const move = (id: string, status: string, reason?: string) =>
    call<OrderBody & { code: string; errors: Record<string, string>[] }>(app, "PATCH", `/public/v1/orders/${id}/status`, {
      token: t.token,
      body: { status, ...(reason ? { reason } : {}) },
    });

  it("walks a DELIVERY order to DELIVERED, emitting each event in order (order.completed after order.delivered)", async () => {
    const o = await order();
    for (const [i, status] of ["CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"].entries()) {
      const res = await move(o.id, status);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(status);
      expect(res.body.version).toBe(i + 2);
    }
    const done = await call<OrderBody>(app, "GET", `/public/v1/orders/${o.id}`, { token: t.token });
    expect(done.body.statusHistory.map((h) => h.status)).toEqual(["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"]);
    const events = (await eventsOf()).filter((e) => (e.data as { orderId?: string }).orderId === o.id);
    expect(events.map((e) => e.type)).toEqual([
      "order.created",
      "order.confirmed",
      "order.preparing",
      "order.ready",
      "order.dispatched",
      "order.delivered",
      "order.completed",
    ]);
    // One version per change: order.completed reports the same change as order.delivered.
    expect(events.map((e) => (e.data as { version: number }).version)).toEqual([1, 2, 3, 4, 5, 6, 6]);
  });

  it("a PICKUP order goes READY → DELIVERED and may not be DISPATCHED", async () => {
    const o = await order("PICKUP");
    await move(o.id, "CONFIRMED");
    await move(o.id, "READY");
    const bad = await move(o.id, "DISPATCHED");
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ field: "status", code: "INVALID_TRANSITION", from: "READY", to: "DISPATCHED" });
    expect((await move(o.id, "DELIVERED")).status).toBe(200);
  });

  it("illegal moves, repeats and moves out of final states are 422 and change nothing", async () => {
    const o = await order();
    expect((await move(o.id, "READY")).status).toBe(422);
    expect((await move(o.id, "PENDING")).status).toBe(422);
    await move(o.id, "CANCELLED", "customer called");
    const again = await move(o.id, "CONFIRMED");
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatchObject({ code: "INVALID_TRANSITION", from: "CANCELLED", to: "CONFIRMED" });
    const read = await call<OrderBody>(app, "GET", `/public/v1/orders/${o.id}`, { token: t.token });
    expect(read.body.statusHistory.map((h) => h.status)).toEqual(["PENDING", "CANCELLED"]);
  });

  it("cancelling needs a reason, which is stored and sent in order.cancelled", async () => {
    const o = await order();
    const missing = await move(o.id, "CANCELLED");
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e) => e.field)).toContain("reason");
    const ok = await move(o.id, "CANCELLED", "Out of dough");
    expect(ok.body).toMatchObject({ status: "CANCELLED", cancellationReason: "Out of dough" });
    expect(ok.body.statusHistory.at(-1)).toMatchObject({ status: "CANCELLED", reason: "Out of dough" });
    const ev = (await eventsOf("order.cancelled")).find((e) => (e.data as { orderId: string }).orderId === o.id);
    expect(ev?.data).toEqual({ orderId: o.id, status: "CANCELLED", reason: "Out of dough", version: 2 });
  });

  it("of concurrent changes exactly one wins and the history stays linear", async () => {
    const o = await order();
    // All race for the same move: once one commits, the move is no longer legal for the others.
    const results = await Promise.all(Array.from({ length: 8 }, () => move(o.id, "CONFIRMED")));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect([409, 422]).toContain(r.status);
    const read = await call<OrderBody>(app, "GET", `/public/v1/orders/${o.id}`, { token: t.token });
    expect(read.body.statusHistory).toHaveLength(2);
    const evs = (await eventsOf()).filter((e) => (e.data as { orderId?: string }).orderId === o.id && e.type !== "order.created");
    expect(evs).toHaveLength(1);
  });

  it("a move another transaction commits while this one waits on the order's row is 409 CONFLICT, even when the move still follows", async () => {
    const o = await order();
    await move(o.id, "CONFIRMED");
    const other = new pg.Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query("begin");
      await other.query(`update "Order" set status = 'PREPARING', version = version + 1 where id = $1`, [o.id]);
      const cancel = move(o.id, "CANCELLED", "customer called");
      // The move is sent once it waits on the row lock the other transaction holds.
      for (let waiting = false; !waiting; ) {
        const { rows } = await other.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()");
        waiting = rows[0].n > 0;
      }
      await other.query("commit");
      const res = await cancel;
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("CONFLICT");
    } finally {
      await other.end();
    }
    const read = await call<OrderBody>(app, "GET", `/public/v1/orders/${o.id}`, { token: t.token });
    expect(read.body).toMatchObject({ status: "PREPARING", version: 3 });
  });

  it("unknown and malformed ids", async () => {
    expect((await move("00000000-0000-4000-8000-000000000000", "CONFIRMED")).status).toBe(404);
    expect((await move("not-a-uuid", "CONFIRMED")).status).toBe(400);
  });
});
