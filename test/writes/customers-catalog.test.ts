import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, type FixtureProduct } from "../helpers/fixtures.js";
import { startWorker } from "../../workers/runner.js";

let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];

beforeAll(async () => {
  app = await startTestApp({ CATALOG_EVENT_WINDOW_MS: "300" });
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
});
afterAll(() => app.close());

const events = (type: string) => app.services.db.event.findMany({ where: { storeId: t.storeId, type }, orderBy: { createdAt: "asc" } });

describe("customers", () => {
  it("POST creates (201, Location, customer.created) and PATCH changes only what is sent (customer.updated)", async () => {
    const created = await call<{ id: string; name: string; phone: string; email: string | null }>(app, "POST", "/public/v1/customers", {
      token: t.token,
      body: { name: "Olga Reis", phone: "+55 11 95555-0000", email: "olga@example.com", vip: true },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/public/v1/customers/${created.body.id}`);
    expect(created.body).toMatchObject({ name: "Olga Reis", phone: "+55 11 95555-0000", email: "olga@example.com" });
    expect((await events("customer.created")).some((e) => (e.data as { customerId: string }).customerId === created.body.id)).toBe(true);

    const patched = await call<{ name: string; phone: string | null; email: string | null }>(app, "PATCH", `/public/v1/customers/${created.body.id}`, {
      token: t.token,
      body: { email: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "Olga Reis", phone: "+55 11 95555-0000", email: null });
    const updated = (await events("customer.updated")).find((e) => (e.data as { customerId: string }).customerId === created.body.id);
    expect(updated?.data).toMatchObject({ customerId: created.body.id, changed: ["email"] });
    const found = await call<{ data: { id: string }[] }>(app, "GET", "/public/v1/customers?search=95555", { token: t.token });
    expect(found.body.data.map((c) => c.id)).toContain(created.body.id);
  });

  it("validates fields (400) and changes nothing", async () => {
    const before = await app.services.db.customer.count();
    for (const [body, field] of [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "A", email: "not-an-email" }, "email"],
      [{ name: "A", phone: "call me" }, "phone"],
    ] as const) {
      const res = await call<{ errors: { field: string }[] }>(app, "POST", "/public/v1/customers", { token: t.token, body });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e) => e.field)).toContain(field);
    }
    const c = await createCustomer(app.services.db, t.storeId, { name: "Patch Me" });
    expect((await call(app, "PATCH", `/public/v1/customers/${c.id}`, { token: t.token, body: {} })).status).toBe(400);
    expect(await app.services.db.customer.count()).toBe(before + 1);
  });

  it("another store's customer is 404 and untouched", async () => {
    const other = await createTenant(app);
    const theirs = await createCustomer(app.services.db, other.storeId, { name: "Theirs" });
    expect((await call(app, "PATCH", `/public/v1/customers/${theirs.id}`, { token: t.token, body: { name: "Mine now" } })).status).toBe(404);
    expect((await app.services.db.customer.findUniqueOrThrow({ where: { id: theirs.id } })).name).toBe("Theirs");
  });

  it("a customers:write token without customers:read still gets the created customer back", async () => {
    const writer = await createTenant(app, { scopes: ["customers:write"] });
    const res = await call<{ email: string }>(app, "POST", "/public/v1/customers", { token: writer.token, body: { name: "W", email: "w@example.com" } });
    expect(res.status).toBe(201);
    expect(res.body.email).toBe("w@example.com");
    expect((await call(app, "GET", "/public/v1/customers", { token: writer.token })).status).toBe(403);
  });
});

describe("product status and the aggregated catalog.updated", () => {
  it("pausing makes a product unorderable; changes inside the window become one event per item and action", async () => {
    const [a, b] = products;
    const pause = (id: string, isActive: boolean) =>
      call<{ isActive: boolean }>(app, "PATCH", `/public/v1/catalog/products/${id}/status`, { token: t.token, body: { isActive } });
    expect((await pause(a.id, false)).body.isActive).toBe(false);
    await pause(b.id, false);
    await pause(b.id, true);
    await pause(b.id, false);
    const order = await call(app, "POST", "/public/v1/orders", { token: t.token, body: { type: "PICKUP", items: [{ productId: a.id, quantity: 1 }] } });
    expect(order.status).toBe(422);

    const worker = await startWorker(app.services, app.databaseUrl);
    try {
      const deadline = Date.now() + 10_000;
      let got: { action: string; itemId: string }[] = [];
      while (Date.now() < deadline) {
        got = (await events("catalog.updated")).map((e) => e.data as { action: string; itemId: string });
        if (got.length >= 3) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 500));
      got = (await events("catalog.updated")).map((e) => e.data as { action: string; itemId: string });
      const keys = got.map((g) => `${g.itemId}:${g.action}`).sort();
      expect(keys).toEqual([`${a.id}:product.paused`, `${b.id}:product.activated`, `${b.id}:product.paused`].sort());
      expect(await app.services.db.catalogChange.count({ where: { storeId: t.storeId } })).toBe(0);
    } finally {
      await worker.stop();
    }
  });

  it("needs catalog:write; unknown product 404; bad body 400", async () => {
    const reader = await createTenant(app, { scopes: ["catalog:read"] });
    expect((await call(app, "PATCH", `/public/v1/catalog/products/${products[2].id}/status`, { token: reader.token, body: { isActive: false } })).status).toBe(
      403,
    );
    expect(
      (await call(app, "PATCH", `/public/v1/catalog/products/00000000-0000-4000-8000-000000000000/status`, { token: t.token, body: { isActive: false } }))
        .status,
    ).toBe(404);
    expect((await call(app, "PATCH", `/public/v1/catalog/products/${products[2].id}/status`, { token: t.token, body: { isActive: "no" } })).status).toBe(400);
  });
});

describe("the same mutations over GraphQL", () => {
  it("apply the same rules", async () => {
    const bad = await graphql(app, `mutation { createCustomer(input: { name: "X", email: "nope" }) { id } }`, {}, t.token);
    expect(bad.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    const o = await graphql<{ createOrder: { id: string; status: string } }>(
      app,
      `mutation($p: ID!) { createOrder(input: { type: PICKUP, items: [{ productId: $p, quantity: 1 }] }) { id status } }`,
      { p: products[2].id },
      t.token,
    );
    expect(o.data?.createOrder.status).toBe("PENDING");
    const illegal = await graphql(app, `mutation($id: ID!) { updateOrderStatus(id: $id, status: DELIVERED) { id } }`, { id: o.data!.createOrder.id }, t.token);
    expect(illegal.errors?.[0].extensions?.code).toBe("UNPROCESSABLE_ENTITY");
    const reader = await createTenant(app, { scopes: ["orders:read"] });
    const denied = await graphql(
      app,
      `mutation($id: ID!) { updateOrderStatus(id: $id, status: CONFIRMED) { id } }`,
      { id: o.data!.createOrder.id },
      reader.token,
    );
    expect(denied.errors?.[0].extensions?.code).toBe("INSUFFICIENT_SCOPE");
  });
});
