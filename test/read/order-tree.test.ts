import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { type Prisma, PrismaClient } from "../../src/generated/prisma/client.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCustomer, createOrder } from "../helpers/fixtures.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import { recordStatements, type StatementRecorder } from "../helpers/statements.js";
import { schema } from "../../src/graphql/schema.js";
import { orderBody } from "../bench/baselines/common.js";

/**
 * Every order read is one statement that builds each order's JSON in PostgreSQL (the order tree). It must answer
 * what the rows hold: every field of every order, in every order the list can take (newest first, by status,
 * changes since), page by page, and one by one; checked here against the rows read with Prisma. A selection that
 * reaches beyond the tree (the customer's delivery addresses) is answered from the tree and one more read.
 */

let app: TestApp;
let tenant: Tenant;
let pool: pg.Pool;
let db: PrismaClient;
let server: Server;
let baseUrl: string;
let recorder: StatementRecorder;
const orderIds: string[] = [];
const TREE_STATEMENT = `select json_build_array(o."id"`;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { environment: "PRODUCTION" });
  const customer = await createCustomer(app.services.db, tenant.storeId, { email: "tree@example.com" });
  const sameInstant = new Date(Date.UTC(2026, 2, 1, 12, 0, 0, 123));
  const inputs: Parameters<typeof createOrder>[2][] = [
    { status: "DELIVERED", createdAt: sameInstant, couponCode: "TREE10", discountCents: 100, notes: "ring twice" },
    { status: "CANCELLED", createdAt: sameInstant, customerId: null, type: "PICKUP" },
    { status: "PREPARING", customerId: customer.id, scheduledFor: new Date(Date.UTC(2026, 2, 2, 18, 30)) },
    {
      status: "DELIVERED",
      type: "PICKUP",
      customerId: customer.id,
      items: [
        {
          name: "Pizza",
          quantity: 2,
          unitPriceCents: 4000,
          notes: "well done",
          additionals: [
            { name: "Zest", quantity: 1, priceCents: 50 },
            { name: "Anchovy", quantity: 2, priceCents: 300 },
          ],
        },
        { name: "Water", quantity: 1, unitPriceCents: 400, productId: null },
      ],
      payments: [
        { method: "CASH", status: "PENDING", valueCents: 5000, changeForCents: 10000 },
        { method: "PIX", status: "APPROVED", valueCents: 3950 },
      ],
    },
    { items: [], payments: [] },
    { status: "READY", createdAt: new Date(Date.UTC(2026, 1, 1)), updatedAt: new Date(Date.UTC(2026, 3, 1)) },
  ];
  for (const input of inputs) orderIds.push((await createOrder(app.services.db, tenant.storeId, input)).id);
  // The façade over a Prisma client whose pool records every statement it sends.
  pool = new pg.Pool({ connectionString: app.databaseUrl, max: 3 });
  recorder = recordStatements(pool, { as: "text" });
  db = new PrismaClient({ adapter: new PrismaPg(pool) });
  server = createHttpServer(createHttpApp({ ...app.services, db }, schema));
  baseUrl = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
  await db?.$disconnect();
  await pool?.end();
  await app?.close();
});

const ORDER = `id displayId orderNumber status type subtotal deliveryFee discount couponCode total totalAmount
  deliveryAddress { street number neighborhood city state postalCode complement }
  items { id productId name quantity unitPrice total notes additionals { name quantity price } }
  payments { method status value changeFor }
  statusHistory { status at reason }
  scheduledFor notes cancellationReason createdAt version updatedAt`;
const CUSTOMER = "customer { id name phone email createdAt updatedAt }";
const DEEPER_CUSTOMER = "customer { id name phone email createdAt updatedAt deliveryAddresses { id } }";

interface Answer {
  data: Record<string, unknown> | null;
  errors?: unknown[];
}

async function ask(query: string, variables: Record<string, unknown>, token: string): Promise<{ answer: Answer; statements: string[] }> {
  const { result: answer, statements } = await recorder.during(async () => {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as Answer;
  });
  expect(answer.errors).toBeUndefined();
  return { answer, statements };
}

/** The same answer without the customers' delivery addresses, which only the deeper selection asked for. */
function withoutAddresses(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAddresses);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "deliveryAddresses")
      .map(([k, v]) => [k, withoutAddresses(v)]),
  );
}

