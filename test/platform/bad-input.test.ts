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
