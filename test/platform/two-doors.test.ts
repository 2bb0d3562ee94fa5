import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder, fakeAddress } from "../helpers/fixtures.js";
import { tableCounter } from "./support.js";

/**
 * One validator per operation input: the same bad value sent through REST and through the route's GraphQL
 * operation is refused by both with 400 INVALID_REQUEST and the same errors[] (field and code), and nothing
 * is written. Each door names a field in its own words: REST by its parameter (`updated_since`, `deliveryId`),
 * GraphQL by its argument (`updatedSince`, `id`); body fields are the same on both.
 */
let app: TestApp;
let t: Tenant;
let productId: string;
let customerId: string;
let orderId: string;
let counts: () => Promise<Record<string, number>>;

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  productId = (await createCatalog(app.services.db, t.storeId)).products[0].id;
  customerId = (await createCustomer(app.services.db, t.storeId, { name: "Rita Alves" })).id;
  orderId = (await createOrder(app.services.db, t.storeId, { status: "PENDING" })).id;
  counts = await tableCounter(app);
});
afterAll(() => app.close());

type Violation = { field: string; code: string };

interface Case {
  name: string;
  rest: () => { method: string; path: string; body?: unknown };
  graphql: () => { query: string; variables: Record<string, unknown> };
  errors: Violation[];
}

const CREATE_ORDER = "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }";
const UPDATE_STATUS = "mutation($id: ID!, $status: OrderStatus!, $reason: String) { updateOrderStatus(id: $id, status: $status, reason: $reason) { id } }";
const CREATE_CUSTOMER = "mutation($input: NewCustomerInput!) { createCustomer(input: $input) { id } }";
const UPDATE_CUSTOMER = "mutation($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { id } }";
const SET_PRODUCT_STATUS = "mutation($id: ID!, $isActive: Boolean!) { setProductStatus(id: $id, isActive: $isActive) { id } }";
const CREATE_WEBHOOK = "mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }";
const UPDATE_WEBHOOK = "mutation($id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { id } }";

const order = (overrides: Record<string, unknown>) => ({
  type: "DELIVERY",
  items: [{ productId, quantity: 1 }],
  deliveryAddress: fakeAddress(),
  ...overrides,
});

/** A write whose body is the GraphQL operation's `input` argument. */
function inputCase(name: string, method: string, path: () => string, query: string, body: () => Record<string, unknown>, errors: Violation[]): Case {
  const id = () => path().split("/")[4];
  return { name, rest: () => ({ method, path: path(), body: body() }), graphql: () => ({ query, variables: { id: id(), input: body() } }), errors };
}

/** A list read: REST query parameters, GraphQL arguments (named in camelCase where REST uses snake_case). */
function listCase(name: string, path: string, field: string, args: Record<string, unknown>, errors: Violation[]): Case {
  const declared = Object.keys(args);
  const types: Record<string, string> = { limit: "Int", cursor: "String", search: "String", endpointId: "ID", eventType: "String" };
  const query = `query(${declared.map((a) => `$${a}: ${types[a]}`).join(", ")}) { ${field}(${declared.map((a) => `${a}: $${a}`).join(", ")}) { data { id } } }`;
  const search = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]));
  return { name, rest: () => ({ method: "GET", path: `${path}?${search}` }), graphql: () => ({ query, variables: args }), errors };
}