/** Asks both selections: each is read by the tree statement, and they agree on what both ask for. */
async function bothAgree(document: (customer: string) => string, variables: Record<string, unknown>, token: string): Promise<Answer> {
  const tree = await ask(document(CUSTOMER), variables, token);
  const deeper = await ask(document(DEEPER_CUSTOMER), variables, token);
  expect(tree.statements.some((s) => s.startsWith(TREE_STATEMENT))).toBe(true);
  expect(deeper.statements.some((s) => s.startsWith(TREE_STATEMENT))).toBe(true);
  expect(tree.answer).toEqual(withoutAddresses(deeper.answer));
  return tree.answer;
}

const iso = (at: Date | null) => at?.toISOString() ?? null;

/** The orders as the rows hold them, read with Prisma in the relations' orders, in the answer's shape. */
async function expectedOrders(where: Prisma.OrderWhereInput, orderBy: Prisma.OrderOrderByWithRelationInput[]) {
  const rows = await db.order.findMany({
    where,
    orderBy,
    include: {
      customer: true,
      items: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { additionals: { orderBy: [{ name: "asc" }, { id: "asc" }] } } },
      payments: { orderBy: { id: "asc" } },
      statusHistory: { orderBy: [{ at: "asc" }, { status: "asc" }, { id: "asc" }] },
    },
  });
  // The bench baselines' reference body (every field the REST detail has), with the customer's fields this test asks.
  return rows.map(
    (o): Record<string, unknown> => ({
      ...orderBody(o),
      customer: o.customer && {
        id: o.customer.id,
        name: o.customer.name,
        phone: o.customer.phone,
        email: o.customer.email,
        createdAt: iso(o.customer.createdAt),
        updatedAt: iso(o.customer.updatedAt),
      },
    }),
  );
}

const LIST = (customer: string) => `query($limit: Int, $cursor: String, $status: OrderStatus, $updatedSince: DateTime) {
  orders(limit: $limit, cursor: $cursor, status: $status, updatedSince: $updatedSince) {
    data { ${ORDER} ${customer} } pagination { hasMore cursor nextCursor } } }`;

describe("the order tree", () => {
  it("answers every page of the list as the rows hold it: newest first, by status, and changes since an instant", async () => {
    const newest: Prisma.OrderOrderByWithRelationInput[] = [{ createdAt: "desc" }, { id: "desc" }];
    const since = new Date("2026-01-15T00:00:00.000Z");
    const lists = [
      { filter: {}, where: {}, orderBy: newest },
      { filter: { status: "DELIVERED" }, where: { status: "DELIVERED" as const }, orderBy: newest },
      { filter: { updatedSince: since.toISOString() }, where: { updatedAt: { gte: since } }, orderBy: [{ updatedAt: "asc" as const }, { id: "asc" as const }] },
    ];
    for (const { filter, where, orderBy } of lists) {
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const answer = await bothAgree(LIST, { ...filter, limit: 2, cursor }, tenant.token);
        const page = answer.data?.orders as { data: unknown[]; pagination: { nextCursor: string | null } };
        seen.push(...page.data);
        cursor = page.pagination.nextCursor;
      } while (cursor);
      expect(seen).toEqual(await expectedOrders({ storeId: tenant.storeId, ...where }, orderBy));
    }
    expect((await expectedOrders({ storeId: tenant.storeId }, [])).map((o) => String(o.id)).sort()).toEqual([...orderIds].sort());
  });

  it("answers each order as its rows hold it, and another store's order not at all", async () => {
    const detail = (customer: string) => `query($id: ID!) { order(id: $id) { ${ORDER} ${customer} } }`;
    for (const id of orderIds) {
      const answer = await bothAgree(detail, { id }, tenant.token);
      expect([answer.data?.order]).toEqual(await expectedOrders({ id }, []));
    }
    const other = await createTenant(app, { environment: "PRODUCTION" });
    const res = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${other.token}` },
      body: JSON.stringify({ query: detail(CUSTOMER), variables: { id: orderIds[0] } }),
    });
    const answer = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(answer.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("answers an administrator's Store.orders and Store.order from the tree", async () => {
    const storeOrders = (customer: string) => `query($id: ID!, $order: ID!) { store(id: $id) {
      orders(limit: 4) { data { ${ORDER} ${customer} } pagination { hasMore nextCursor } }
      order(id: $order) { ${ORDER} ${customer} } } }`;
    const answer = await bothAgree(storeOrders, { id: tenant.storeId, order: orderIds[3] }, ADMIN_KEY);
    const store = answer.data?.store as { orders: { data: unknown[] }; order: unknown };
    expect(store.orders.data).toEqual((await expectedOrders({ storeId: tenant.storeId }, [{ createdAt: "desc" }, { id: "desc" }])).slice(0, 4));
    expect([store.order]).toEqual(await expectedOrders({ id: orderIds[3] }, []));
  });
});
