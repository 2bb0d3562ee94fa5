import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getOperationAST,
  isEnumType,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  isScalarType,
  parse,
  print,
  type DocumentNode,
  typeFromAST,
  type GraphQLInputType,
} from "graphql";
import { schema } from "../../src/graphql/schema.js";
import { routes } from "../../src/rest/routes.js";
import { queryCost } from "../../src/graphql/limits.js";
import { MAX_PAGE_SIZE } from "../../src/platform/schema/pagination.js";
import { OrderDetailFragment } from "../../src/modules/orders/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createOrder } from "../helpers/fixtures.js";

let app: TestApp;
let tenant: Tenant;
let maxCost: number;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
  for (let i = 0; i < 3; i++) await createOrder(app.services.db, tenant.storeId);
  maxCost = app.services.config.GRAPHQL_MAX_COST;
});
afterAll(() => app.close());

/** A full page: 100 orders with every field, their items (with additionals), payments and status history. */
const FULL_PAGE = "orders(limit: 100) { data { ...OrderDetail } pagination { hasMore cursor nextCursor } }";
/** An operation over FULL_PAGE selections, with the order fragments the REST routes select. */
const withFragments = (operation: string) => `${operation}\n${print(OrderDetailFragment)}`;
const aliased = (n: number, selection: string) => Array.from({ length: n }, (_, i) => `a${i}: ${selection}`).join("\n");

/** A value its type accepts; the cost depends on `limit` alone, the other variables only have to coerce. */
function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0].name;
  if (isInputObjectType(type)) {
    const required = Object.values(type.getFields()).filter((f) => isNonNullType(f.type));
    return Object.fromEntries(required.map((f) => [f.name, sample(f.type)]));
  }
  if (isScalarType(type))
    return ({ Int: 1, SafeInt: 0, Float: 1, Boolean: true, DateTime: "2024-01-01T00:00:00Z", JSON: {} } as Record<string, unknown>)[type.name] ?? "x";
  throw new Error(`no sample for ${String(type)}`);
}

/** The route document's cost at its worst: every `$limit` at MAX_PAGE_SIZE. */
function worstCost(document: DocumentNode): number {
  const variables: Record<string, unknown> = {};
  for (const definition of getOperationAST(document)?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    if (name === "limit") variables[name] = MAX_PAGE_SIZE;
    else if (type && isInputType(type) && isNonNullType(type)) variables[name] = sample(type);
  }
  return queryCost(schema, document, variables);
}

describe("the cost limit lets through what the service and its docs send", () => {
  // The contract cases (test/contract/cases.ts) run these same documents with limits of MAX_PAGE_SIZE or less,
  // and nothing but `limit` changes a document's cost: their costs are at most these.
  it("every REST route's document, at its largest page", () => {
    const costs = Object.fromEntries(routes.map((route) => [route.operationId, worstCost(route.document)]));
    expect(Object.keys(costs).length).toBeGreaterThan(15);
    for (const [operationId, cost] of Object.entries(costs)) expect({ operationId, cost, fits: cost <= maxCost }).toMatchObject({ fits: true });
    // The largest: a page of 100 orders with their items and payments.
    expect(Math.max(...Object.values(costs))).toBe(costs.listOrders);
  });

  it("every GraphQL example in docs/", () => {
    const examples = readdirSync("docs")
      .filter((f) => f.endsWith(".md"))
      .flatMap((f) => [...readFileSync(`docs/${f}`, "utf8").matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]));
    expect(examples.length).toBeGreaterThan(1);
    for (const example of examples) expect(worstCost(parse(example))).toBeLessThanOrEqual(maxCost);
  });

  it("a page of 100 orders with every field, but not 40 of them", () => {
    const page = queryCost(schema, parse(withFragments(`{ ${FULL_PAGE} }`)));
    expect(page).toBeLessThanOrEqual(maxCost);
    expect(queryCost(schema, parse(withFragments(`{ ${aliased(40, FULL_PAGE)} }`)))).toBeGreaterThan(maxCost);
    // Lists multiply: the same page of 1 order costs about a hundredth.
    expect(queryCost(schema, parse(withFragments(`{ ${FULL_PAGE.replace("limit: 100", "limit: 1")} }`)))).toBeLessThan(page / 90);
  });
});

