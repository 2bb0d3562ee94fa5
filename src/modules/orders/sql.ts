import { type OrderStatus, type OrderType, Prisma } from "../../platform/db/prisma.js";
import { keyset, type KeysetTerm, type SortKey } from "../../platform/schema/pagination.js";
import { orderTreeSql } from "./tree.js";

/** A catalog product as an order prices it: the additionals are matched by name. */
export interface PricedProduct {
  id: string;
  name: string;
  priceCents: number;
  isActive: boolean;
  additionals: { name: string; priceCents: number; isAvailable: boolean }[];
}

/** What drawOrderNumber returns: the number drawn and what pricing and checking the order needs. */
export interface OrderContext {
  orderSeq: number;
  publicSettings: Prisma.JsonValue;
  products: PricedProduct[];
  customerKnown: boolean;
}

/**
 * Draws the store's next order number, locking the store's row until the transaction ends, so concurrent orders
 * of one store get consecutive numbers; and reads in the same statement what the order needs (`OrderContext`):
 * the store's public settings, the catalog rows of `productIds` with their additionals, and whether `customerId`
 * is one of the store's customers. Plain SQL so that drawing a number leaves the store's updatedAt alone
 * (Prisma's update always sets an @updatedAt column), and so that the three reads make one round trip.
 */
export const drawOrderNumber = (storeId: string, productIds: string[], customerId: string | null) => Prisma.sql`
    update "Store" set "orderSeq" = "orderSeq" + 1 where id = ${storeId}::uuid
    returning "orderSeq", "publicSettings",
      coalesce((select json_agg(json_build_object('id', p.id, 'name', p.name, 'priceCents', p."priceCents", 'isActive', p."isActive",
          'additionals', coalesce((select json_agg(json_build_object('name', a.name, 'priceCents', a."priceCents", 'isAvailable', a."isAvailable")
            order by a.position, a.id) from "ProductAdditional" a where a."productId" = p.id), '[]')))
        from "Product" p where p."storeId" = ${storeId}::uuid and p.id = any(${productIds}::uuid[])), '[]') as products,
      exists(select 1 from "Customer" c where c.id = ${customerId}::uuid and c."storeId" = ${storeId}::uuid) as "customerKnown"`;

/** A column an order page sorts by, and its direction. */
export type OrderSortKey = SortKey<"createdAt" | "updatedAt" | "id">;

/** The filters of an order page: the store, and those the list's arguments add. */
export interface OrderPageFilter {
  storeId: string;
  customerId?: string;
  status?: string | null;
  updatedSince?: Date | null;
}

/**
 * One page of a store's orders, as trees (./tree.ts): `take` rows in `sort` order, strictly after the order
 * `cursorId` when given, by the one keyset rule (`keyset`, src/platform/schema/pagination.ts): its leading bound
 * lets the (storeId, sort…) index start at the cursor, so a deep page costs a first page. The cursor's sort values
 * are read inside the statement (each an InitPlan the index scan takes as a parameter), so a deep page is one round
 * trip; an unknown cursor, or another store's order, reads as null and matches no row.
 */
export function orderPageSql(filter: OrderPageFilter, sort: OrderSortKey[], cursorId: string | null, take: number, history: boolean) {
  const where = [Prisma.sql`o."storeId" = ${filter.storeId}::uuid`];
  if (filter.customerId) where.push(Prisma.sql`o."customerId" = ${filter.customerId}::uuid`);
  if (filter.status) where.push(Prisma.sql`o."status" = ${filter.status}::"OrderStatus"`);
  if (filter.updatedSince) where.push(Prisma.sql`o."updatedAt" >= ${filter.updatedSince.toISOString()}::timestamptz`);
  if (cursorId !== null) {
    const value = (field: OrderSortKey["field"]) =>
      Prisma.sql`(select ${Prisma.raw(`c."${field}"`)} from "Order" c where c.id = ${cursorId}::uuid and c."storeId" = ${filter.storeId}::uuid)`;
    const term = (t: KeysetTerm<OrderSortKey["field"]>) => Prisma.sql`${Prisma.raw(`o."${t.field}" ${t.op}`)} ${value(t.field)}`;
    const { lead, or } = keyset(sort);
    where.push(term(lead));
    where.push(
      Prisma.sql`(${Prisma.join(
        or.map((terms) => Prisma.join(terms.map(term), " and ")),
        " or ",
      )})`,
    );
  }
  const orderBy = Prisma.raw(sort.map((k) => `o."${k.field}" ${k.direction}`).join(", "));
  return Prisma.sql`select ${Prisma.raw(orderTreeSql(history))} from "Order" o where ${Prisma.join(where, " and ")} order by ${orderBy} limit ${take}::int`;
}

/**
 * The newest `take` orders of each of `customerIds` (of one store), as trees with each one's customer id: one
 * statement for every customer of a response, so a page of customers with their orders costs what a page of one does.
 */
export const customerOrdersSql = (storeId: string, customerIds: string[], take: number, history: boolean) =>
  Prisma.sql`select ${Prisma.raw(orderTreeSql(history))}, o."customerId" from (
      select *, row_number() over (partition by "customerId" order by "createdAt" desc, id desc) as rank
      from "Order" where "storeId" = ${storeId}::uuid and "customerId" = any(${customerIds}::uuid[])) o
    where o.rank <= ${take}::int order by o."createdAt" desc, o.id desc`;

/** One order of a store as a tree (no row when the id is another store's or unknown). */
export const orderByIdSql = (storeId: string, id: string, history: boolean) =>
  Prisma.sql`select ${Prisma.raw(orderTreeSql(history))} from "Order" o where o."id" = ${id}::uuid and o."storeId" = ${storeId}::uuid`;

