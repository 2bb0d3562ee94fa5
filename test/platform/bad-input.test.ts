import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder, fakeAddress, type FixtureProduct } from "../helpers/fixtures.js";
import { expectProblem, tableCounter } from "./support.js";

/**
 * Input a client can send that PostgreSQL cannot store or the order's integer cents cannot hold: every door
 * answers a 4xx problem naming the field as the client sent it, and nothing is written.
 */
let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];
let customerId: string;
let orderId: string;
let counts: () => Promise<Record<string, number>>;

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
  customerId = (await createCustomer(app.services.db, t.storeId, { name: "Rita Alves", phone: "11 91111-2222" })).id;
  orderId = (await createOrder(app.services.db, t.storeId, { status: "PENDING" })).id;
  counts = await tableCounter(app);
});
afterAll(() => app.close());

/** The largest amount an order field holds: int4 cents. */
const MAX_AMOUNT = 21_474_836.47;

function order(overrides: Record<string, unknown> = {}) {
  return { type: "DELIVERY", items: [{ productId: products[0].id, quantity: 1 }], deliveryAddress: fakeAddress(), ...overrides };
}

/** Sends a write that must be refused, and checks that it changed no table and neither the customer nor the order. */
async function refused(method: string, path: string, body: unknown, status: number, code: string, field: string) {
  const before = await counts();
  const rows = () =>
    Promise.all([
      app.services.db.customer.findUniqueOrThrow({ where: { id: customerId } }),
      app.services.db.order.findUniqueOrThrow({ where: { id: orderId } }),
    ]);
  const rowsBefore = await rows();
  const res = await call(app, method, path, { token: t.token, body });
  expectProblem(res, status, code, field);
  expect(await counts()).toEqual(before);
  expect(await rows()).toEqual(rowsBefore);
  return res;
}

describe("strings PostgreSQL cannot store (NUL, lone surrogates)", () => {
  for (const [label, bad] of [
    ["NUL", "Ana\u0000Bia"],
    ["a lone surrogate", "Ana\ud800Bia"],
  ] as const) {
    const cases: [string, string, () => unknown, string][] = [
      ["POST", "/public/v1/customers", () => ({ name: bad }), "name"],
      ["POST", "/public/v1/customers", () => ({ name: "Ana", phone: `11 9${bad}` }), "phone"],
      ["PATCH", "/public/v1/customers/:customer", () => ({ name: bad }), "name"],
      ["POST", "/public/v1/orders", () => order({ customer: { name: bad } }), "customer.name"],
      ["POST", "/public/v1/orders", () => order({ notes: bad }), "notes"],
      ["POST", "/public/v1/orders", () => order({ deliveryAddress: { ...fakeAddress(), street: bad } }), "deliveryAddress.street"],
      ["POST", "/public/v1/orders", () => order({ items: [{ productId: products[0].id, quantity: 1, notes: bad }] }), "items[0].notes"],
      ["PATCH", "/public/v1/orders/:order/status", () => ({ status: "CANCELLED", reason: bad }), "reason"],
    ];
    for (const [method, template, body, field] of cases) {
      it(`${label} in ${field} of ${method} ${template} → 400 naming it, nothing written`, async () => {
        const path = template.replace(":customer", customerId).replace(":order", orderId);
        await refused(method, path, body(), 400, "INVALID_REQUEST", field);
      });
    }
  }

  it("?search=%00 → 400 naming search", async () => {
    expectProblem(await call(app, "GET", "/public/v1/customers?search=ab%00", { token: t.token }), 400, "INVALID_REQUEST", "search");
  });

  it("GraphQL refuses them too, in variables and in literals, naming the argument", async () => {
    const before = await counts();
    const created = await graphql(
      app,
      "mutation($input: NewCustomerInput!) { createCustomer(input: $input) { id } }",
      { input: { name: "Ana\u0000" } },
      t.token,
    );
    expect(created.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "input.name" }] });
    const literal = await graphql(app, 'mutation { createCustomer(input: { name: "Ana", email: "a\\u0000@b.co" }) { id } }', {}, t.token);
    expect(literal.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "input.email" }] });
    const search = await graphql(app, '{ customers(search: "ab\\u0000") { data { id } } }', {}, t.token);
    expect(search.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "search" }] });
    const surrogate = await graphql(app, "query($q: String) { customers(search: $q) { data { id } } }", { q: "ab\ud800" }, t.token);
    expect(surrogate.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "q" }] });
    expect(await counts()).toEqual(before);
  });
});

