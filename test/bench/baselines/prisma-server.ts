import { createPrisma, type Prisma } from "../../../src/db/prisma.js";
import { serveBaseline, type OrderSource } from "./common.js";

/**
 * Baseline (b): the order routes written directly on the project's Prisma client, without GraphQL, on plain
 * node:http. The include, orderings and relation load strategy are the ones the façade asks for
 * (src/graphql/orders.ts), so Prisma sends the same single joined statement; what remains between this and the
 * façade is GraphQL and the request pipeline around it.
 */

const db = createPrisma(process.env.DATABASE_URL ?? "", Number(process.env.DB_POOL_SIZE ?? 10));

const LIST_INCLUDE = {
  customer: true,
  items: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { additionals: { orderBy: [{ name: "asc" }, { id: "asc" }] } } },
  payments: { orderBy: { id: "asc" } },
} satisfies Prisma.OrderInclude;

const DETAIL_INCLUDE = {
  ...LIST_INCLUDE,
  statusHistory: { orderBy: [{ at: "asc" }, { status: "asc" }, { id: "asc" }] },
} satisfies Prisma.OrderInclude;

const source: OrderSource = {
  list: (storeId, take) =>
    db.order.findMany({ relationLoadStrategy: "join", where: { storeId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take, include: LIST_INCLUDE }),
  detail: (storeId, id) => db.order.findFirst({ relationLoadStrategy: "join", where: { id, storeId }, include: DETAIL_INCLUDE }),
};

await serveBaseline(
  "baseline-prisma",
  async () => new Map((await db.store.findMany({ select: { id: true, code: true } })).map((s) => [s.code, s.id])),
  source,
  () => db.$disconnect(),
);
