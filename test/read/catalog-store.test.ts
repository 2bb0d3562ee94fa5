import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, type FixtureProduct } from "../helpers/fixtures.js";
import { expectProblem, expectResponseSchema, walk, type PageBody } from "./support.js";

let app: TestApp;
let tenant: Tenant;
let products: FixtureProduct[];

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { scopes: ["catalog:read", "merchant:read"] });
  ({ products } = await createCatalog(app.services.db, tenant.storeId));
});
afterAll(() => app.close());

type ProductBody = { id: string; name: string; price: number; categoryId: string; isActive: boolean };

describe("categories", () => {
  it("lists active categories by position as { data } only", async () => {
    const t = await createTenant(app, { scopes: ["catalog:read"] });
    const db = app.services.db;
    await db.category.create({ data: { storeId: t.storeId, name: "Lanches", position: 3 } });
    await db.category.create({ data: { storeId: t.storeId, name: "Entradas", position: 1 } });
    await db.category.create({ data: { storeId: t.storeId, name: "Fora do cardápio", position: 0, isActive: false } });
    await db.category.create({ data: { storeId: t.storeId, name: "Bebidas", position: 2 } });
    const res = await call<{ data: { name: string; position: number }[] }>(app, "GET", "/public/v1/catalog/categories", { token: t.token });
    expect(res.status).toBe(200);
    expectResponseSchema("listCategories", res.body);
    expect(Object.keys(res.body)).toEqual(["data"]);
    expect(res.body.data.map((c) => [c.name, c.position])).toEqual([
      ["Entradas", 1],
      ["Bebidas", 2],
      ["Lanches", 3],
    ]);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["id", "name", "position"]);
  });
});

describe("products", () => {
  it("list: published fields, paused products included, by category position then name then id", async () => {
    const db = app.services.db;
    const paused = products.find((p) => p.name === "Brownie")!;
    await db.product.update({ where: { id: paused.id }, data: { isActive: false } });
    const items = await walk<ProductBody>(app, tenant.token, "/public/v1/catalog/products?limit=3");
    // Name order is the database collation's ("Água" sorts by its collation rules): ask it for the expectation.
    const expected = await db.product.findMany({ where: { storeId: tenant.storeId }, orderBy: [{ categoryPosition: "asc" }, { name: "asc" }, { id: "asc" }] });
    expect(items.map((p) => p.id)).toEqual(expected.map((p) => p.id));
    expect(
      items
        .slice(0, 3)
        .map((p) => p.name)
        .sort(),
    ).toEqual(["Pizza Calabresa", "Pizza Margherita", "Pizza Quatro Queijos"]);
    expect(items.find((p) => p.id === paused.id)?.isActive).toBe(false);
    const page = await call<PageBody<ProductBody>>(app, "GET", "/public/v1/catalog/products", { token: tenant.token });
    expectResponseSchema("listProducts", page.body);
    expect(Object.keys(page.body.data[0]).sort()).toEqual(["categoryId", "description", "id", "image", "isActive", "name", "price"]);
    const margherita = page.body.data.find((p) => p.name === "Pizza Margherita")!;
    expect(margherita).toMatchObject({ price: 45.9, categoryId: products[0].categoryId, isActive: true });
    await db.product.update({ where: { id: paused.id }, data: { isActive: true } });
  });

  it("walks with no gaps or duplicates while products are added, ties on name broken by id", async () => {
    const t = await createTenant(app, { scopes: ["catalog:read"] });
    const db = app.services.db;
    const category = await db.category.create({ data: { storeId: t.storeId, name: "Pastéis", position: 5 } });
    const make = (name: string, categoryPosition = 5) =>
      db.product.create({ data: { storeId: t.storeId, categoryId: category.id, categoryPosition, name, priceCents: 900 } });
    const originals = [];
    for (const name of ["Carne", "Queijo", "Pizza", "Palmito", "Frango", "Queijo", "Queijo", "Bauru", "Camarão", "Queijo"]) originals.push(await make(name));
    const expected = (await db.product.findMany({ where: { storeId: t.storeId }, orderBy: [{ categoryPosition: "asc" }, { name: "asc" }, { id: "asc" }] })).map(
      (p) => p.id,
    );
    const added: string[] = [];
    const items = await walk<ProductBody>(app, t.token, "/public/v1/catalog/products?limit=3", async () => {
      added.push((await make("Queijo")).id, (await make("Aipim", 1)).id, (await make("Zzz", 9)).id);
    });
    const ids = items.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !added.includes(id))).toEqual(expected);
  });

  it("detail adds variations and additionals with price, choices and availability", async () => {
    const pizza = products.find((p) => p.name === "Pizza Calabresa")!;
    await app.services.db.productVariation.update({ where: { id: pizza.variations[0].id }, data: { isAvailable: false } });
    const res = await call<Record<string, unknown>>(app, "GET", `/public/v1/catalog/products/${pizza.id}`, { token: tenant.token });
    expect(res.status).toBe(200);
    expectResponseSchema("getProductById", res.body);
    expect(res.body).toMatchObject({
      id: pizza.id,
      name: "Pizza Calabresa",
      description: "Calabresa fatiada, cebola roxa e azeitonas",
      price: 49.9,
      image: "https://images.example.com/menu/pizza-calabresa.jpg",
      categoryId: pizza.categoryId,
      isActive: true,
      variations: [
        { name: "Broto (4 fatias)", price: 32.9, isAvailable: false, position: 0 },
        { name: "Média (6 fatias)", price: 42.9, isAvailable: true, position: 1 },
        { name: "Grande (8 fatias)", price: 52.9, isAvailable: true, position: 2 },
      ],
      additionals: [
        { name: "Borda de catupiry", price: 9, minChoices: 0, maxChoices: 1, isAvailable: true, position: 0 },
        { name: "Queijo extra", price: 6, minChoices: 0, maxChoices: 2, isAvailable: true, position: 1 },
      ],
    });
    const water = products.find((p) => p.name === "Água mineral 500ml")!;
    const plain = await call<Record<string, unknown>>(app, "GET", `/public/v1/catalog/products/${water.id}`, { token: tenant.token });
    expect(plain.body).toMatchObject({
      description: null,
      additionals: [],
      variations: [
        { name: "Sem gás", price: 4 },
        { name: "Com gás", price: 4.5 },
      ],
    });
  });

  it("validation: limits, cursors, malformed and unknown ids", async () => {
    for (const q of ["limit=0", "limit=101", "limit=abc", `cursor=${randomUUID()}`]) {
      expectProblem(await call(app, "GET", `/public/v1/catalog/products?${q}`, { token: tenant.token }), 400, "INVALID_REQUEST", q.split("=")[0]);
    }
    expectProblem(await call(app, "GET", "/public/v1/catalog/products/12", { token: tenant.token }), 400, "INVALID_REQUEST", "id");
    expectProblem(await call(app, "GET", `/public/v1/catalog/products/${randomUUID()}`, { token: tenant.token }), 404, "NOT_FOUND");
    expect((await graphql(app, `{ product(id: "12") { id } }`, {}, tenant.token)).errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    expect((await graphql(app, `{ products(limit: 0) { data { id } } }`, {}, tenant.token)).errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
  });

  it("needs catalog:read", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    for (const path of ["/public/v1/catalog/categories", "/public/v1/catalog/products", `/public/v1/catalog/products/${products[0].id}`]) {
      expectProblem(await call(app, "GET", path, { token: t.token }), 403, "INSUFFICIENT_SCOPE");
    }
  });

  it("GraphQL: categories with their products and products with their category in one request", async () => {
    const res = await graphql<{ categories: { name: string; products: { name: string }[] }[]; products: { data: { category: { name: string } }[] } }>(
      app,
      "{ categories { name products { name price } } products(limit: 100) { data { name category { name position } } } }",
      {},
      tenant.token,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.categories.map((c) => c.name)).toEqual(["Pizzas", "Bebidas", "Sobremesas"]);
    expect(res.data?.categories[2].products.map((p) => p.name)).toEqual(["Brownie", "Pudim de leite"]);
    expect(res.data?.products.data[0].category.name).toBe("Pizzas");
  });
});