/**
 * Moves an order to `to` and appends its status history row, with no read first, on two conditions: its status is
 * one `to` may follow for its type (`from`, see allowedFrom in ./lifecycle.ts), and its version is still the one
 * the statement's snapshot holds. A concurrent move makes this one wait on the row lock and then checks the
 * conditions again on the row it left, where the sub-select's version (computed once, from the snapshot) no longer
 * matches: so of two concurrent changes exactly one moves the order, and the history and versions stay linear.
 * CTEs for emitEvents, whose `changed` has a row only if the order moved and supplies the version the move made
 * (`fields`), so the move, its history row and its events make one statement. Plain SQL for that one round trip,
 * which no Prisma call makes.
 */
export const moveOrder = (m: {
  storeId: string;
  orderId: string;
  from: Record<OrderType, OrderStatus[]>;
  to: OrderStatus;
  reason: string | null;
  at: Date;
}) => Prisma.sql`
    moved as (
      update "Order"
      set status = ${m.to}::"OrderStatus", version = version + 1, "updatedAt" = ${m.at}::timestamptz,
          "cancellationReason" = case when ${m.to === "CANCELLED"}::boolean then ${m.reason}::text else "cancellationReason" end
      where id = ${m.orderId}::uuid and "storeId" = ${m.storeId}::uuid
        and ${JSON.stringify(m.from)}::jsonb -> type::text @> to_jsonb(status::text)
        and version = (select seen.version from "Order" seen where seen.id = ${m.orderId}::uuid)
      returning id, version
    ), changed as (
      insert into "OrderStatusHistory" (id, "orderId", status, reason, at)
      select gen_random_uuid(), id, ${m.to}::"OrderStatus", ${m.reason}::text, ${m.at}::timestamptz from moved
      returning (select jsonb_build_object('version', version) from moved) as fields
    )`;

export interface PlacedOrder {
  id: string;
  storeId: string;
  orderNumber: number;
  type: OrderType;
  customerId: string | null;
  subtotalCents: number;
  deliveryFeeCents: number;
  discountCents: number;
  totalCents: number;
  couponCode: string | null;
  deliveryAddress: Prisma.InputJsonObject | null;
  scheduledFor: Date | null;
  notes: string | null;
  at: Date;
  items: {
    id: string;
    productId: string;
    name: string;
    quantity: number;
    unitPriceCents: number;
    totalCents: number;
    notes: string | null;
    position: number;
    additionals: { name: string; quantity: number; priceCents: number }[];
  }[];
  payments: { method: string; status: string; valueCents: number; changeForCents: number | null }[];
}

/**
 * Writes a new PENDING order with its items, their additionals, its payments and its first status history row:
 * CTEs for emitEvents (`changed` is the history row), so the order and order.created make one statement; the
 * foreign keys are checked at its end, when every row is in. Plain SQL because Prisma's nested create sends one
 * INSERT per row and reads the order back: 7 round trips for a two-item order and its event, 1 here.
 */
export const insertOrder = (o: PlacedOrder) => {
  const additionals = o.items.flatMap((i) => i.additionals.map((a) => ({ ...a, orderItemId: i.id })));
  return Prisma.sql`
    placed as (
      insert into "Order" (id, "storeId", "orderNumber", type, status, "customerId", "subtotalCents", "deliveryFeeCents", "discountCents",
                           "totalCents", "couponCode", "deliveryAddress", "scheduledFor", notes, version, "createdAt", "updatedAt")
      values (${o.id}::uuid, ${o.storeId}::uuid, ${o.orderNumber}::int, ${o.type}::"OrderType", 'PENDING', ${o.customerId}::uuid,
              ${o.subtotalCents}::int, ${o.deliveryFeeCents}::int, ${o.discountCents}::int, ${o.totalCents}::int, ${o.couponCode}::text,
              ${o.deliveryAddress === null ? null : JSON.stringify(o.deliveryAddress)}::jsonb, ${o.scheduledFor}::timestamptz, ${o.notes}::text,
              1, ${o.at}::timestamptz, ${o.at}::timestamptz)
      returning id
    ), items as (
      insert into "OrderItem" (id, "orderId", "productId", name, quantity, "unitPriceCents", "totalCents", notes, position)
      select i.id, ${o.id}::uuid, i."productId", i.name, i.quantity, i."unitPriceCents", i."totalCents", i.notes, i.position
      from jsonb_to_recordset(${JSON.stringify(o.items)}::jsonb)
        as i(id uuid, "productId" uuid, name text, quantity int, "unitPriceCents" int, "totalCents" int, notes text, position int)
    ), additionals as (
      insert into "OrderItemAdditional" (id, "orderItemId", name, quantity, "priceCents")
      select gen_random_uuid(), a."orderItemId", a.name, a.quantity, a."priceCents"
      from jsonb_to_recordset(${JSON.stringify(additionals)}::jsonb) as a("orderItemId" uuid, name text, quantity int, "priceCents" int)
    ), payments as (
      insert into "Payment" (id, "orderId", method, status, "valueCents", "changeForCents")
      select gen_random_uuid(), ${o.id}::uuid, p.method, p.status, p."valueCents", p."changeForCents"
      from jsonb_to_recordset(${JSON.stringify(o.payments)}::jsonb) as p(method text, status text, "valueCents" int, "changeForCents" int)
    ), changed as (
      insert into "OrderStatusHistory" (id, "orderId", status, at) values (gen_random_uuid(), ${o.id}::uuid, 'PENDING', ${o.at}::timestamptz)
      returning id
    )`;
};
