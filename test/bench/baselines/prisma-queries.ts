import type { Db, Prisma } from "../../../src/platform/db/prisma.js";
import type { OrderSource } from "./common.js";

/**
 * The include, orderings and relation load strategy the façade's resolvers ask Prisma for (src/modules/orders/graphql.ts),
 * so baseline (b) sends the same single joined statement as the façade; the Fastify + Prisma peer uses the includes.
 */
export const LIST_INCLUDE = {
  customer: true,
  items: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { additionals: { orderBy: [{ name: "asc" }, { id: "asc" }] } } },
  payments: { orderBy: { id: "asc" } },
} satisfies Prisma.OrderInclude;

export const DETAIL_INCLUDE = {
  ...LIST_INCLUDE,
  statusHistory: { orderBy: [{ at: "asc" }, { status: "asc" }, { id: "asc" }] },
} satisfies Prisma.OrderInclude;

export function prismaOrderSource(db: Db): OrderSource {
  return {
    list: (storeId, take) =>
      db.order.findMany({ relationLoadStrategy: "join", where: { storeId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take, include: LIST_INCLUDE }),
    detail: (storeId, id) => db.order.findFirst({ relationLoadStrategy: "join", where: { id, storeId }, include: DETAIL_INCLUDE }),
  };
}