const cases: Case[] = [
  inputCase(
    "createOrder: quantities out of range",
    "POST",
    () => "/public/v1/orders",
    CREATE_ORDER,
    () =>
      order({
        items: [
          { productId, quantity: 0 },
          { productId, quantity: 1000, additionals: [{ name: "Bacon", quantity: 100 }] },
        ],
      }),
    [
      { field: "items[0].quantity", code: "OUT_OF_RANGE" },
      { field: "items[1].quantity", code: "OUT_OF_RANGE" },
      { field: "items[1].additionals[0].quantity", code: "OUT_OF_RANGE" },
    ],
  ),
  inputCase(
    "createOrder: no items",
    "POST",
    () => "/public/v1/orders",
    CREATE_ORDER,
    () => order({ items: [] }),
    [{ field: "items", code: "TOO_FEW" }],
  ),
  inputCase(
    "createOrder: payments",
    "POST",
    () => "/public/v1/orders",
    CREATE_ORDER,
    () =>
      order({
        payments: [
          { method: "BITCOIN", value: -1 },
          { method: "PIX", value: 1.234, changeFor: 21_474_836.48 },
        ],
      }),
    [
      { field: "payments[0].method", code: "INVALID_VALUE" },
      { field: "payments[0].value", code: "OUT_OF_RANGE" },
      { field: "payments[1].value", code: "INVALID_VALUE" },
      { field: "payments[1].changeFor", code: "OUT_OF_RANGE" },
    ],
  ),
  inputCase(
    "createOrder: malformed ids, a null where none is allowed",
    "POST",
    () => "/public/v1/orders",
    CREATE_ORDER,
    () => order({ items: [{ productId: "not-a-uuid", quantity: 1 }], customerId: "x", scheduledFor: null }),
    [
      { field: "customerId", code: "INVALID_FORMAT" },
      { field: "items[0].productId", code: "INVALID_FORMAT" },
      { field: "scheduledFor", code: "INVALID_TYPE" },
    ],
  ),
  inputCase(
    "createOrder: new customer, notes and address",
    "POST",
    () => "/public/v1/orders",
    CREATE_ORDER,
    () => order({ customer: { name: "   ", email: "not-an-email" }, notes: "x".repeat(501), deliveryAddress: { ...fakeAddress(), street: "" } }),
    [
      { field: "customer.name", code: "INVALID_FORMAT" },
      { field: "customer.email", code: "INVALID_FORMAT" },
      { field: "deliveryAddress.street", code: "TOO_SHORT" },
      { field: "notes", code: "TOO_LONG" },
    ],
  ),
  {
    name: "updateOrderStatus: CANCELLED without a reason",
    rest: () => ({ method: "PATCH", path: `/public/v1/orders/${orderId}/status`, body: { status: "CANCELLED" } }),
    graphql: () => ({ query: UPDATE_STATUS, variables: { id: orderId, status: "CANCELLED" } }),
    errors: [{ field: "reason", code: "REQUIRED" }],
  },
  {
    name: "updateOrderStatus: CANCELLED with a blank reason",
    rest: () => ({ method: "PATCH", path: `/public/v1/orders/${orderId}/status`, body: { status: "CANCELLED", reason: "   " } }),
    graphql: () => ({ query: UPDATE_STATUS, variables: { id: orderId, status: "CANCELLED", reason: "   " } }),
    errors: [{ field: "reason", code: "INVALID_FORMAT" }],
  },
  {
    name: "updateOrderStatus: a reason too long",
    rest: () => ({ method: "PATCH", path: `/public/v1/orders/${orderId}/status`, body: { status: "CONFIRMED", reason: "x".repeat(501) } }),
    graphql: () => ({ query: UPDATE_STATUS, variables: { id: orderId, status: "CONFIRMED", reason: "x".repeat(501) } }),
    errors: [{ field: "reason", code: "TOO_LONG" }],
  },
  {
    name: "updateOrderStatus: a malformed id",
    rest: () => ({ method: "PATCH", path: "/public/v1/orders/not-a-uuid/status", body: { status: "CONFIRMED" } }),
    graphql: () => ({ query: UPDATE_STATUS, variables: { id: "not-a-uuid", status: "CONFIRMED" } }),
    errors: [{ field: "id", code: "INVALID_FORMAT" }],
  },
  inputCase(
    "createCustomer: blank name, bad phone and email",
    "POST",
    () => "/public/v1/customers",
    CREATE_CUSTOMER,
    () => ({ name: "", phone: "abc", email: "x" }),
    [
      { field: "name", code: "TOO_SHORT" },
      { field: "name", code: "INVALID_FORMAT" },
      { field: "phone", code: "INVALID_FORMAT" },
      { field: "email", code: "INVALID_FORMAT" },
    ],
  ),
  inputCase(
    "createCustomer: name too long",
    "POST",
    () => "/public/v1/customers",
    CREATE_CUSTOMER,
    () => ({ name: "x".repeat(201) }),
    [{ field: "name", code: "TOO_LONG" }],
  ),
  inputCase(
    "updateCustomer: nothing to change",
    "PATCH",
    () => `/public/v1/customers/${customerId}`,
    UPDATE_CUSTOMER,
    () => ({}),
    [{ field: "body", code: "MINPROPERTIES" }],
  ),
  inputCase(
    "updateCustomer: a null name, a bad email",
    "PATCH",
    () => `/public/v1/customers/${customerId}`,
    UPDATE_CUSTOMER,
    () => ({ name: null, email: "@" }),
    [
      { field: "name", code: "INVALID_TYPE" },
      { field: "email", code: "INVALID_FORMAT" },
    ],
  ),
  {
    name: "updateCustomer: a malformed id",
    rest: () => ({ method: "PATCH", path: "/public/v1/customers/123", body: { name: "Ana" } }),
    graphql: () => ({ query: UPDATE_CUSTOMER, variables: { id: "123", input: { name: "Ana" } } }),
    errors: [{ field: "id", code: "INVALID_FORMAT" }],
  },
  {
    name: "setProductStatus: a malformed id",
    rest: () => ({ method: "PATCH", path: "/public/v1/catalog/products/zzz/status", body: { isActive: false } }),
    graphql: () => ({ query: SET_PRODUCT_STATUS, variables: { id: "zzz", isActive: false } }),
    errors: [{ field: "id", code: "INVALID_FORMAT" }],
  },
  inputCase(
    "createWebhookEndpoint: no events",
    "POST",
    () => "/public/v1/webhooks",
    CREATE_WEBHOOK,
    () => ({ url: "https://93.184.216.34/h", events: [] }),
    [{ field: "events", code: "TOO_FEW" }],
  ),
  inputCase(
    "createWebhookEndpoint: unknown event, not a URL",
    "POST",
    () => "/public/v1/webhooks",
    CREATE_WEBHOOK,
    () => ({ url: "not a url", events: ["order.created", "order.exploded"] }),
    [
      { field: "url", code: "INVALID_FORMAT" },
      { field: "events[1]", code: "INVALID_VALUE" },
    ],
  ),
  inputCase(
    "updateWebhookEndpoint: a drill out of range",
    "PATCH",
    () => "/public/v1/webhooks/0b7a3f3e-3c1f-4d8e-9a61-2f4b5c6d7e80",
    UPDATE_WEBHOOK,
    () => ({ drill: { duplicateRate: 1.1, reorderWindowSeconds: 301 } }),
    [
      { field: "drill.duplicateRate", code: "OUT_OF_RANGE" },
      { field: "drill.reorderWindowSeconds", code: "OUT_OF_RANGE" },
    ],
  ),
  inputCase(
    "updateWebhookEndpoint: a drill that changes nothing",
    "PATCH",
    () => "/public/v1/webhooks/0b7a3f3e-3c1f-4d8e-9a61-2f4b5c6d7e80",
    UPDATE_WEBHOOK,
    () => ({ drill: { duplicateRate: 0 } }),
    [{ field: "drill", code: "INVALID_VALUE" }],
  ),
  inputCase(
    "createWebhookEndpoint: URL too long",
    "POST",
    () => "/public/v1/webhooks",
    CREATE_WEBHOOK,
    () => ({ url: `https://93.184.216.34/${"x".repeat(2048)}`, events: ["order.created"] }),
    [{ field: "url", code: "TOO_LONG" }],
  ),
  {
    name: "createSandboxOrder: bad overrides",
    rest: () => ({
      method: "POST",
      path: "/public/v1/sandbox/orders",
      body: { scenario: "pickup", overrides: { items: [], deliveryFee: -0.5, discount: 0.001 } },
    }),
    graphql: () => ({
      query: "mutation($o: SandboxOrderOverrides) { sandboxCreateOrder(scenario: PICKUP, overrides: $o) { id } }",
      variables: { o: { items: [], deliveryFee: -0.5, discount: 0.001 } },
    }),
    errors: [
      { field: "overrides.items", code: "TOO_FEW" },
      { field: "overrides.deliveryFee", code: "OUT_OF_RANGE" },
      { field: "overrides.discount", code: "INVALID_VALUE" },
    ],
  },
  {
    name: "createSandboxOrder: bad simulate",
    rest: () => ({ method: "POST", path: "/public/v1/sandbox/orders", body: { scenario: "pickup", simulate: { until: "READY", stepSeconds: 601 } } }),
    graphql: () => ({
      query: "mutation($s: SandboxSimulation) { sandboxCreateOrder(scenario: PICKUP, simulate: $s) { id } }",
      variables: { s: { until: "READY", stepSeconds: 601 } },
    }),
    errors: [{ field: "simulate.stepSeconds", code: "OUT_OF_RANGE" }],
  },
  listCase("orders: limit 0", "/public/v1/orders", "orders", { limit: 0 }, [{ field: "limit", code: "OUT_OF_RANGE" }]),
  listCase("orders: limit 101", "/public/v1/orders", "orders", { limit: 101 }, [{ field: "limit", code: "OUT_OF_RANGE" }]),
  listCase("orders: a cursor it never returned", "/public/v1/orders", "orders", { cursor: "abc" }, [{ field: "cursor", code: "INVALID_CURSOR" }]),
  listCase("orders: an empty cursor", "/public/v1/orders", "orders", { cursor: "" }, [{ field: "cursor", code: "TOO_SHORT" }]),
  listCase("customers: limit 0, search too long", "/public/v1/customers", "customers", { limit: 0, search: "a".repeat(101) }, [
    { field: "limit", code: "OUT_OF_RANGE" },
    { field: "search", code: "TOO_LONG" },
  ]),
  listCase("products: limit 101", "/public/v1/catalog/products", "products", { limit: 101 }, [{ field: "limit", code: "OUT_OF_RANGE" }]),
  listCase(
    "webhook deliveries: limit, endpointId, eventType",
    "/public/v1/webhooks/deliveries",
    "webhookDeliveries",
    { limit: 0, endpointId: "x", eventType: "order.exploded" },
    [
      { field: "endpointId", code: "INVALID_FORMAT" },
      { field: "eventType", code: "INVALID_VALUE" },
      { field: "limit", code: "OUT_OF_RANGE" },
    ],
  ),
];

