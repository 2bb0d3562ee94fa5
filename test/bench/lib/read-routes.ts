import pg from "pg";
import { interleave, type BenchContext } from "../context.js";
import type { Target } from "./load.js";

const DETAIL_ORDERS_PER_TENANT = 10;

export interface OrderRef {
  storeId: string;
  id: string;
}

/** A few orders of each tenant, spread over its history, for the detail route. */
export async function someOrders(ctx: BenchContext): Promise<OrderRef[]> {
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<OrderRef>(
      `select o."storeId", o.id from unnest($1::uuid[]) as s(id)
       cross join lateral (select id, "storeId" from "Order" where "storeId" = s.id and "orderNumber" % 37 = 5 limit $2) o`,
      [ctx.tenants.map((t) => t.storeId), DETAIL_ORDERS_PER_TENANT],
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** A read route the goals name and the requests its load sends, tenants interleaved. */
export interface ReadRoute {
  name: string;
  short: "list" | "detail";
  targets: Target[];
}

/** A page of 20 orders of each tenant, and `orders` one by one, each with its tenant's token. */
export function readRoutes(ctx: BenchContext, orders: readonly OrderRef[]): ReadRoute[] {
  const token = new Map(ctx.tenants.map((t) => [t.storeId, t.token]));
  return [
    {
      name: "GET /public/v1/orders?limit=20",
      short: "list",
      targets: interleave(ctx.tenants.map((t) => [{ path: "/public/v1/orders?limit=20", token: t.token }])),
    },
    {
      name: "GET /public/v1/orders/{id}",
      short: "detail",
      targets: interleave(
        ctx.tenants.map((t) =>
          orders.filter((o) => o.storeId === t.storeId).map((o) => ({ path: `/public/v1/orders/${o.id}`, token: token.get(o.storeId) ?? "" })),
        ),
      ),
    },
  ];
}