describe("reads nested in Store cost what the root fields cost", () => {
  const acrossStores = (selection: string) => `{ stores(limit: 100) { data { id orders(limit: 100) { data { ${selection} } } } } }`;
  const WITH_ITEMS = "id total items { name quantity total } payments { value }";

  it("one store's page costs its root page and one more", () => {
    const root = queryCost(schema, parse(withFragments(`{ ${FULL_PAGE} }`)));
    expect(queryCost(schema, parse(withFragments(`{ store(code: "x") { ${FULL_PAGE} } }`)))).toBe(root + 1);
  });

  it("a page of stores multiplies the pages inside it", () => {
    // 100 stores × 100 order ids fit; with each order's items and payments they do not (docs/dashboards.md says both).
    expect(queryCost(schema, parse(acrossStores("id")))).toBe(20_301);
    expect(queryCost(schema, parse(acrossStores(WITH_ITEMS)))).toBe(450_301);
  });

  it("refuses an administrator's stores × full order pages before running it", async () => {
    const res = await graphql(app, acrossStores(WITH_ITEMS), {}, ADMIN_KEY);
    expect(res.data ?? null).toBeNull();
    expect(res.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", limit: "cost", max: maxCost });
    const ids = await graphql<{ stores: { data: { orders: { data: unknown[] } }[] } }>(app, acrossStores("id"), {}, ADMIN_KEY);
    expect(ids.errors).toBeUndefined();
    expect(ids.data?.stores.data.flatMap((s) => s.orders.data)).toHaveLength(3);
  });
});

describe("POST /graphql", () => {
  it("refuses 40 aliased full pages of orders before running them, naming the limit", async () => {
    const res = await graphql(app, withFragments(`{ ${aliased(40, FULL_PAGE)} }`), {}, tenant.token);
    expect(res.data ?? null).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0].message).toMatch(new RegExp(`^Query cost \\d+ exceeds the limit of ${maxCost}\\.$`));
    expect(res.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", limit: "cost", max: maxCost });
    expect(res.errors?.[0].extensions?.cost).toBeGreaterThan(maxCost);
  });

  it("answers one full page", async () => {
    const res = await graphql<{ orders: { data: { items: unknown[] }[] } }>(app, withFragments(`{ ${FULL_PAGE} }`), {}, tenant.token);
    expect(res.errors).toBeUndefined();
    expect(res.data?.orders.data).toHaveLength(3);
  });

  it("counts `limit` given as a variable, the same document refused or run by its value", async () => {
    const query = withFragments(`query ($limit: Int) { ${aliased(40, FULL_PAGE.replace("limit: 100", "limit: $limit"))} }`);
    const small = await graphql<Record<string, { data: unknown[] }>>(app, query, { limit: 1 }, tenant.token);
    expect(small.errors).toBeUndefined();
    expect(small.data?.a39.data).toHaveLength(1);
    const large = await graphql(app, query, { limit: 100 }, tenant.token);
    expect(large.errors?.[0].extensions).toMatchObject({ limit: "cost" });
    // Without the variable the field's default page size (20) counts: 40 pages of 20 orders are too many too.
    expect((await graphql(app, query, {}, tenant.token)).errors?.[0].extensions).toMatchObject({ limit: "cost" });
  });

  it("leaves variables that do not fit the operation to the operation itself", async () => {
    const res = await graphql(app, "query ($limit: Int) { orders(limit: $limit) { data { id } } }", { limit: "many" }, tenant.token);
    expect(res.errors?.[0].message).toMatch(/^Variable "\$limit" got invalid value "many"/);
  });

  it("lets administrators introspect the schema, as GraphiQL does", async () => {
    const { getIntrospectionQuery } = await import("graphql");
    const res = await graphql<{ __schema: { types: unknown[] } }>(app, getIntrospectionQuery(), {}, ADMIN_KEY);
    expect(res.errors).toBeUndefined();
    expect(res.data?.__schema.types.length).toBeGreaterThan(20);
  });
});

describe("suggestions", () => {
  const misspelt = "{ applicationz { id } }";

  it("name other fields to administrators", async () => {
    const res = await graphql(app, misspelt, {}, ADMIN_KEY);
    expect(res.errors?.[0].message).toBe('Cannot query field "applicationz" on type "Query". Did you mean "applications"?');
  });

  it("are left out for partners, whatever the error", async () => {
    const res = await graphql(app, misspelt, {}, tenant.token);
    expect(res.errors?.[0].message).toBe('Cannot query field "applicationz" on type "Query".');
    expect(JSON.stringify(res)).not.toContain("applications");
    // Arguments and enum values, in the document or in a variable.
    const arg = await graphql(app, "{ orders(limt: 5) { data { id } } }", {}, tenant.token);
    expect(arg.errors?.[0].message).toBe('Unknown argument "limt" on field "Query.orders".');
    const value = await graphql(app, "query ($s: OrderStatus) { orders(status: $s) { data { id } } }", { s: "PENDINGG" }, tenant.token);
    expect(value.errors?.[0].message).toMatch(/^Variable "\$s" got invalid value "PENDINGG"; Value "PENDINGG" does not exist in "OrderStatus" enum\.$/);
    // The administrator asking after the partner still gets them (validation results are cached per document).
    expect((await graphql(app, misspelt, {}, ADMIN_KEY)).errors?.[0].message).toContain('Did you mean "applications"?');
  });
});