describe("store profile", () => {
  it("returns the profile with status, address, opening hours and public settings", async () => {
    const db = app.services.db;
    const address = {
      street: "Rua dos Pinheiros",
      number: "870",
      neighborhood: "Pinheiros",
      city: "São Paulo",
      state: "SP",
      postalCode: "05422-001",
      complement: null,
    };
    const openingHours = [
      { dayOfWeek: 0, opens: "18:00", closes: "23:00" },
      { dayOfWeek: 5, opens: "18:00", closes: "23:59" },
      { dayOfWeek: 6, opens: "11:30", closes: "15:00" },
      { dayOfWeek: 6, opens: "18:00", closes: "23:59" },
    ];
    const publicSettings = { currency: "BRL", timezone: "America/Sao_Paulo", acceptsDelivery: true, acceptsPickup: true, minimumOrder: 30 };
    await db.store.update({
      where: { id: tenant.storeId },
      data: { status: "PAUSED", address, openingHours, publicSettings, logo: "https://images.example.com/logo.png", phone: "+55 11 3000-0000" },
    });
    const res = await call<Record<string, unknown>>(app, "GET", "/public/v1/store", {
      token: tenant.token,
      headers: { "x-request-id": "7f1c9a52-3a57-4a3b-9f62-1f0b2d4c8e90" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("7f1c9a52-3a57-4a3b-9f62-1f0b2d4c8e90");
    expectResponseSchema("getStore", res.body);
    expect(res.body).toMatchObject({
      id: tenant.storeId,
      code: tenant.storeCode,
      logo: "https://images.example.com/logo.png",
      phone: "+55 11 3000-0000",
      isActive: true,
      status: "PAUSED",
      address,
      openingHours,
      publicSettings,
    });
  });

  it("a fresh store answers empty hours and settings, and a null address", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const res = await call<Record<string, unknown>>(app, "GET", "/public/v1/store", { token: t.token });
    expectResponseSchema("getStore", res.body);
    expect(res.body).toMatchObject({ status: "OPEN", address: null, openingHours: [], publicSettings: {}, logo: null });
  });
});
