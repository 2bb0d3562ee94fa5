import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { routes } from "../../src/rest/routes.js";

/**
 * The tenant-isolation matrix: two stores with look-alike data (same customer names, same menu); every read
 * route, list and detail, REST and GraphQL, with every filter. Nothing of the other store may appear in any
 * response, and its ids are NOT_FOUND (or an unknown cursor) rather than readable.
 */

interface Seeded {
  tenant: Tenant;
  ids: { orders: string[]; customers: string[]; products: string[]; categories: string[]; all: string[] };
  sampleOrder: string;
  sampleCustomer: string;
  sampleProduct: string;
}

let app: TestApp;
let a: Seeded;
let b: Seeded;

async function seed(name: string): Promise<Seeded> {
  const tenant = await createTenant(app, { name });
  const db = app.services.db;
  const { categories, products } = await createCatalog(db, tenant.storeId);
  const customers = [];
  for (const customerName of ["Ana Souza", "Bruno Lima", "Carla Dias"]) {
    customers.push(
      await createCustomer(db, tenant.storeId, {
        name: customerName,
        phone: "(11) 95555-0000",
        email: `${customerName.split(" ")[0].toLowerCase()}@example.com`,
      }),
    );
  }
  const orders = [];
  const statuses = ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"] as const;
  for (const [i, status] of statuses.entries()) {
    const product = products[i % products.length];
    orders.push(
      await createOrder(db, tenant.storeId, {
        status,
        customerId: customers[i % customers.length].id,
        items: [{ name: product.name, productId: product.id, quantity: 1, unitPriceCents: product.priceCents }],
      }),
    );
  }
  const nested = [
    ...orders.flatMap((o) => [...o.items.map((i) => i.id), ...o.statusHistory.map((h) => h.id), ...o.payments.map((p) => p.id)]),
    ...customers.flatMap((c) => c.addresses.map((x) => x.id)),
    ...products.flatMap((p) => [...p.variations.map((v) => v.id), ...p.additionals.map((x) => x.id)]),
  ];
  const ids = {
    orders: orders.map((o) => o.id),
    customers: customers.map((c) => c.id),
    products: products.map((p) => p.id),
    categories: categories.map((c) => c.id),
    all: [] as string[],
  };
  ids.all = [tenant.storeId, ...ids.orders, ...ids.customers, ...ids.products, ...ids.categories, ...nested];
  return { tenant, ids, sampleOrder: ids.orders[0], sampleCustomer: ids.customers[0], sampleProduct: ids.products[0] };
}

beforeAll(async () => {
  app = await startTestApp();
  a = await seed("Pizzaria A");
  b = await seed("Pizzaria B");
});
afterAll(() => app.close());

/** `echoed`: the request's own text, which a 400/404 problem may quote back (its detail and instance). */
function expectNothingOf(other: Seeded, body: unknown, where: string, echoed = ""): void {
  const text = JSON.stringify(body);
  const leaked = other.ids.all.filter((id) => text.includes(id) && !echoed.includes(id));
  expect(leaked, where).toEqual([]);
}

/** Every store, order, customer and catalog read for `me`, with `other`'s ids where a path or cursor takes one. */
function restMatrix(me: Seeded, other: Seeded): { operationId: string; path: string; expect: number }[] {
  const since = encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString());
  return [
    { operationId: "getStore", path: "/public/v1/store", expect: 200 },
    { operationId: "listOrders", path: "/public/v1/orders?limit=100", expect: 200 },
    { operationId: "listOrders", path: "/public/v1/orders?limit=2", expect: 200 },
    { operationId: "listOrders", path: "/public/v1/orders?status=DELIVERED", expect: 200 },
    { operationId: "listOrders", path: `/public/v1/orders?updated_since=${since}`, expect: 200 },
    { operationId: "listOrders", path: `/public/v1/orders?cursor=${me.ids.orders[3]}`, expect: 200 },
    { operationId: "listOrders", path: `/public/v1/orders?cursor=${other.ids.orders[3]}`, expect: 400 },
    { operationId: "getOrderById", path: `/public/v1/orders/${me.sampleOrder}`, expect: 200 },
    { operationId: "getOrderById", path: `/public/v1/orders/${other.sampleOrder}`, expect: 404 },
    { operationId: "listCustomers", path: "/public/v1/customers", expect: 200 },
    { operationId: "listCustomers", path: "/public/v1/customers?search=ana", expect: 200 },
    { operationId: "listCustomers", path: "/public/v1/customers?search=95555", expect: 200 },
    { operationId: "listCustomers", path: `/public/v1/customers?updated_since=${since}`, expect: 200 },
    { operationId: "listCustomers", path: `/public/v1/customers?cursor=${other.sampleCustomer}`, expect: 400 },
    { operationId: "getCustomerById", path: `/public/v1/customers/${me.sampleCustomer}`, expect: 200 },
    { operationId: "getCustomerById", path: `/public/v1/customers/${other.sampleCustomer}`, expect: 404 },
    { operationId: "listCategories", path: "/public/v1/catalog/categories", expect: 200 },
    { operationId: "listProducts", path: "/public/v1/catalog/products?limit=100", expect: 200 },
    { operationId: "listProducts", path: `/public/v1/catalog/products?cursor=${other.sampleProduct}`, expect: 400 },
    { operationId: "getProductById", path: `/public/v1/catalog/products/${me.sampleProduct}`, expect: 200 },
    { operationId: "getProductById", path: `/public/v1/catalog/products/${other.sampleProduct}`, expect: 404 },
  ];
}

