import type { InputShapeFromFields } from "@pothos/core";
import { queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "../../platform/schema/builder.js";
import type { GraphQLResolveInfo } from "graphql";
import { tenantOf, type Context } from "../../platform/schema/context.js";
import { storeField } from "../../platform/schema/store-fields.js";
import { runCommand } from "../../platform/schema/commands.js";
import { pageType } from "../../platform/schema/fields.js";
import { paginate, type SortKey } from "../../platform/schema/pagination.js";
import { notFound } from "../../platform/errors.js";
import { idArgs, uuid } from "../../platform/schemas.js";
import { CUSTOMER_LIST_ARGS, CustomerInputSchema, CustomerPatchSchema } from "./schemas.js";
import { createCustomer, updateCustomer } from "./service.js";
import { SEARCH_DESCRIPTION, searchFilter } from "./search.js";
import type { AdminRole, Prisma } from "../../platform/db/prisma.js";
import type { Scope } from "../../platform/auth/scopes.js";
import { batchStatements } from "../../platform/db/batch.js";
import type DataLoader from "dataloader";

/** Customers: the list, the detail with delivery addresses and a contact summary. */

const BY_NAME: SortKey[] = [
  { field: "name", direction: "asc" },
  { field: "id", direction: "asc" },
];
/** With updated_since, like orders: oldest change first, so a partner pages forward through changes. */
const OLDEST_CHANGE_FIRST: SortKey[] = [
  { field: "updatedAt", direction: "asc" },
  { field: "id", direction: "asc" },
];

interface ContactSummary {
  orderCount: number;
  firstOrderAt: Date | null;
  lastOrderAt: Date | null;
}

const ContactSummaryRef = builder.objectRef<ContactSummary>("ContactSummary").implement({
  description: "The customer's order history with the store, summarised.",
  fields: (t) => ({
    orderCount: t.exposeInt("orderCount"),
    firstOrderAt: t.expose("firstOrderAt", { type: "DateTime", nullable: true }),
    lastOrderAt: t.expose("lastOrderAt", { type: "DateTime", nullable: true }),
  }),
});

const NO_ORDERS: ContactSummary = { orderCount: 0, firstOrderAt: null, lastOrderAt: null };

/**
 * Summaries are aggregates, which a Prisma include cannot express: every customer of one response joins one
 * batch, answered by a single GROUP BY once the current resolvers have run (no query per listed customer).
 */
function summaryBatch(ctx: Context): DataLoader<string, ContactSummary> {
  return batchStatements(
    async (customerIds: readonly string[]) => {
      const rows = await ctx.db.order.groupBy({
        by: ["customerId"],
        where: { customerId: { in: [...new Set(customerIds)] } },
        _count: { _all: true },
        _min: { createdAt: true },
        _max: { createdAt: true },
      });
      const byCustomer = new Map(
        rows.map((r) => [r.customerId ?? "", { orderCount: r._count._all, firstOrderAt: r._min.createdAt, lastOrderAt: r._max.createdAt }]),
      );
      return customerIds.map((id) => byCustomer.get(id) ?? NO_ORDERS);
    },
    { schedule: setImmediate },
  );
}

const summaryBatches = new WeakMap<Context, DataLoader<string, ContactSummary>>();
function contactSummaryOf(ctx: Context, customerId: string): Promise<ContactSummary> {
  let batch = summaryBatches.get(ctx);
  if (!batch) {
    batch = summaryBatch(ctx);
    summaryBatches.set(ctx, batch);
  }
  return batch.load(customerId);
}

builder.prismaObject("CustomerAddress", {
  fields: (t) => ({
    id: t.exposeID("id"),
    street: t.exposeString("street"),
    number: t.exposeString("number"),
    neighborhood: t.exposeString("neighborhood"),
    city: t.exposeString("city"),
    state: t.exposeString("state"),
    postalCode: t.exposeString("postalCode"),
    complement: t.exposeString("complement", { nullable: true }),
  }),
});

/**
 * id, name and phone travel inside every order (orders:read); the rest needs customers:read (or customers:write,
 * whose writes answer with the customer),
 * so GraphQL shows a token no more than REST does. Administrators, who read customers through Store.customers,
 * see all of it.
 */
const customersRead = { anyScope: ["customers:read", "customers:write"], adminRole: "VIEWER" } satisfies { anyScope: Scope[]; adminRole: AdminRole };

export const Customer = builder.prismaObject("Customer", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    phone: t.exposeString("phone", { nullable: true }),
    email: t.exposeString("email", { nullable: true, authScopes: customersRead }),
    createdAt: t.expose("createdAt", { type: "DateTime", authScopes: customersRead }),
    updatedAt: t.expose("updatedAt", { type: "DateTime", authScopes: customersRead }),
    deliveryAddresses: t.relation("addresses", {
      authScopes: customersRead,
      query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    }),
    contactSummary: t.field({
      type: ContactSummaryRef,
      authScopes: customersRead,
      resolve: (c, _args, ctx) => contactSummaryOf(ctx, c.id),
    }),
  }),
});

