import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../src/generated/prisma/client.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCustomer, createOrder } from "../helpers/fixtures.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import { recordStatements, type StatementRecorder } from "../helpers/statements.js";
import { schema } from "../../src/graphql/schema.js";

/**
 * Order reads whose selection the order tree covers are answered by one statement that builds each order's JSON
 * in PostgreSQL; any other selection goes through Prisma. Both must answer the same: every field of every order,
 * in every order the list can take (newest first, by status, changes since), page by page, and one by one.
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
/** The tree covers the customer's columns; its delivery addresses are a relation of its own, which Prisma loads. */
const TREE_CUSTOMER = "customer { id name phone email createdAt updatedAt }";
const PRISMA_CUSTOMER = "customer { id name phone email createdAt updatedAt deliveryAddresses { id } }";

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

/** The same answer without the customers' delivery addresses, which only the Prisma selection asked for. */
function withoutAddresses(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAddresses);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "deliveryAddresses")
      .map(([k, v]) => [k, withoutAddresses(v)]),
  );
}

/** Asks both selections; the tree's answer must come from the tree statement, Prisma's without it, and agree. */
async function bothAgree(document: (customer: string) => string, variables: Record<string, unknown>, token: string): Promise<Answer> {
  const tree = await ask(document(TREE_CUSTOMER), variables, token);
  const prisma = await ask(document(PRISMA_CUSTOMER), variables, token);
  expect(tree.statements.some((s) => s.startsWith(TREE_STATEMENT))).toBe(true);
  expect(prisma.statements.some((s) => s.startsWith(TREE_STATEMENT))).toBe(false);
  expect(tree.answer).toEqual(withoutAddresses(prisma.answer));
  return tree.answer;
}

const LIST = (customer: string) => `query($limit: Int, $cursor: String, $status: OrderStatus, $updatedSince: DateTime) {
  orders(limit: $limit, cursor: $cursor, status: $status, updatedSince: $updatedSince) {
    data { ${ORDER} ${customer} } pagination { hasMore cursor nextCursor } } }`;

describe("the order tree", () => {
  it("answers every page of the list as Prisma does: newest first, by status, and changes since an instant", async () => {
    for (const filter of [{}, { status: "DELIVERED" }, { updatedSince: "2026-01-15T00:00:00.000Z" }]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const answer = await bothAgree(LIST, { ...filter, limit: 2, cursor }, tenant.token);
        const page = answer.data?.orders as { data: { id: string }[]; pagination: { nextCursor: string | null } };
        seen.push(...page.data.map((o) => o.id));
        cursor = page.pagination.nextCursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      if (!("status" in filter)) expect([...seen].sort()).toEqual([...orderIds].sort());
    }
  });

  it("answers each order, and another store's order not at all, as Prisma does", async () => {
    const detail = (customer: string) => `query($id: ID!) { order(id: $id) { ${ORDER} ${customer} } }`;
    for (const id of orderIds) {
      const answer = await bothAgree(detail, { id }, tenant.token);
      expect(answer.data?.order).toMatchObject({ id });
    }
    const other = await createTenant(app, { environment: "PRODUCTION" });
    const res = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${other.token}` },
      body: JSON.stringify({ query: detail(TREE_CUSTOMER), variables: { id: orderIds[0] } }),
    });
    const answer = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(answer.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("answers an administrator's Store.orders and Store.order as Prisma does", async () => {
    const storeOrders = (customer: string) => `query($id: ID!, $order: ID!) { store(id: $id) {
      orders(limit: 4) { data { ${ORDER} ${customer} } pagination { hasMore nextCursor } }
      order(id: $order) { ${ORDER} ${customer} } } }`;
    await bothAgree(storeOrders, { id: tenant.storeId, order: orderIds[3] }, ADMIN_KEY);
  });
});
