import type { InputShapeFromFields } from "@pothos/core";
import { queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "../../platform/schema/builder.js";
import type { GraphQLResolveInfo } from "graphql";
import { STORE_READ, tenantOf, type Context } from "../../platform/schema/context.js";
import { byIdArgs, storeField, storePrismaField } from "../../platform/schema/store-fields.js";
import { runCommand } from "../../platform/schema/commands.js";
import { AddressInput, AddressRef } from "../store/graphql.js";
import { NewCustomerInput } from "../customers/graphql.js";
import { storedAddress } from "../store/address.js";
import { idArgs, pageLimitInput, uuid } from "../../platform/schemas.js";
import { jsonArgs } from "../../platform/validate.js";
import { CreateOrderSchema, ORDER_LIST_ARGS, StatusChangeSchema } from "./schemas.js";
import { MONEY, money, pageType, UUID_TEXT } from "../../platform/schema/fields.js";
import { DEFAULT_PAGE_SIZE, paginate, type SortKey } from "../../platform/schema/pagination.js";
import { notFound } from "../../platform/errors.js";
import { batchStatements } from "../../platform/db/batch.js";
import type DataLoader from "dataloader";
import type { Prisma, Tx } from "../../platform/db/prisma.js";
import { changeOrderStatus, createOrder, PAYMENT_METHODS, PAYMENT_STATUSES } from "./service.js";
import { ORDER_STATUSES, ORDER_TYPES } from "./lifecycle.js";
import { customerOrdersSql, orderByIdSql, orderPageSql, type OrderPageFilter } from "./sql.js";
import { decodeOrderTree, type OrderTree } from "./tree.js";

/** Orders: one Order type carrying both published field families (displayId and orderNumber, totalAmount and total). */

export const OrderStatusEnum = builder.enumType("OrderStatus", { values: ORDER_STATUSES });
export const OrderTypeEnum = builder.enumType("OrderType", { values: ORDER_TYPES });

/** Newest first (createdAt, then id); the index (storeId, createdAt desc, id desc) serves it. */
const NEWEST_FIRST: SortKey<"createdAt" | "id">[] = [
  { field: "createdAt", direction: "desc" },
  { field: "id", direction: "desc" },
];
/** With updated_since: oldest change first, so a partner pages forward through changes. */
const OLDEST_CHANGE_FIRST: SortKey<"updatedAt" | "id">[] = [
  { field: "updatedAt", direction: "asc" },
  { field: "id", direction: "asc" },
];

builder.prismaObject("OrderItemAdditional", {
  fields: (t) => ({
    name: t.exposeString("name"),
    quantity: t.exposeInt("quantity"),
    price: t.float({ description: "Unit price of the additional", extensions: MONEY, resolve: (a) => money(a.priceCents) }),
  }),
});

builder.prismaObject("OrderItem", {
  fields: (t) => ({
    id: t.exposeID("id"),
    productId: t.exposeString("productId", { nullable: true, description: "Catalog product, null when it was deleted since.", extensions: UUID_TEXT }),
    name: t.exposeString("name"),
    quantity: t.exposeInt("quantity"),
    unitPrice: t.float({ extensions: MONEY, resolve: (i) => money(i.unitPriceCents) }),
    total: t.float({ description: "quantity × (unitPrice + additionals)", extensions: MONEY, resolve: (i) => money(i.totalCents) }),
    notes: t.exposeString("notes", { nullable: true }),
    additionals: t.relation("additionals"),
  }),
});

builder.prismaObject("Payment", {
  fields: (t) => ({
    method: t.exposeString("method", { description: "How the customer pays", extensions: { jsonSchema: { enum: [...PAYMENT_METHODS] } } }),
    status: t.exposeString("status", { description: "CASH stays PENDING until delivery", extensions: { jsonSchema: { enum: [...PAYMENT_STATUSES] } } }),
    value: t.float({ extensions: MONEY, resolve: (p) => money(p.valueCents) }),
    changeFor: t.float({
      nullable: true,
      description: "Cash handed over, when change is needed",
      extensions: MONEY,
      resolve: (p) => (p.changeForCents === null ? null : money(p.changeForCents)),
    }),
  }),
});

builder.prismaObject("OrderStatusHistory", {
  name: "OrderStatusChange",
  fields: (t) => ({
    status: t.expose("status", { type: OrderStatusEnum }),
    at: t.expose("at", { type: "DateTime" }),
    reason: t.exposeString("reason", { nullable: true }),
  }),
});

export const Order = builder.prismaObject("Order", {
  fields: (t) => ({
    id: t.exposeID("id"),
    displayId: t.string({ description: 'orderNumber as a string, e.g. "1042" (formal schema name)', resolve: (o) => String(o.orderNumber) }),
    orderNumber: t.exposeInt("orderNumber", { description: "Per-store sequence number" }),
    status: t.expose("status", { type: OrderStatusEnum }),
    type: t.expose("type", { type: OrderTypeEnum }),
    subtotal: t.float({ extensions: MONEY, resolve: (o) => money(o.subtotalCents) }),
    deliveryFee: t.float({ extensions: MONEY, resolve: (o) => money(o.deliveryFeeCents) }),
    discount: t.float({ extensions: MONEY, resolve: (o) => money(o.discountCents) }),
    couponCode: t.exposeString("couponCode", { nullable: true }),
    total: t.float({ description: "subtotal + deliveryFee − discount", extensions: MONEY, resolve: (o) => money(o.totalCents) }),
    totalAmount: t.float({ description: "Same as total (formal schema name)", extensions: MONEY, resolve: (o) => money(o.totalCents) }),
    customer: t.relation("customer", { nullable: true }),
    deliveryAddress: t.field({
      type: AddressRef,
      nullable: true,
      description: "Null for PICKUP orders",
      resolve: (o) => storedAddress(o.deliveryAddress),
    }),
    items: t.relation("items"),
    payments: t.relation("payments"),
    statusHistory: t.relation("statusHistory", { description: "Every status the order went through, oldest first" }),
    scheduledFor: t.expose("scheduledFor", { type: "DateTime", nullable: true, description: "Requested delivery or pickup time of a scheduled order" }),
    notes: t.exposeString("notes", { nullable: true }),
    cancellationReason: t.exposeString("cancellationReason", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    version: t.exposeInt("version", { description: "1 at creation, +1 per change; order.* events carry the version they produced" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const OrderPage = pageType("OrderPage", Order);

/** What an order read loads beside its columns (the selection GraphQL was asked for). */
type OrderQuery = { include?: Prisma.OrderInclude; select?: Prisma.OrderSelect };

/** An unknown cursor is told from the end of the list by its row. */
const CURSOR_FIELDS = { id: true } as const;

const orderListArgs = builder.args((t) => ({
  limit: t.int({ description: "1..100, default 20" }),
  cursor: t.string({ description: "pagination.nextCursor of the previous page" }),
  status: t.field({ type: OrderStatusEnum }),
  updatedSince: t.field({ type: "DateTime", description: "Only orders with updatedAt at or after this instant" }),
}));

type OrderListArgs = InputShapeFromFields<typeof orderListArgs>;

/**
 * Whether an order read loads the status history: the order tree (tree.ts) always holds the order's columns, its
 * customer, items with their additionals and payments, in the orders it declares; the history only when the
 * GraphQL selection asks for it. A selection that reaches further (the customer's own relations) is answered by
 * Pothos loading that relation by the customer's id.
 */
const wantsHistory = (query: OrderQuery): boolean => query.include?.statusHistory !== undefined || query.select?.statusHistory !== undefined;

async function loadTrees(db: Tx, sql: Prisma.Sql): Promise<OrderTree[]> {
  // The statement's one column is an order tree, which decodeOrderTree checks as it reads it (tree.ts builds both).
  const rows = await db.$queryRaw<{ order: unknown }[]>(sql);
  return rows.map((r) => decodeOrderTree(r.order));
}

/** One page of a store's orders: Query.orders (the token's store) and Store.orders (any store an administrator names). */
function listOrders(ctx: Context, storeId: string, args: OrderListArgs, info: GraphQLResolveInfo) {
  const history = wantsHistory(queryFromInfo({ context: ctx, info, path: ["data"] }));
  const filter: OrderPageFilter = { storeId, status: args.status, updatedSince: args.updatedSince };
  const sort = args.updatedSince ? OLDEST_CHANGE_FIRST : NEWEST_FIRST;
  // One statement per page, the cursor's sort values read inside it (test/read/queries.test.ts counts it).
  return paginate<OrderTree>({
    limit: args.limit,
    cursor: args.cursor,
    sort,
    findCursor: (id) => ctx.db.order.findFirst({ where: { id, storeId }, select: CURSOR_FIELDS }),
    findMany: ({ take }) => loadTrees(ctx.db, orderPageSql(filter, sort, null, take, history)),
    findManyAfterId: ({ cursorId, take }) => loadTrees(ctx.db, orderPageSql(filter, sort, cursorId, take, history)),
  });
}

/**
 * One order of a store, or NOT_FOUND: Query.order and Store.order, and the read-back of the order writes (on their
 * transaction client, so the answer is what commits).
 */
export async function findOrder(db: Tx, storeId: string, id: string, query: OrderQuery) {
  const [order] = await loadTrees(db, orderByIdSql(storeId, id, wantsHistory(query)));
  if (!order) throw notFound("order", id);
  return order;
}

storeField("orders", {
  type: OrderPage,
  description: "The store's orders, newest first; with updatedSince, changes oldest first.",
  scope: "orders:read",
  args: orderListArgs,
  input: { args: ORDER_LIST_ARGS },
  resolve: (storeId, args, ctx, info) => listOrders(ctx, storeId, args, info),
});

storePrismaField("order", {
  type: Order,
  description: "One order of the store; another store's id is NOT_FOUND.",
  scope: "orders:read",
  args: byIdArgs,
  input: idArgs,
  resolve: (query, storeId, args, ctx) => findOrder(ctx.db, storeId, args.id, query),
});

/** What a batch of Customer.orders shares: one statement per page size and selection. */
type CustomerOrdersKey = `${number}:${boolean}`;
const customerOrderBatches = new WeakMap<Context, Map<CustomerOrdersKey, DataLoader<string, OrderTree[]>>>();

/** A customer's newest orders; every customer of one response (same limit and selection) joins one statement. */
function customerOrders(ctx: Context, customer: { id: string; storeId: string }, take: number, history: boolean): Promise<OrderTree[]> {
  const batches = customerOrderBatches.get(ctx) ?? new Map<CustomerOrdersKey, DataLoader<string, OrderTree[]>>();
  customerOrderBatches.set(ctx, batches);
  const key: CustomerOrdersKey = `${take}:${history}`;
  let batch = batches.get(key);
  if (!batch) {
    batch = batchStatements(
      async (customerIds: readonly string[]) => {
        const rows = await ctx.db.$queryRaw<{ order: unknown; customerId: string }[]>(
          customerOrdersSql(customer.storeId, [...new Set(customerIds)], take, history),
        );
        const byCustomer = new Map<string, OrderTree[]>();
        for (const row of rows) byCustomer.set(row.customerId, [...(byCustomer.get(row.customerId) ?? []), decodeOrderTree(row.order)]);
        return customerIds.map((id) => byCustomer.get(id) ?? []);
      },
      { schedule: setImmediate },
    );
    batches.set(key, batch);
  }
  return batch.load(customer.id);
}

builder.prismaObjectFields("Customer", (t) => ({
  orders: t.field({
    type: [Order],
    description: "The customer's orders, newest first.",
    authScopes: STORE_READ("orders:read"),
    args: { limit: t.arg.int({ description: "1..100, default 20" }) },
    resolve: (customer, args, ctx, info) => {
      pageLimitInput.check(jsonArgs({ limit: args.limit }));
      return customerOrders(ctx, customer, args.limit ?? DEFAULT_PAGE_SIZE, wantsHistory(queryFromInfo({ context: ctx, info })));
    },
  }),
}));

const OrderItemAdditionalInput = builder.inputType("OrderItemAdditionalInput", {
  fields: (t) => ({
    name: t.string({ required: true, description: "Name of one of the product's additionals" }),
    quantity: t.int({ required: true }),
  }),
});

export const OrderItemInput = builder.inputType("OrderItemInput", {
  fields: (t) => ({
    productId: t.id({ required: true }),
    quantity: t.int({ required: true }),
    notes: t.string(),
    additionals: t.field({ type: [OrderItemAdditionalInput] }),
  }),
});

const PaymentInput = builder.inputType("PaymentInput", {
  fields: (t) => ({
    method: t.string({ required: true, description: PAYMENT_METHODS.join(", ") }),
    value: t.float({ required: true }),
    changeFor: t.float({ description: "CASH only: the amount the customer pays with" }),
  }),
});

const CreateOrderInput = builder.inputType("CreateOrderInput", {
  description: "Prices come from the catalog; prices sent by the client are ignored.",
  fields: (t) => ({
    type: t.field({ type: OrderTypeEnum, required: true }),
    customerId: t.id(),
    customer: t.field({ type: NewCustomerInput, description: "Creates a customer (customer.created)" }),
    items: t.field({ type: [OrderItemInput], required: true }),
    deliveryAddress: t.field({ type: AddressInput, description: "Required for DELIVERY, absent for PICKUP" }),
    payments: t.field({ type: [PaymentInput] }),
    scheduledFor: t.field({ type: "DateTime" }),
    notes: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createOrder: t.prismaField({
    type: Order,
    description: "Registers an order in PENDING and emits order.created (and customer.created for a new customer).",
    authScopes: { scope: "orders:write" },
    args: { input: t.arg({ type: CreateOrderInput, required: true }) },
    input: { object: { arg: "input", schema: CreateOrderSchema } },
    resolve: async (query, _root, { input }, ctx) => {
      const { storeId } = tenantOf(ctx);
      const order = {
        ...input,
        items: input.items.map((i) => ({ ...i, productId: String(i.productId) })),
        customerId: input.customerId ? String(input.customerId) : null,
      };
      return runCommand(ctx, async (tx) => {
        const { id } = await createOrder(tx, storeId, order);
        return findOrder(tx, storeId, id, query);
      });
    },
  }),
  updateOrderStatus: t.prismaField({
    type: Order,
    description: "Moves an order along its lifecycle; CANCELLED needs a reason.",
    authScopes: { scope: "orders:write" },
    args: {
      id: t.arg.id({ required: true }),
      status: t.arg({ type: OrderStatusEnum, required: true }),
      reason: t.arg.string(),
    },
    // The status and its reason travel together: which statuses need a reason is a rule over both.
    input: { args: { id: uuid }, object: { schema: StatusChangeSchema } },
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const { id } = args;
      return runCommand(ctx, async (tx) => {
        await changeOrderStatus(tx, storeId, id, args.status, args.reason);
        return findOrder(tx, storeId, id, query);
      });
    },
  }),
}));