export const CustomerPage = pageType("CustomerPage", Customer);

const customerListArgs = builder.args((t) => ({
  limit: t.int({ description: "1..100, default 20" }),
  cursor: t.string({ description: "pagination.nextCursor of the previous page" }),
  search: t.string({ description: SEARCH_DESCRIPTION }),
  updatedSince: t.field({ type: "DateTime", description: "Only customers with updatedAt at or after this instant" }),
}));

type CustomerListArgs = InputShapeFromFields<typeof customerListArgs>;

/** One page of a store's customers: Query.customers (the token's store) and Store.customers. */
function listCustomers(ctx: Context, storeId: string, args: CustomerListArgs, info: GraphQLResolveInfo) {
  const where: Prisma.CustomerWhereInput = {
    storeId,
    ...(args.updatedSince ? { updatedAt: { gte: args.updatedSince } } : {}),
    ...searchFilter(args.search),
  };
  const query = queryFromInfo({ context: ctx, info, path: ["data"] });
  return paginate({
    limit: args.limit,
    cursor: args.cursor,
    sort: args.updatedSince ? OLDEST_CHANGE_FIRST : BY_NAME,
    findCursor: (id) => ctx.db.customer.findFirst({ where: { id, storeId }, select: { id: true, name: true, updatedAt: true } }),
    findMany: ({ after, orderBy, take }) => ctx.db.customer.findMany({ ...query, where: after ? { AND: [where, after] } : where, orderBy, take }),
  });
}

storeField("customers", {
  type: CustomerPage,
  description: "The store's customers by name; with updatedSince, changes oldest first.",
  scope: "customers:read",
  args: customerListArgs,
  input: { args: CUSTOMER_LIST_ARGS },
  resolve: (storeId, args, ctx, info) => listCustomers(ctx, storeId, args, info),
});

builder.queryFields((t) => ({
  customer: t.prismaField({
    type: Customer,
    description: "One customer of the store; another store's id is NOT_FOUND.",
    authScopes: { scope: "customers:read" },
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const { id } = args;
      const customer = await ctx.db.customer.findFirst({ ...query, where: { id, storeId } });
      if (!customer) throw notFound("customer", id);
      return customer;
    },
  }),
}));

const UpdateCustomerInput = builder.inputType("UpdateCustomerInput", {
  description: "Only the fields sent change; null clears phone or email.",
  fields: (t) => ({
    name: t.string(),
    phone: t.string(),
    email: t.string(),
  }),
});

/** A customer to create: on its own (createCustomer) or with an order (CreateOrderInput.customer). */
export const NewCustomerInput = builder.inputType("NewCustomerInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    phone: t.string(),
    email: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: Customer,
    description: "Creates a customer and emits customer.created.",
    authScopes: { scope: "customers:write" },
    args: { input: t.arg({ type: NewCustomerInput, required: true }) },
    input: { object: { arg: "input", schema: CustomerInputSchema } },
    resolve: async (query, _root, { input }, ctx) => {
      const { storeId } = tenantOf(ctx);
      return runCommand(ctx, async (tx) => {
        const { id } = await createCustomer(tx, storeId, input);
        return tx.customer.findUniqueOrThrow({ ...query, where: { id } });
      });
    },
  }),
  updateCustomer: t.prismaField({
    type: Customer,
    description: "Changes a customer's name, phone or email and emits customer.updated.",
    authScopes: { scope: "customers:write" },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateCustomerInput, required: true }) },
    input: { args: { id: uuid }, object: { arg: "input", schema: CustomerPatchSchema } },
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const { id } = args;
      // The input refused a null name; GraphQL's type still admits one.
      const input = { name: args.input.name ?? undefined, phone: args.input.phone, email: args.input.email };
      return runCommand(ctx, async (tx) => {
        await updateCustomer(tx, storeId, id, input);
        return tx.customer.findUniqueOrThrow({ ...query, where: { id } });
      });
    },
  }),
}));
