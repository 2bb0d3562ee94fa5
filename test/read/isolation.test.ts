import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { routes } from "../../src/rest/routes.js";
import { randomUUID } from "node:crypto";
import { createAdminKey, createApplication, createGrant } from "../../src/modules/admin/operations.js";
import type { Scope } from "../../src/platform/auth/scopes.js";
import { ADMIN_ROLES } from "../../src/platform/auth/admin-keys.js";
import type { AdminRole, Environment } from "../../src/platform/db/prisma.js";

/**
 * The tenant-isolation matrix: two stores with look-alike data (same customer names, same menu); every read
 * route, list and detail, REST and GraphQL, with every filter. Nothing of the other store may appear in any
 * response, and its ids are NOT_FOUND (or an unknown cursor) rather than readable.
 */

interface Seeded {
  tenant: Tenant;
  ids: { orders: string[]; customers: string[]; products: string[]; categories: string[]; endpoints: string[]; deliveries: string[]; all: string[] };
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
  // One webhook endpoint with one delivery, for Store.webhookEndpoints and Store.webhookDeliveries.
  const application = await db.application.findUniqueOrThrow({ where: { clientId: tenant.clientId } });
  const endpoint = await db.webhookEndpoint.create({
    data: {
      storeId: tenant.storeId,
      applicationId: application.id,
      url: "https://example.com/hooks",
      events: ["store.updated"],
      secretCiphertext: "x",
      secretPrefix: "whsec_x",
    },
  });
  const event = await db.event.create({ data: { storeId: tenant.storeId, type: "store.updated", data: { storeId: tenant.storeId, changed: ["name"] } } });
  const delivery = await db.webhookDelivery.create({
    data: { eventId: event.id, endpointId: endpoint.id, applicationId: application.id, storeId: tenant.storeId, eventType: "store.updated" },
  });
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
    endpoints: [endpoint.id],
    deliveries: [delivery.id],
    all: [] as string[],
  };
  ids.all = [
    tenant.storeId,
    tenant.storeCode,
    application.id,
    ...ids.orders,
    ...ids.customers,
    ...ids.products,
    ...ids.categories,
    ...ids.endpoints,
    ...ids.deliveries,
    event.id,
    ...nested,
  ];
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

/**
 * The reads nested in Store: a partner token reaches them for its own store only, with the root fields' scopes;
 * an administrator of any role names any store. Every nested field is selected, so a new one without its
 * check would show the other store's rows here.
 */
