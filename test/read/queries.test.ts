import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../src/generated/prisma/client.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import { recordStatements, type StatementRecorder } from "../helpers/statements.js";
import { schema } from "../../src/graphql/schema.js";

/**
 * N+1 guard: the API runs over a Prisma client whose pg pool records every SQL statement (recordStatements), and a page of
 * 1, 5 or 25 rows with all its relations must cost the same number of statements.
 */

let app: TestApp;
let tenant: Tenant;
let pool: pg.Pool;
let db: PrismaClient;
let server: Server;
let baseUrl: string;
let recorder: StatementRecorder;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
  const { products } = await createCatalog(app.services.db, tenant.storeId);
  const customers = [];
  for (let i = 0; i < 6; i++) customers.push(await createCustomer(app.services.db, tenant.storeId, { addresses: [] }));
  for (let i = 0; i < 30; i++) {
    const [p, q] = [products[i % products.length], products[(i + 3) % products.length]];
    await createOrder(app.services.db, tenant.storeId, {
      customerId: customers[i % customers.length].id,
      status: i % 3 === 0 ? "DELIVERED" : "PENDING",
      items: [
        { name: p.name, productId: p.id, quantity: 1 + (i % 3), unitPriceCents: p.priceCents, additionals: [{ name: "Extra", quantity: 1, priceCents: 300 }] },
        { name: q.name, productId: q.id, quantity: 1, unitPriceCents: q.priceCents },
      ],
      payments: [
        { method: "CREDIT_CARD", status: "APPROVED", valueCents: 1000 },
        { method: "CASH", status: "PENDING", changeForCents: 5000 },
      ],
    });
  }
  pool = new pg.Pool({ connectionString: app.databaseUrl, max: 3 });
  recorder = recordStatements(pool);
  db = new PrismaClient({ adapter: new PrismaPg(pool) });
  server = createHttpServer(createHttpApp({ ...app.services, db }, schema));
  baseUrl = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
  await db?.$disconnect();
  await pool?.end();
  await app.close();
});

/** Runs one request and returns the SQL statements it cost. */
async function cost(path: string, init: { graphql?: string } = {}): Promise<{ count: number; body: unknown }> {
  const { result, statements } = await recorder.during(async () => {
    const res = init.graphql
      ? await fetch(`${baseUrl}/graphql`, {
          method: "POST",
          headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
          body: JSON.stringify({ query: init.graphql }),
        })
      : await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${tenant.token}` } });
    return { status: res.status, body: (await res.json()) as { errors?: unknown } };
  });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  expect(result.body.errors).toBeUndefined();
  return { count: statements.length, body: result.body };
}

describe("a page costs a constant number of statements, whatever its size", () => {
  it("REST orders list with items, additionals, payments and customer", async () => {
    const counts = [];
    for (const limit of [1, 5, 25]) {
      const { count, body } = await cost(`/public/v1/orders?limit=${limit}`);
      const data = (body as { data: { items: { additionals: unknown[] }[]; payments: unknown[]; customer: unknown }[] }).data;
      expect(data).toHaveLength(limit);
      for (const o of data) {
        expect(o.items).toHaveLength(2);
        expect(o.items[0].additionals).toHaveLength(1);
        expect(o.payments).toHaveLength(2);
        expect(o.customer).not.toBeNull();
      }
      counts.push(count);
    }
    expect(new Set(counts).size).toBe(1);
    // Orders with all their relations are one joined statement (relationLoadStrategy "join"). The pipeline's
    // grant and rate-limit statement goes through services.pool, which this count does not see.
    expect(counts[0]).toBe(1);
  });

  it("REST order detail with its relations and status history", async () => {
    const list = (await cost("/public/v1/orders?limit=1")).body as { data: { id: string }[] };
    const { count, body } = await cost(`/public/v1/orders/${list.data[0].id}`);
    expect((body as { statusHistory: unknown[] }).statusHistory.length).toBeGreaterThan(0);
    expect(count).toBe(1);
  });

  it("REST orders list with a cursor and filters", async () => {
    const first = (await cost("/public/v1/orders?limit=2&status=PENDING")).body as { pagination: { nextCursor: string } };
    const counts = [];
    for (const limit of [1, 10]) counts.push((await cost(`/public/v1/orders?limit=${limit}&status=PENDING&cursor=${first.pagination.nextCursor}`)).count);
    expect(new Set(counts).size).toBe(1);
    // The cursor's row is read by the page's own statement: a deep page is one round trip, as the first page is.
    expect(counts[0]).toBe(1);
  });

  it("REST orders list: a cursor past the last order is an empty page, an unknown one 400, each told apart by one more statement", async () => {
    const all = (await cost("/public/v1/orders?limit=100")).body as { data: { id: string }[] };
    const last = all.data[all.data.length - 1].id;
    const end = await cost(`/public/v1/orders?cursor=${last}`);
    expect(end.body).toMatchObject({ data: [], pagination: { hasMore: false, nextCursor: null } });
    expect(end.count).toBe(2);
    const { result, statements } = await recorder.during(async () => {
      const res = await fetch(`${baseUrl}/public/v1/orders?cursor=${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${tenant.token}` } });
      return { status: res.status, body: (await res.json()) as unknown };
    });
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ errors: [{ field: "cursor", code: "INVALID_CURSOR" }] });
    expect(statements).toHaveLength(2);
  });

  const shapes: [string, (limit: number) => string][] = [
    [
      "GraphQL orders → customer → orders, addresses and contact summary",
      (limit) => `{ orders(limit: ${limit}) { data { id items { name additionals { name } } payments { value } statusHistory { status }
        customer { name email deliveryAddresses { id } contactSummary { orderCount lastOrderAt } orders(limit: 5) { id items { id } } } } } }`,
    ],
    [
      "GraphQL customers with addresses, contact summary and orders",
      (limit) =>
        `{ customers(limit: ${limit}) { data { id deliveryAddresses { street } contactSummary { orderCount firstOrderAt } orders { id payments { method } } } } }`,
    ],
    [
      "GraphQL products with category, variations and additionals",
      (limit) => `{ products(limit: ${limit}) { data { id category { name } variations { name } additionals { name maxChoices } } } }`,
    ],
  ];
  for (const [name, query] of shapes) {
    it(name, async () => {
      const counts = [];
      for (const limit of [1, 3, 6]) counts.push((await cost("", { graphql: query(limit) })).count);
      expect(new Set(counts).size).toBe(1);
      expect(counts[0]).toBeGreaterThan(0);
    });
  }

  it("GraphQL categories with their products' variations and additionals", async () => {
    const query = "{ categories { name products { name variations { name } additionals { name } } } }";
    const before = (await cost("", { graphql: query })).count;
    await createCatalog(app.services.db, tenant.storeId);
    const after = await cost("", { graphql: query });
    expect((after.body as { data: { categories: unknown[] } }).data.categories).toHaveLength(6);
    expect(after.count).toBe(before);
  });
});
