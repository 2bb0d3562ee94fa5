import { queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "../../platform/schema/builder.js";
import type { GraphQLResolveInfo } from "graphql";
import { tenantOf, type Context } from "../../platform/schema/context.js";
import { storeField, storePrismaField } from "../../platform/schema/store-fields.js";
import type { Prisma } from "../../platform/db/prisma.js";
import { runCommand } from "../../platform/schema/commands.js";
import { idArgs, PAGE_ARGS, uuid } from "../../platform/schemas.js";
import { ProductStatusSchema } from "./schemas.js";
import { MONEY, money, pageType, UUID_TEXT } from "../../platform/schema/fields.js";
import { paginate, type SortKey } from "../../platform/schema/pagination.js";
import { notFound } from "../../platform/errors.js";
import { setProductActive } from "./service.js";

/** Catalog: active categories, products with their variations and additionals. */

/** Menu order: category position, name, id; Product.categoryPosition copies the category's position for one index. */
const MENU_ORDER: SortKey[] = [
  { field: "categoryPosition", direction: "asc" },
  { field: "name", direction: "asc" },
  { field: "id", direction: "asc" },
];

builder.prismaObject("ProductVariation", {
  description: "A size or version of the product; its price replaces the product's price.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    price: t.float({ extensions: MONEY, resolve: (v) => money(v.priceCents) }),
    isAvailable: t.exposeBoolean("isAvailable"),
    position: t.exposeInt("position"),
  }),
});

builder.prismaObject("ProductAdditional", {
  description: "An extra the customer may add; between minChoices and maxChoices of it per item.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    price: t.float({ extensions: MONEY, resolve: (a) => money(a.priceCents) }),
    minChoices: t.exposeInt("minChoices"),
    maxChoices: t.exposeInt("maxChoices"),
    isAvailable: t.exposeBoolean("isAvailable"),
    position: t.exposeInt("position"),
  }),
});

export const Product = builder.prismaObject("Product", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    price: t.float({ extensions: MONEY, resolve: (p) => money(p.priceCents) }),
    image: t.exposeString("image", { nullable: true }),
    categoryId: t.exposeString("categoryId", { extensions: UUID_TEXT }),
    isActive: t.exposeBoolean("isActive", { description: "False while the store has paused the product" }),
    category: t.relation("category"),
    variations: t.relation("variations", {
      description: "Sizes or versions; a variation's price replaces the product's price",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    additionals: t.relation("additionals", {
      description: "Extras; an item takes between minChoices and maxChoices of each",
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const Category = builder.prismaObject("Category", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    position: t.exposeInt("position", { description: "Display order, ascending" }),
    products: t.relation("products", { query: { orderBy: [{ name: "asc" }, { id: "asc" }] } }),
  }),
});

export const ProductPage = pageType("ProductPage", Product);

/** What a category read loads beside its columns (the selection GraphQL was asked for). */
type CategoryQuery = { include?: Prisma.CategoryInclude; select?: Prisma.CategorySelect };

/** A store's active categories in display order: Query.categories (the token's store) and Store.categories. */
function listCategories(ctx: Context, storeId: string, query: CategoryQuery) {
  return ctx.db.category.findMany({ ...query, where: { storeId, isActive: true }, orderBy: [{ position: "asc" }, { id: "asc" }] });
}

const productListArgs = builder.args((t) => ({
  limit: t.int({ description: "1..100, default 20" }),
  cursor: t.string({ description: "pagination.nextCursor of the previous page" }),
}));

/** One page of a store's products in menu order: Query.products and Store.products. */
function listProducts(ctx: Context, storeId: string, args: { limit?: number | null; cursor?: string | null }, info: GraphQLResolveInfo) {
  const query = queryFromInfo({ context: ctx, info, path: ["data"] });
  return paginate({
    limit: args.limit,
    cursor: args.cursor,
    sort: MENU_ORDER,
    findCursor: (id) => ctx.db.product.findFirst({ where: { id, storeId }, select: { id: true, categoryPosition: true, name: true } }),
    findMany: ({ after, orderBy, take }) => ctx.db.product.findMany({ ...query, where: after ? { AND: [{ storeId }, after] } : { storeId }, orderBy, take }),
  });
}

storePrismaField("categories", {
  type: [Category],
  description: "The store's active categories in display order.",
  scope: "catalog:read",
  args: {},
  resolve: (query, storeId, _args, ctx) => listCategories(ctx, storeId, query),
});

storeField("products", {
  type: ProductPage,
  description: "The store's products in menu order: category position, then name.",
  scope: "catalog:read",
  args: productListArgs,
  input: { args: PAGE_ARGS },
  resolve: (storeId, args, ctx, info) => listProducts(ctx, storeId, args, info),
});

builder.queryFields((t) => ({
  product: t.prismaField({
    type: Product,
    description: "One product with its variations and additionals; another store's id is NOT_FOUND.",
    authScopes: { scope: "catalog:read" },
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const { id } = args;
      const product = await ctx.db.product.findFirst({ ...query, where: { id, storeId } });
      if (!product) throw notFound("product", id);
      return product;
    },
  }),
}));

builder.mutationFields((t) => ({
  setProductStatus: t.prismaField({
    type: Product,
    description: "Pauses (isActive false) or resumes a product; reported by an aggregated catalog.updated.",
    authScopes: { scope: "catalog:write" },
    args: { id: t.arg.id({ required: true }), isActive: t.arg.boolean({ required: true }) },
    input: { args: { id: uuid }, object: { schema: ProductStatusSchema } },
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const { id } = args;
      const windowMs = ctx.services.config.CATALOG_EVENT_WINDOW_MS;
      return runCommand(ctx, async (tx) => {
        await setProductActive(tx, storeId, id, args.isActive, windowMs);
        return tx.product.findUniqueOrThrow({ ...query, where: { id } });
      });
    },
  }),
}));