describe("REST", () => {
  it("covers every read route of the table", () => {
    const reads = routes.filter((r) => r.method === "GET" && ["Store", "Orders", "Customers", "Catalog"].includes(r.tag)).map((r) => r.operationId);
    expect(new Set(restMatrix(a, b).map((r) => r.operationId))).toEqual(new Set(reads));
  });

  for (const [me, other] of [
    ["A", "B"],
    ["B", "A"],
  ] as const) {
    it(`${me}'s token never sees ${other}'s data, and ${other}'s ids are unknown`, async () => {
      const [mine, theirs] = me === "A" ? [a, b] : [b, a];
      for (const req of restMatrix(mine, theirs)) {
        const res = await call(app, "GET", req.path, { token: mine.tenant.token });
        expect(res.status, req.path).toBe(req.expect);
        expectNothingOf(theirs, res.body, req.path, req.path);
      }
      // Lists answer the caller's own rows, all of them.
      const orders = await call<{ data: { id: string }[] }>(app, "GET", "/public/v1/orders?limit=100", { token: mine.tenant.token });
      expect(orders.body.data.map((o) => o.id).sort()).toEqual([...mine.ids.orders].sort());
      const customers = await call<{ data: { id: string }[] }>(app, "GET", "/public/v1/customers?search=ana", { token: mine.tenant.token });
      expect(customers.body.data.map((c) => c.id)).toEqual([mine.ids.customers[0]]);
      const products = await call<{ data: { id: string }[] }>(app, "GET", "/public/v1/catalog/products?limit=100", { token: mine.tenant.token });
      expect(products.body.data.map((p) => p.id).sort()).toEqual([...mine.ids.products].sort());
      const categories = await call<{ data: { id: string }[] }>(app, "GET", "/public/v1/catalog/categories", { token: mine.tenant.token });
      expect(categories.body.data.map((c) => c.id).sort()).toEqual([...mine.ids.categories].sort());
      const store = await call<{ id: string }>(app, "GET", "/public/v1/store", { token: mine.tenant.token });
      expect(store.body.id).toBe(mine.tenant.storeId);
    });
  }
});

describe("GraphQL", () => {
  // Each store has 7 orders: the nested lists ask for 20 (all of them), which keeps the document under the
  // default cost limit (100 × 100 nested orders would not be).
  const everything = `query($since: DateTime) {
    store { id name }
    orders(limit: 100) { data { id items { id productId additionals { name } } payments { value } statusHistory { status }
      customer { id email deliveryAddresses { id } contactSummary { orderCount } orders(limit: 20) { id } } } }
    changed: orders(updatedSince: $since, status: DELIVERED) { data { id } }
    customers(limit: 100, search: "a") { data { id deliveryAddresses { id } orders(limit: 20) { id customer { id } } } }
    categories { id products { id variations { id } additionals { id } category { id } } }
    products(limit: 100) { data { id category { id products { id } } variations { id } additionals { id } } }
  }`;

  for (const me of ["A", "B"] as const) {
    it(`${me}'s token sees only ${me} through every query field and relation`, async () => {
      const [mine, theirs] = me === "A" ? [a, b] : [b, a];
      const res = await graphql<{ store: { id: string }; orders: { data: unknown[] } }>(
        app,
        everything,
        { since: new Date(Date.now() - 86_400_000).toISOString() },
        mine.tenant.token,
      );
      expect(res.errors).toBeUndefined();
      expect(res.data?.store.id).toBe(mine.tenant.storeId);
      expect(res.data?.orders.data).toHaveLength(mine.ids.orders.length);
      expectNothingOf(theirs, res.data, "graphql");

      const lookups = [
        ["order", theirs.sampleOrder],
        ["customer", theirs.sampleCustomer],
        ["product", theirs.sampleProduct],
      ] as const;
      for (const [field, id] of lookups) {
        const one = await graphql(app, `query($id: ID!) { ${field}(id: $id) { id } }`, { id }, mine.tenant.token);
        expect(one.errors?.[0].extensions?.code, field).toBe("NOT_FOUND");
        expectNothingOf(theirs, one, field, id);
      }
      for (const [field, id] of [
        ["orders", theirs.sampleOrder],
        ["customers", theirs.sampleCustomer],
        ["products", theirs.sampleProduct],
      ] as const) {
        const page = await graphql(app, `query($c: String) { ${field}(cursor: $c) { data { id } } }`, { c: id }, mine.tenant.token);
        expect(page.errors?.[0].extensions?.code, field).toBe("INVALID_REQUEST");
      }
    });
  }

  it("an administrator key reads no tenant through the partner fields, and must name the store it reads", async () => {
    for (const field of ["orders { data { id } }", "customers { data { id } }", "products { data { id } }", "categories { id }"]) {
      const res = await graphql(app, `{ ${field} }`);
      expect(res.data).toBeNull();
      expect(res.errors?.[0].extensions?.status).toBe(403);
    }
    const unnamed = await graphql(app, "{ store { id } }");
    expect(unnamed.data).toBeNull();
    expect(unnamed.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", status: 400 });
  });
});