describe("GraphQL: the reads nested in Store", () => {
  const STORE_READS = `
    id code
    orders(limit: 100) { data { id items { id productId } customer { id } } pagination { hasMore nextCursor } }
    order(id: $order) { id }
    customers(limit: 100) { data { id email deliveryAddresses { id } contactSummary { orderCount } orders(limit: 20) { id } } }
    products(limit: 100) { data { id variations { id } additionals { id } } }
    categories { id products { id } }
    webhookEndpoints { id }
    webhookDeliveries { data { id endpointId } }`;

  interface StoreReads {
    id: string;
    code: string;
    orders: { data: { id: string }[]; pagination: { hasMore: boolean } };
    order: { id: string };
    customers: { data: { id: string }[] };
    products: { data: { id: string }[] };
    categories: { id: string }[];
    webhookEndpoints: { id: string }[];
    webhookDeliveries: { data: { id: string }[] };
  }

  const sorted = (rows: { id: string }[] | undefined) => (rows ?? []).map((r) => r.id).sort();

  /** The store's own rows, all of them, and nothing of `other`'s. */
  function expectStore(store: StoreReads | undefined, mine: Seeded, other: Seeded, where: string): void {
    expect(store?.id, where).toBe(mine.tenant.storeId);
    expect(store?.code, where).toBe(mine.tenant.storeCode);
    expect(sorted(store?.orders.data), where).toEqual([...mine.ids.orders].sort());
    expect(store?.orders.pagination.hasMore, where).toBe(false);
    expect(store?.order.id, where).toBe(mine.sampleOrder);
    expect(sorted(store?.customers.data), where).toEqual([...mine.ids.customers].sort());
    expect(sorted(store?.products.data), where).toEqual([...mine.ids.products].sort());
    expect(sorted(store?.categories), where).toEqual([...mine.ids.categories].sort());
    expect(sorted(store?.webhookEndpoints), where).toEqual(mine.ids.endpoints);
    expect(sorted(store?.webhookDeliveries.data), where).toEqual(mine.ids.deliveries);
    expectNothingOf(other, store, where);
  }

  const code = (res: Awaited<ReturnType<typeof graphql>>) => res.errors?.[0]?.extensions?.code;

  for (const me of ["A", "B"] as const) {
    it(`${me}'s token reads its own store's fields, by no argument, its id or its code, and no other store`, async () => {
      const [mine, theirs] = me === "A" ? [a, b] : [b, a];
      const token = mine.tenant.token;
      for (const [how, args] of [
        ["no argument", ""],
        ["its id", `(id: "${mine.tenant.storeId}")`],
        ["its code", `(code: "${mine.tenant.storeCode}")`],
      ] as const) {
        const res = await graphql<{ store: StoreReads }>(app, `query($order: ID!) { store${args} { ${STORE_READS} } }`, { order: mine.sampleOrder }, token);
        expect(res.errors, how).toBeUndefined();
        expectStore(res.data?.store, mine, theirs, how);
      }

      // The other store, however named, is NOT_FOUND, and nothing of it is answered.
      for (const args of [
        `(id: "${theirs.tenant.storeId}")`,
        `(code: "${theirs.tenant.storeCode}")`,
        `(id: "${mine.tenant.storeId}", code: "${theirs.tenant.storeCode}")`,
      ]) {
        const query = `query($order: ID!) { store${args} { ${STORE_READS} } }`;
        const res = await graphql(app, query, { order: mine.sampleOrder }, token);
        expect(res.data, args).toBeNull();
        expect(code(res), args).toBe("NOT_FOUND");
        expectNothingOf(theirs, res, args, args);
      }
      // Its ids inside the own store: an order is NOT_FOUND, a cursor unknown.
      const order = await graphql(app, `query($id: ID!) { store { order(id: $id) { id } } }`, { id: theirs.sampleOrder }, token);
      expect(code(order)).toBe("NOT_FOUND");
      for (const [field, cursor] of [
        ["orders", theirs.sampleOrder],
        ["customers", theirs.sampleCustomer],
        ["products", theirs.sampleProduct],
        ["webhookDeliveries", theirs.ids.deliveries[0]],
      ] as const) {
        const page = await graphql(app, `query($c: String) { store { ${field}(cursor: $c) { data { id } } } }`, { c: cursor }, token);
        expect(code(page), field).toBe("INVALID_REQUEST");
      }
      // The administrators' filter is not a partner's.
      const filtered = await graphql(app, `query($id: ID) { store { webhookEndpoints(applicationId: $id) { id } } }`, { id: theirs.ids.endpoints[0] }, token);
      expect(code(filtered)).toBe("FORBIDDEN");
    });
  }

  it("each nested field needs the scope of its root field", async () => {
    const needs: Record<string, Scope> = {
      "orders { data { id } }": "orders:read",
      [`order(id: "${a.sampleOrder}") { id }`]: "orders:read",
      "customers { data { id } }": "customers:read",
      "products { data { id } }": "catalog:read",
      "categories { id }": "catalog:read",
      "webhookEndpoints { id }": "webhooks:manage",
      "webhookDeliveries { data { id } }": "webhooks:manage",
    };
    // A token of store A with merchant:read alone reads the store's profile and none of these.
    const { environment } = await db().application.findUniqueOrThrow({ where: { clientId: a.tenant.clientId }, select: { environment: true } });
    const narrow = await tokenFor(a, ["merchant:read"], environment);
    expect((await graphql(app, "{ store { id } }", {}, narrow)).errors).toBeUndefined();
    for (const [field, scope] of Object.entries(needs)) {
      const res = await graphql(app, `{ store { ${field} } }`, {}, narrow);
      expect(code(res), field).toBe("INSUFFICIENT_SCOPE");
      expect(res.errors?.[0].message, field).toContain(scope);
      expectNothingOf(a, res.data, field);
      // With every other scope but that one, still refused; with it, answered.
      const others = await tokenFor(a, ["merchant:read", ...ALL_READ_SCOPES.filter((s) => s !== scope)], environment);
      expect(code(await graphql(app, `{ store { ${field} } }`, {}, others)), field).toBe("INSUFFICIENT_SCOPE");
      const granted = await tokenFor(a, ["merchant:read", scope], environment);
      expect((await graphql(app, `{ store { ${field} } }`, {}, granted)).errors, field).toBeUndefined();
    }
    // Without merchant:read the store itself is refused, whatever is nested in it.
    const ordersOnly = await tokenFor(a, ["orders:read"], environment);
    const res = await graphql(app, "{ store { orders { data { id } } } }", {}, ordersOnly);
    expect(code(res)).toBe("INSUFFICIENT_SCOPE");
    expect(res.errors?.[0].message).toContain("merchant:read");
  });

  for (const role of ADMIN_ROLES) {
    it(`a ${role} admin key reads any store it names, and an unknown or unnamed store is refused`, async () => {
      const key = await adminKey(role);
      for (const [mine, theirs, args] of [
        [a, b, `(id: "${a.tenant.storeId}")`],
        [b, a, `(code: "${b.tenant.storeCode}")`],
      ] as const) {
        const res = await graphql<{ store: StoreReads }>(app, `query($order: ID!) { store${args} { ${STORE_READS} } }`, { order: mine.sampleOrder }, key);
        expect(res.errors, args).toBeUndefined();
        expectStore(res.data?.store, mine, theirs, args);
        // Another store's order or cursor under this one is not this store's.
        const order = await graphql(app, `query($id: ID!) { store${args} { order(id: $id) { id } } }`, { id: theirs.sampleOrder }, key);
        expect(code(order), args).toBe("NOT_FOUND");
        const page = await graphql(app, `query($c: String) { store${args} { orders(cursor: $c) { data { id } } } }`, { c: theirs.sampleOrder }, key);
        expect(code(page), args).toBe("INVALID_REQUEST");
      }
      // From the stores page to each store's orders, in one request.
      const all = await graphql<{ stores: { data: { id: string; orders: { data: { id: string }[] } }[] } }>(
        app,
        "{ stores(limit: 100) { data { id orders(limit: 100) { data { id } } } } }",
        {},
        key,
      );
      expect(all.errors).toBeUndefined();
      for (const seeded of [a, b]) {
        const store = all.data?.stores.data.find((s) => s.id === seeded.tenant.storeId);
        expect(sorted(store?.orders.data)).toEqual([...seeded.ids.orders].sort());
      }

      expect(code(await graphql(app, `{ store(id: "${randomUUID()}") { id } }`, {}, key))).toBe("NOT_FOUND");
      expect(code(await graphql(app, `{ store(code: "NOSUCHSTORE") { id } }`, {}, key))).toBe("NOT_FOUND");
      expect(code(await graphql(app, `{ store(id: "${a.tenant.storeId}", code: "${b.tenant.storeCode}") { id } }`, {}, key))).toBe("NOT_FOUND");
      expect(code(await graphql(app, `{ store(id: "not-a-uuid") { id } }`, {}, key))).toBe("INVALID_REQUEST");
      const unnamed = await graphql(app, "{ store { id } }", {}, key);
      expect(code(unnamed)).toBe("INVALID_REQUEST");
      expect(unnamed.errors?.[0].message).toMatch(/id or its code/);
    });
  }

  it("stores and applications are pages of the same keyset pagination as the REST lists", async () => {
    const key = await adminKey("VIEWER");
    for (const [field, rows] of [
      ["stores", (await db().store.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true } })).map((r) => r.id)],
      ["applications", (await db().application.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true } })).map((r) => r.id)],
    ] as const) {
      expect(rows.length, field).toBeGreaterThan(1);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Awaited<ReturnType<typeof graphql<Record<string, Page>>>> = await graphql<Record<string, Page>>(
          app,
          `query($c: String) { ${field}(limit: 1, cursor: $c) { data { id } pagination { hasMore cursor nextCursor } } }`,
          { c: cursor },
          key,
        );
        expect(res.errors, field).toBeUndefined();
        const page = res.data?.[field];
        seen.push(...(page?.data.map((r) => r.id) ?? []));
        cursor = page?.pagination.nextCursor ?? null;
        expect(page?.pagination.hasMore).toBe(cursor !== null);
      } while (cursor);
      expect(seen, field).toEqual(rows);
      for (const bad of [`${field}(limit: 0) { data { id } }`, `${field}(limit: 101) { data { id } }`, `${field}(cursor: "${randomUUID()}") { data { id } }`]) {
        expect(code(await graphql(app, `{ ${bad} }`, {}, key)), bad).toBe("INVALID_REQUEST");
      }
    }
    // The environment filter still narrows the stores.
    const production = await graphql<{ stores: Page }>(app, "{ stores(environment: PRODUCTION, limit: 100) { data { id } } }", {}, key);
    expect(production.data?.stores.data).toEqual([]);
    // A partner token lists neither.
    for (const field of ["stores", "applications"]) expect(code(await graphql(app, `{ ${field} { data { id } } }`, {}, a.tenant.token))).toBe("FORBIDDEN");
  });
});

interface Page {
  data: { id: string }[];
  pagination: { hasMore: boolean; cursor: string | null; nextCursor: string | null };
}

const ALL_READ_SCOPES: Scope[] = ["orders:read", "customers:read", "catalog:read", "webhooks:manage"];

const db = () => app.services.db;

const adminKeys = new Map<AdminRole, string>();
async function adminKey(role: AdminRole): Promise<string> {
  let key = adminKeys.get(role);
  if (!key) {
    key = (await createAdminKey(db(), { name: `isolation ${role}`, role })).key;
    adminKeys.set(role, key);
  }
  return key;
}

/** A token for `seeded`'s store from a new Application holding only `scopes`. */
async function tokenFor(seeded: Seeded, scopes: Scope[], environment: Environment): Promise<string> {
  const { application, clientSecret } = await createApplication(db(), {
    name: `scopes ${scopes.join(" ")}`,
    environment,
    scopes,
    apiVersion: FIRST_API_VERSION,
  });
  await createGrant(db(), { clientId: application.clientId, storeId: seeded.tenant.storeId });
  return getToken(app, application.clientId, clientSecret);
}