const pairs = (errors: unknown): Violation[] => ((errors ?? []) as Violation[]).map(({ field, code }) => ({ field, code }));

describe("both doors answer the same 400 for the same bad value", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const before = await counts();
      const { method, path, body } = c.rest();
      const rest = await call<{ code: string; errors?: Violation[] }>(app, method, path, { token: t.token, body });
      const { query, variables } = c.graphql();
      const gql = await graphql(app, query, variables, t.token);
      expect(rest.status, JSON.stringify(rest.body)).toBe(400);
      expect(rest.body.code).toBe("INVALID_REQUEST");
      expect(gql.errors, JSON.stringify(gql)).toHaveLength(1);
      expect(gql.errors?.[0].extensions?.code, JSON.stringify(gql)).toBe("INVALID_REQUEST");
      expect(pairs(rest.body.errors)).toEqual(c.errors);
      expect(pairs(gql.errors?.[0].extensions?.errors)).toEqual(c.errors);
      expect(await counts()).toEqual(before);
    });
  }
});

describe("values GraphQL's own types refuse", () => {
  const typed: [string, () => { method: string; path: string; body?: unknown }, string, Record<string, unknown>][] = [
    [
      "orders ?status=NOPE",
      () => ({ method: "GET", path: "/public/v1/orders?status=NOPE" }),
      "query($s: OrderStatus) { orders(status: $s) { data { id } } }",
      { s: "NOPE" },
    ],
    [
      "a sandbox order of an unknown scenario",
      () => ({ method: "POST", path: "/public/v1/sandbox/orders", body: { scenario: "nope" } }),
      "mutation($s: SandboxScenario!) { sandboxCreateOrder(scenario: $s) { id } }",
      { s: "NOPE" },
    ],
    [
      "a quantity that is not an integer",
      () => ({ method: "POST", path: "/public/v1/orders", body: order({ items: [{ productId, quantity: 1.5 }] }) }),
      CREATE_ORDER,
      { input: order({ items: [{ productId, quantity: 1.5 }] }) },
    ],
  ];
  for (const [name, rest, query, variables] of typed) {
    it(`${name}: REST 400, GraphQL INVALID_REQUEST before anything runs`, async () => {
      const before = await counts();
      const { method, path, body } = rest();
      const res = await call<{ code: string }>(app, method, path, { token: t.token, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INVALID_REQUEST");
      const gql = await graphql(app, query, variables, t.token);
      expect(new Set(gql.errors?.map((e) => e.extensions?.code)), JSON.stringify(gql)).toEqual(new Set(["INVALID_REQUEST"]));
      expect(await counts()).toEqual(before);
    });
  }

  it("a literal of the wrong type is INVALID_REQUEST too", async () => {
    const gql = await graphql(app, '{ orders(limit: "ten") { data { id } } }', {}, t.token);
    expect(gql.errors?.map((e) => e.extensions?.code)).toEqual(["INVALID_REQUEST"]);
  });
});
