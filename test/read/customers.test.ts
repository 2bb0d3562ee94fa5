import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCustomer, createOrder, fakeAddress } from "../helpers/fixtures.js";
import { ISO_MS, expectProblem, expectResponseSchema, walk, type PageBody } from "./support.js";

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { scopes: ["customers:read"] });
});
afterAll(() => app.close());

type CustomerBody = { id: string; name: string; phone: string | null; email: string | null; updatedAt: string };

describe("customer fields", () => {
  it("list: id, name, phone, email and times; detail adds delivery addresses and a contact summary", async () => {
    const t = await createTenant(app, { scopes: ["customers:read"] });
    const home = { ...fakeAddress(), complement: "Casa 2" };
    const work = { ...fakeAddress(), complement: null };
    const customer = await createCustomer(app.services.db, t.storeId, {
      name: "Beatriz Nogueira",
      phone: "+55 11 91234-5678",
      email: "beatriz@example.com",
      addresses: [home, work],
      createdAt: new Date("2024-12-01T09:00:00.000Z"),
    });
    await createCustomer(app.services.db, t.storeId, { name: "Caio Teixeira", phone: null, email: null, addresses: [] });
    for (const day of ["2025-01-05", "2025-02-10", "2025-01-20"]) {
      await createOrder(app.services.db, t.storeId, { customerId: customer.id, createdAt: new Date(`${day}T19:45:00.000Z`) });
    }

    const list = await call<PageBody<CustomerBody>>(app, "GET", "/public/v1/customers", { token: t.token });
    expect(list.status).toBe(200);
    expectResponseSchema("listCustomers", list.body);
    expect(list.body.data.map((c) => c.name)).toEqual(["Beatriz Nogueira", "Caio Teixeira"]);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(["createdAt", "email", "id", "name", "phone", "updatedAt"]);
    expect(list.body.data[1]).toMatchObject({ phone: null, email: null });

    const detail = await call<Record<string, unknown>>(app, "GET", `/public/v1/customers/${customer.id}`, { token: t.token });
    expect(detail.status).toBe(200);
    expectResponseSchema("getCustomerById", detail.body);
    expect(detail.body).toMatchObject({
      id: customer.id,
      name: "Beatriz Nogueira",
      phone: "+55 11 91234-5678",
      email: "beatriz@example.com",
      createdAt: "2024-12-01T09:00:00.000Z",
      contactSummary: { orderCount: 3, firstOrderAt: "2025-01-05T19:45:00.000Z", lastOrderAt: "2025-02-10T19:45:00.000Z" },
    });
    expect(detail.body.updatedAt).toMatch(ISO_MS);
    const addresses = detail.body.deliveryAddresses as Record<string, unknown>[];
    expect(addresses.map(({ id: _id, ...a }) => a).sort((a, b) => String(a.street).localeCompare(String(b.street)))).toEqual(
      [home, work].sort((a, b) => a.street.localeCompare(b.street)),
    );
    for (const a of addresses) expect(a.id).toMatch(/^[0-9a-f-]{36}$/);

    const none = await call<Record<string, unknown>>(app, "GET", `/public/v1/customers/${list.body.data[1].id}`, { token: t.token });
    expect(none.body).toMatchObject({ deliveryAddresses: [], contactSummary: { orderCount: 0, firstOrderAt: null, lastOrderAt: null } });
  });
});

describe("customer list order and pagination", () => {
  it("is by name, then id, and walks with no gaps or duplicates while customers are added", async () => {
    const t = await createTenant(app, { scopes: ["customers:read"] });
    const names = ["Zélia", "ana", "Bruno", "Bruno", "Bruno", "Carlos", "Daniela", "Eduardo", "Fábio", "Gustavo", "Helena", "Bruno", "Igor"];
    const originals = [];
    for (const name of names) originals.push(await createCustomer(app.services.db, t.storeId, { name }));
    // The database's collation decides name order; ask it, so the test checks our keyset against it.
    const expected = (await app.services.db.customer.findMany({ where: { storeId: t.storeId }, orderBy: [{ name: "asc" }, { id: "asc" }] })).map((c) => c.id);
    const added: string[] = [];
    const items = await walk<CustomerBody>(app, t.token, "/public/v1/customers?limit=4", async () => {
      added.push((await createCustomer(app.services.db, t.storeId, { name: "Bruno" })).id);
      added.push((await createCustomer(app.services.db, t.storeId, { name: "Zuleica" })).id);
    });
    const ids = items.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Every original exactly once and in order; rows added behind the cursor are simply not in this walk.
    expect(ids.filter((id) => !added.includes(id))).toEqual(expected);
    expect(ids.filter((id) => added.includes(id)).length).toBeGreaterThan(0);
  });
});