describe("dates outside years 1 to 9999", () => {
  for (const list of ["orders", "customers"]) {
    it(`GET /public/v1/${list}?updated_since=0000-… → 400 naming updated_since`, async () => {
      const res = await call(app, "GET", `/public/v1/${list}?updated_since=0000-01-01T00:00:00.000Z`, { token: t.token });
      expectProblem(res, 400, "INVALID_REQUEST", "updated_since");
    });
  }

  it("scheduledFor in year 0000 → 400 naming scheduledFor, nothing written", async () => {
    await refused("POST", "/public/v1/orders", order({ scheduledFor: "0000-06-01T12:00:00.000Z" }), 400, "INVALID_REQUEST", "scheduledFor");
  });

  it("GraphQL: year 0000 and +010000 are refused before anything runs", async () => {
    const before = await counts();
    for (const at of ["0000-06-01T12:00:00.000Z", "+010000-01-01T00:00:00.000Z"]) {
      const res = await graphql(app, "query($at: DateTime) { orders(updatedSince: $at) { data { id } } }", { at }, t.token);
      expect(res.errors?.[0].message).toMatch(/years 1 to 9999/);
      const created = await graphql(
        app,
        "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }",
        { input: { ...order(), scheduledFor: at } },
        t.token,
      );
      expect(created.errors?.[0].message).toMatch(/input\.scheduledFor.*years 1 to 9999/);
    }
    expect(await counts()).toEqual(before);
  });
});

describe("amounts and totals beyond what an order stores", () => {
  /** 50 of the product's dearest additional, 99 each: a unit of almost R$ 45,000. */
  const loaded = (quantity: number) => {
    const extra = [...products[0].additionals].sort((a, b) => b.priceCents - a.priceCents)[0];
    return { productId: products[0].id, quantity, additionals: Array.from({ length: 50 }, () => ({ name: extra.name, quantity: 99 })) };
  };

  it("one item whose total overflows → 422 naming its quantity, nothing written", async () => {
    await refused("POST", "/public/v1/orders", order({ items: [loaded(999)] }), 422, "UNPROCESSABLE_ENTITY", "items[0].quantity");
  });

  it("items that each fit but whose sum overflows → 422 naming the item that crosses the limit", async () => {
    await refused("POST", "/public/v1/orders", order({ items: [loaded(400), loaded(1), loaded(400)] }), 422, "UNPROCESSABLE_ENTITY", "items[2].quantity");
  });

  it("a CASH changeFor or a payment value above the largest amount → 400 naming it; the largest itself is accepted", async () => {
    const price = products[0].priceCents / 100;
    const pay = (p: Record<string, unknown>) => order({ type: "PICKUP", deliveryAddress: undefined, payments: [{ method: "CASH", value: price, ...p }] });
    await refused("POST", "/public/v1/orders", pay({ changeFor: MAX_AMOUNT + 0.01 }), 400, "INVALID_REQUEST", "payments[0].changeFor");
    await refused("POST", "/public/v1/orders", pay({ value: 1e300 }), 400, "INVALID_REQUEST", "payments[0].value");
    const res = await call<{ payments: { changeFor: number }[] }>(app, "POST", "/public/v1/orders", { token: t.token, body: pay({ changeFor: MAX_AMOUNT }) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.payments[0].changeFor).toBe(MAX_AMOUNT);
  });

  it("GraphQL gives the same answers", async () => {
    const before = await counts();
    const create = (input: Record<string, unknown>) =>
      graphql(app, "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }", { input }, t.token);
    const overflow = await create(order({ items: [loaded(999)] }));
    expect(overflow.errors?.[0].extensions).toMatchObject({ code: "UNPROCESSABLE_ENTITY", errors: [{ field: "items[0].quantity" }] });
    const change = await create(
      order({ type: "PICKUP", deliveryAddress: undefined, payments: [{ method: "CASH", value: 45.9, changeFor: MAX_AMOUNT + 0.01 }] }),
    );
    expect(change.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "payments[0].changeFor" }] });
    expect(await counts()).toEqual(before);
  });
});

describe("query parameters are single-valued", () => {
  const cases: [string, string, string][] = [
    ["GET", "/public/v1/orders?limit=1&limit=2", "limit"],
    ["GET", "/public/v1/customers?search=ana&limit=5&search=bia", "search"],
    ["GET", "/public/v1/webhooks/deliveries?status=FAILED&status=PENDING", "status"],
    ["GET", "/public/v1/store?x=1&x=1", "x"],
  ];
  for (const [method, path, field] of cases) {
    it(`${method} ${path} → 400 naming ${field}`, async () => {
      expectProblem(await call(app, method, path, { token: t.token }), 400, "INVALID_REQUEST", field);
    });
  }

  it("a write with a repeated parameter is refused before it runs", async () => {
    await refused("POST", "/public/v1/customers?a=1&a=2", { name: "Duplicada" }, 400, "INVALID_REQUEST", "a");
  });
});

