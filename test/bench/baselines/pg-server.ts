import pg from "pg";
import type { Customer, Order, OrderItem, OrderItemAdditional, OrderStatusHistory, Payment } from "../../../src/platform/db/prisma.js";
import { serveBaseline, type FullOrder, type OrderSource } from "./common.js";

/**
 * Baseline (a): the order routes on bare node:http and pg with a pool of its own. The statements are the ones
 * Prisma sends for the façade's query with its per-relation strategy (same columns, same filters and orderings,
 * one statement per relation, relations of one level fetched concurrently); the façade and (b) join them
 * into one statement, so the difference to the façade is everything around the data plus that choice.
 */

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) });

const ORDER_COLUMNS = `"id", "storeId", "orderNumber", "type"::text, "status"::text, "customerId", "subtotalCents", "deliveryFeeCents",
  "discountCents", "totalCents", "couponCode", "deliveryAddress", "scheduledFor", "notes", "cancellationReason", "version", "createdAt", "updatedAt"`;

const LIST = `SELECT ${ORDER_COLUMNS} FROM "Order" WHERE "storeId" = $1 ORDER BY "createdAt" DESC, "id" DESC LIMIT $2 OFFSET 0`;
const DETAIL = `SELECT ${ORDER_COLUMNS} FROM "Order" WHERE ("id" = $1 AND "storeId" = $2) LIMIT 1 OFFSET 0`;
const CUSTOMERS = `SELECT "id", "storeId", "name", "phone", "phoneDigits", "email", "createdAt", "updatedAt" FROM "Customer" WHERE "id" = ANY($1::uuid[]) OFFSET 0`;
const ITEMS = `SELECT "id", "orderId", "productId", "name", "quantity", "unitPriceCents", "totalCents", "notes", "position" FROM "OrderItem"
  WHERE "orderId" = ANY($1::uuid[]) ORDER BY "position" ASC, "id" ASC OFFSET 0`;
const ADDITIONALS = `SELECT "id", "orderItemId", "name", "quantity", "priceCents" FROM "OrderItemAdditional"
  WHERE "orderItemId" = ANY($1::uuid[]) ORDER BY "name" ASC, "id" ASC OFFSET 0`;
const PAYMENTS = `SELECT "id", "orderId", "method", "status", "valueCents", "changeForCents" FROM "Payment"
  WHERE "orderId" = ANY($1::uuid[]) ORDER BY "id" ASC OFFSET 0`;
const HISTORY = `SELECT "id", "orderId", "status"::text, "reason", "at" FROM "OrderStatusHistory"
  WHERE "orderId" = ANY($1::uuid[]) ORDER BY "at" ASC, "status" ASC, "id" ASC OFFSET 0`;

function groupBy<T, K extends keyof T>(rows: T[], key: K): Map<T[K], T[]> {
  const map = new Map<T[K], T[]>();
  for (const row of rows) {
    const list = map.get(row[key]);
    if (list) list.push(row);
    else map.set(row[key], [row]);
  }
  return map;
}

async function withRelations(orders: Order[], history: boolean): Promise<FullOrder[]> {
  if (orders.length === 0) return [];
  const ids = orders.map((o) => o.id);
  const customerIds = [...new Set(orders.map((o) => o.customerId).filter((id): id is string => id !== null))];
  const [customers, payments, items, statuses] = await Promise.all([
    customerIds.length ? pool.query<Customer>(CUSTOMERS, [customerIds]).then((r) => r.rows) : [],
    pool.query<Payment>(PAYMENTS, [ids]).then((r) => r.rows),
    pool.query<OrderItem>(ITEMS, [ids]).then((r) => r.rows),
    history ? pool.query<OrderStatusHistory>(HISTORY, [ids]).then((r) => r.rows) : [],
  ]);
  const additionals = items.length ? (await pool.query<OrderItemAdditional>(ADDITIONALS, [items.map((i) => i.id)])).rows : [];
  const customerById = new Map(customers.map((c) => [c.id, c]));
  const additionalsByItem = groupBy(additionals, "orderItemId");
  const itemsByOrder = groupBy(items, "orderId");
  const paymentsByOrder = groupBy(payments, "orderId");
  const historyByOrder = groupBy(statuses, "orderId");
  return orders.map((o) => ({
    ...o,
    customer: o.customerId ? (customerById.get(o.customerId) ?? null) : null,
    items: (itemsByOrder.get(o.id) ?? []).map((i) => ({ ...i, additionals: additionalsByItem.get(i.id) ?? [] })),
    payments: paymentsByOrder.get(o.id) ?? [],
    ...(history ? { statusHistory: historyByOrder.get(o.id) ?? [] } : {}),
  }));
}

const source: OrderSource = {
  async list(storeId, take) {
    const { rows } = await pool.query<Order>(LIST, [storeId, take]);
    return withRelations(rows, false);
  },
  async detail(storeId, id) {
    const { rows } = await pool.query<Order>(DETAIL, [id, storeId]);
    return (await withRelations(rows, true))[0] ?? null;
  },
};

await serveBaseline(
  "baseline-pg",
  async () => new Map((await pool.query<{ id: string; code: string }>(`SELECT "id", "code" FROM "Store"`)).rows.map((s) => [s.code, s.id])),
  source,
  () => pool.end(),
);