describe("customer filters", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await createTenant(app, { scopes: ["customers:read"] });
    const db = app.services.db;
    await createCustomer(db, t.storeId, { name: "Fernanda Lopes", phone: "(11) 98888-1234", email: "fer.lopes@gmail.com" });
    await createCustomer(db, t.storeId, { name: "Lucas Fernandes", phone: "+55 21 3333-4444", email: "lucas@empresa.com.br" });
    await createCustomer(db, t.storeId, { name: "Otávio 100% Pizza", phone: null, email: "otavio@example.com" });
    await createCustomer(db, t.storeId, { name: "Paula Dias", phone: "11 97777 0000", email: null });
  });
  const search = async (q: string) => {
    const res = await call<PageBody<CustomerBody>>(app, "GET", `/public/v1/customers?search=${encodeURIComponent(q)}`, { token: t.token });
    expect(res.status).toBe(200);
    return res.body.data.map((c) => c.name);
  };

  it("search matches a case-insensitive substring of the name", async () => {
    expect(await search("FERNAND")).toEqual(["Fernanda Lopes", "Lucas Fernandes"]);
    expect(await search("  paula ")).toEqual(["Paula Dias"]);
  });

  it("search matches a substring of the email", async () => {
    expect(await search("@EMPRESA.com")).toEqual(["Lucas Fernandes"]);
    expect(await search("gmail")).toEqual(["Fernanda Lopes"]);
  });

  it("search matches the phone's digits, however either side is formatted", async () => {
    expect(await search("98888-1234")).toEqual(["Fernanda Lopes"]);
    expect(await search("(21) 3333")).toEqual(["Lucas Fernandes"]);
    expect(await search("977770000")).toEqual(["Paula Dias"]);
    expect(await search("(11) 9")).toEqual(["Fernanda Lopes", "Paula Dias"]);
    expect(await search("+55 21 3333.4444")).toEqual(["Lucas Fernandes"]);
  });

  it("only a phone-like term (digits, + ( ) - . and spaces; 3 digits or more) matches phone digits", async () => {
    expect(await search("Burst1234beefce")).toEqual([]);
    expect(await search("x3333")).toEqual([]);
    expect(await search("11")).toEqual([]);
  });

  it("search treats % and _ literally and may match nothing", async () => {
    expect(await search("100%")).toEqual(["Otávio 100% Pizza"]);
    expect(await search("%")).toEqual(["Otávio 100% Pizza"]);
    expect(await search("_")).toEqual([]);
    expect(await search("\\")).toEqual([]);
    expect(await search("nobody-here")).toEqual([]);
  });

  it("updated_since keeps changes at or after it, oldest change first", async () => {
    const u = await createTenant(app, { scopes: ["customers:read"] });
    const at = (minutes: number) => new Date(Date.parse("2025-06-01T00:00:00.000Z") + minutes * 60_000);
    await createCustomer(app.services.db, u.storeId, { name: "Antes", updatedAt: at(-1) });
    const b = await createCustomer(app.services.db, u.storeId, { name: "Zeca", updatedAt: at(0) });
    const c = await createCustomer(app.services.db, u.storeId, { name: "Ana", updatedAt: at(5) });
    const res = await call<PageBody<CustomerBody>>(app, "GET", `/public/v1/customers?updated_since=${at(0).toISOString()}`, { token: u.token });
    expect(res.body.data.map((x) => x.id)).toEqual([b.id, c.id]);
    const combined = await call<PageBody<CustomerBody>>(app, "GET", `/public/v1/customers?updated_since=${at(0).toISOString()}&search=zec`, { token: u.token });
    expect(combined.body.data.map((x) => x.id)).toEqual([b.id]);
  });
});

describe("customer validation", () => {
  const bad: [string, string][] = [
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=abc", "limit"],
    ["updated_since=last-week", "updated_since"],
    ["updated_since=1717200000", "updated_since"],
    [`search=${"x".repeat(101)}`, "search"],
    [`cursor=${randomUUID()}`, "cursor"],
  ];
  for (const [query, field] of bad) {
    it(`?${query.slice(0, 40)} → 400 INVALID_REQUEST naming ${field}`, async () => {
      expectProblem(await call(app, "GET", `/public/v1/customers?${query}`, { token: tenant.token }), 400, "INVALID_REQUEST", field);
    });
  }

  it("a malformed id is 400, an unknown one 404; GraphQL agrees", async () => {
    expectProblem(await call(app, "GET", "/public/v1/customers/abc", { token: tenant.token }), 400, "INVALID_REQUEST", "id");
    expectProblem(await call(app, "GET", `/public/v1/customers/${randomUUID()}`, { token: tenant.token }), 404, "NOT_FOUND");
    expect((await graphql(app, `{ customer(id: "abc") { id } }`, {}, tenant.token)).errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    expect((await graphql(app, `{ customers(limit: 101) { data { id } } }`, {}, tenant.token)).errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    const both = await createTenant(app, { scopes: ["customers:read", "orders:read"] });
    await createCustomer(app.services.db, both.storeId);
    const nested = await graphql(app, `{ customers { data { orders(limit: 0) { id } } } }`, {}, both.token);
    expect(nested.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
  });

  it("needs customers:read", async () => {
    const t = await createTenant(app, { scopes: ["orders:read"] });
    expectProblem(await call(app, "GET", "/public/v1/customers", { token: t.token }), 403, "INSUFFICIENT_SCOPE");
    expectProblem(await call(app, "GET", `/public/v1/customers/${randomUUID()}`, { token: t.token }), 403, "INSUFFICIENT_SCOPE");
  });

  it("accepts X-Request-Id and echoes it", async () => {
    const requestId = randomUUID();
    const res = await call(app, "GET", "/public/v1/customers", { token: tenant.token, headers: { "x-request-id": requestId } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe(requestId);
  });
});