describe("the token endpoint and credentials it cannot look up", () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  const token = (headers: Record<string, string>, body: Record<string, string>) =>
    call(app, "POST", "/partner/auth/token", {
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      rawBody: new URLSearchParams(body).toString(),
    });

  it("a malformed percent-escape in HTTP Basic credentials → 401 INVALID_CLIENT", async () => {
    for (const [id, secret] of [
      ["%zz", "x"],
      [t.clientId, "%E0%A4%A"],
      ["%", "%"],
    ]) {
      expectProblem(await token({ authorization: basic(id, secret) }, { grant_type: "client_credentials" }), 401, "INVALID_CLIENT");
    }
  });

  it("a client_id with a NUL → 401 INVALID_CLIENT, in Basic credentials or in the body", async () => {
    expectProblem(await token({ authorization: basic("%00abc", "x") }, { grant_type: "client_credentials" }), 401, "INVALID_CLIENT");
    expectProblem(await token({}, { grant_type: "client_credentials", client_id: "abc\u0000", client_secret: "x" }), 401, "INVALID_CLIENT");
  });
});

/** `depth` arrays nested in one another around `inner`: `[[[inner]]]`. */
const nested = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;

describe("JSON nested deeper than JSON_MAX_DEPTH (32)", () => {
  it("a 3,000-deep array anywhere in a REST body → 400 naming the limit, nothing written (with an Idempotency-Key too)", async () => {
    const before = await counts();
    for (const [rawBody, headers] of [
      [nested(3000), {}],
      [`{"name":"Deep","phone":${nested(3000, '"1"')}}`, {}],
      [`{"name":"Deep","unknown":${nested(3000)}}`, { "idempotency-key": crypto.randomUUID() }],
    ] as const) {
      const res = await call<{ detail: string }>(app, "POST", "/public/v1/customers", {
        token: t.token,
        rawBody,
        headers: { "content-type": "application/json", ...headers },
      });
      expectProblem(res, 400, "INVALID_REQUEST", "body");
      expect(res.body.detail).toMatch(/32 levels/);
    }
    expect(await counts()).toEqual(before);
  });

  it("32 levels are accepted, 33 are not", async () => {
    // The body object is the first level; an undeclared field is dropped once the body is parsed.
    const ok = await call(app, "POST", "/public/v1/customers", {
      token: t.token,
      rawBody: `{"name":"Thirty Two","x":${nested(31)}}`,
      headers: { "content-type": "application/json" },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const deep = await call(app, "POST", "/public/v1/customers", {
      token: t.token,
      rawBody: `{"name":"Thirty Three","x":${nested(32)}}`,
      headers: { "content-type": "application/json" },
    });
    expectProblem(deep, 400, "INVALID_REQUEST", "body");
  });

  it("brackets inside strings do not count, escaped quotes and backslashes included", async () => {
    for (const name of [`Colchete ${"[{".repeat(50)}`, `Aspas \\" ${"[".repeat(40)} \\\\" ${"{".repeat(40)}`]) {
      const res = await call(app, "POST", "/public/v1/customers", { token: t.token, body: { name } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
  });

  it("the token endpoint refuses it too", async () => {
    const res = await call(app, "POST", "/partner/auth/token", {
      rawBody: `{"grant_type":"client_credentials","client_id":${nested(3000, '"x"')}}`,
      headers: { "content-type": "application/json" },
    });
    expectProblem(res, 400, "INVALID_REQUEST", "body");
  });

  it("GraphQL variables in a POST body or a GET query string, and literal arguments → INVALID_REQUEST, nothing written", async () => {
    const before = await counts();
    const mutation = "mutation($input: NewCustomerInput!) { createCustomer(input: $input) { id } }";
    const post = await call<{ detail: string }>(app, "POST", "/graphql", {
      token: t.token,
      rawBody: `{"query":${JSON.stringify(mutation)},"variables":{"input":{"name":"Deep","phone":${nested(3000, '"1"')}}}}`,
      headers: { "content-type": "application/json" },
    });
    expectProblem(post, 400, "INVALID_REQUEST", "body");
    const query = "query($q: String) { customers(search: $q) { data { id } } }";
    const get = await call(app, "GET", `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(`{"q":${nested(1000, '"a"')}}`)}`, {
      token: t.token,
      headers: { accept: "application/json" },
    });
    expectProblem(get, 400, "INVALID_REQUEST", "variables");
    const literal = await graphql(app, `mutation { updateStore(id: "${t.storeId}", input: { publicSettings: ${nested(40)} }) { id } }`);
    expect(literal.errors?.[0].extensions, JSON.stringify(literal)).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "input" }] });
    expect(await counts()).toEqual(before);
  });
});

describe("errors speak plainly", () => {
  it("curl's default form body where JSON is expected → 415 UNSUPPORTED_MEDIA_TYPE, nothing written", async () => {
    const before = await counts();
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const res = await call<{ detail: string }>(app, "POST", "/public/v1/customers", { token: t.token, rawBody: '{"name":"Zed"}', headers: form });
    expectProblem(res, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(res.body.detail).toMatch(/application\/json/);
    expectProblem(await call(app, "POST", "/public/v1/sandbox/seed", { token: t.token, rawBody: "a=1", headers: form }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const gql = await call(app, "POST", "/graphql", { token: t.token, rawBody: "query=%7B%20store%20%7B%20id%20%7D%20%7D", headers: form });
    expectProblem(gql, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(await counts()).toEqual(before);
  });

  /** The single violation a bad body gets, through REST and through GraphQL with the same input. */
  async function violation(method: string, path: string, body: unknown) {
    const res = await call<{ errors: Record<string, unknown>[]; detail: string }>(app, method, path, { token: t.token, body });
    expectProblem(res, 400, "INVALID_REQUEST");
    return res.body;
  }

  const VALIDATOR_WORDING =
    /must have required property|must be equal to one of the allowed values|must match (pattern|format)|must NOT|must be [<>]=|must be (string|integer|number|boolean|object|array|null)\b/;

  const cases: [string, string, string, () => unknown, Record<string, unknown>][] = [
    ["required", "POST", "/public/v1/customers", () => ({}), { field: "name", code: "REQUIRED", message: "`name` is required" }],
    ["type", "POST", "/public/v1/customers", () => ({ name: 5 }), { field: "name", code: "INVALID_TYPE", message: "`name` must be a string" }],
    [
      "type, nullable",
      "POST",
      "/public/v1/customers",
      () => ({ name: "Ana", phone: 5 }),
      { field: "phone", code: "INVALID_TYPE", message: "`phone` must be a string or null" },
    ],
    [
      "enum",
      "POST",
      "/public/v1/orders",
      () => order({ type: "DINE_IN" }),
      { field: "type", code: "INVALID_VALUE", message: "`type` must be one of: DELIVERY, PICKUP", allowed: ["DELIVERY", "PICKUP"] },
    ],
    [
      "maximum",
      "POST",
      "/public/v1/orders",
      () => order({ items: [{ productId: products[0].id, quantity: 1 }, {}, {}, { productId: products[0].id, quantity: 1000 }] }),
      { field: "items[3].quantity", code: "OUT_OF_RANGE", message: "`items[3].quantity` must be at most 999" },
    ],
    [
      "minimum",
      "POST",
      "/public/v1/orders",
      () => order({ items: [{ productId: products[0].id, quantity: 0 }] }),
      { field: "items[0].quantity", message: "`items[0].quantity` must be at least 1" },
    ],
    ["minLength", "POST", "/public/v1/customers", () => ({ name: "" }), { field: "name", code: "TOO_SHORT", message: "`name` must not be empty" }],
    [
      "maxLength",
      "POST",
      "/public/v1/customers",
      () => ({ name: "x".repeat(201) }),
      { field: "name", code: "TOO_LONG", message: "`name` must be at most 200 characters long" },
    ],
    ["pattern", "POST", "/public/v1/customers", () => ({ name: "   " }), { field: "name", code: "INVALID_FORMAT", message: "`name` must not be blank" }],
    [
      "format",
      "POST",
      "/public/v1/customers",
      () => ({ name: "Ana", email: "x" }),
      { field: "email", code: "INVALID_FORMAT", message: "`email` must be an email address" },
    ],
    [
      "format uuid",
      "POST",
      "/public/v1/orders",
      () => order({ customerId: "x" }),
      { field: "customerId", code: "INVALID_FORMAT", message: "`customerId` must be a uuid" },
    ],
    [
      "multipleOf",
      "POST",
      "/public/v1/orders",
      () => order({ payments: [{ method: "PIX", value: 1.234 }] }),
      { field: "payments[0].value", message: "`payments[0].value` must have at most 2 decimals" },
    ],
    ["minItems", "POST", "/public/v1/orders", () => order({ items: [] }), { field: "items", code: "TOO_FEW", message: "`items` must have at least 1 item" }],
    [
      "maxItems",
      "POST",
      "/public/v1/orders",
      () => order({ items: Array.from({ length: 101 }, () => ({ productId: products[0].id, quantity: 1 })) }),
      { field: "items", code: "TOO_MANY", message: "`items` must have at most 100 items" },
    ],
    [
      "minProperties",
      "PATCH",
      "/public/v1/customers/:customer",
      () => ({}),
      { field: "body", message: "the body must set at least one of: name, phone, email" },
    ],
    [
      "additionalProperties",
      "POST",
      "/public/v1/webhooks",
      () => ({ url: "https://93.184.216.34/h", events: ["order.created"], secret: "x" }),
      { field: "secret", code: "UNKNOWN_FIELD", message: "`secret` is not a field of this body" },
    ],
    [
      "the status change's discriminator: an unknown status",
      "PATCH",
      "/public/v1/orders/:order/status",
      () => ({ status: "LOST" }),
      {
        field: "status",
        code: "INVALID_VALUE",
        message: "`status` must be one of: PENDING, CONFIRMED, PREPARING, READY, DISPATCHED, DELIVERED, CANCELLED",
        allowed: ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"],
      },
    ],
    [
      "the status change's discriminator: no status",
      "PATCH",
      "/public/v1/orders/:order/status",
      () => ({}),
      { field: "status", code: "REQUIRED", message: "`status` is required" },
    ],
    [
      "the status change's discriminator: not a string",
      "PATCH",
      "/public/v1/orders/:order/status",
      () => ({ status: 1 }),
      { field: "status", code: "INVALID_TYPE", message: "`status` must be a string" },
    ],
    [
      "the status change's branch",
      "PATCH",
      "/public/v1/orders/:order/status",
      () => ({ status: "CANCELLED" }),
      { field: "reason", code: "REQUIRED", message: "`reason` is required" },
    ],
  ];
  for (const [keyword, method, template, body, expected] of cases) {
    it(`${keyword}: ${JSON.stringify(expected.message)}`, async () => {
      const path = template.replace(":customer", customerId).replace(":order", orderId);
      const problem = await violation(method, path, body());
      const found = problem.errors.find((e) => e.field === expected.field);
      expect(found, JSON.stringify(problem.errors)).toMatchObject(expected);
      expect(problem.detail).toContain(String(expected.message));
      for (const e of problem.errors) expect(String(e.message)).not.toMatch(VALIDATOR_WORDING);
    });
  }

  it("query parameters and path parameters speak the same way", async () => {
    const list = await call<{ errors: Record<string, unknown>[] }>(app, "GET", "/public/v1/orders?status=LOST&limit=101", { token: t.token });
    expectProblem(list, 400, "INVALID_REQUEST");
    expect(list.body.errors).toEqual([
      { field: "limit", code: "OUT_OF_RANGE", message: "`limit` must be at most 100" },
      expect.objectContaining({ field: "status", code: "INVALID_VALUE", allowed: expect.arrayContaining(["PENDING", "CANCELLED"]) }),
    ]);
    const id = await call<{ errors: Record<string, unknown>[] }>(app, "GET", "/public/v1/orders/nope", { token: t.token });
    expect(id.body.errors).toEqual([{ field: "id", code: "INVALID_FORMAT", message: "`id` must be a uuid" }]);
    const after = await call<{ errors: Record<string, unknown>[] }>(app, "GET", "/public/v1/events?after=x", { token: t.token });
    expect(after.body.errors).toEqual([{ field: "after", code: "INVALID_FORMAT", message: "`after` must be a sequence number (1 to 16 digits)" }]);
  });

  it("GraphQL answers the same violations, allowed values included", async () => {
    const res = await graphql(app, "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }", { input: order({ items: [] }) }, t.token);
    expect(res.errors?.[0].extensions?.errors).toEqual([{ field: "items", code: "TOO_FEW", message: "`items` must have at least 1 item" }]);
    const hooks = await graphql(
      app,
      "mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }",
      { input: { url: "https://93.184.216.34/h", events: ["order.exploded"] } },
      t.token,
    );
    expect(hooks.errors?.[0].extensions?.errors).toEqual([
      expect.objectContaining({ field: "events[0]", code: "INVALID_VALUE", allowed: expect.arrayContaining(["order.created", "*"]) }),
    ]);
  });
});
