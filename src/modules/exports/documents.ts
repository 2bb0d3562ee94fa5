import { graphql } from "../../platform/schema/typed.js";
import type { PublicAnswers } from "../../platform/answers.js";
import { MAX_PAGE_SIZE } from "../../platform/schema/pagination.js";
import { OrderDetailFragment } from "../orders/routes.js";
import { CustomerDetailFragment } from "../customers/routes.js";
import { ProductDetailFragment } from "../catalog/routes.js";
import type { ExportResource } from "./service.js";

/**
 * How an export reads its resource: the resource's list field a page of MAX_PAGE_SIZE at a time (keyset pages, so a
 * store of any size costs the same per page), each item selected with the fragment its GET-by-id route answers with,
 * so a line is that route's body. Every page runs in the export's snapshot transaction.
 */

const ORDERS = graphql(
  `query exportOrders($limit: Int, $cursor: String, $updatedSince: DateTime) {
    orders(limit: $limit, cursor: $cursor, updatedSince: $updatedSince) { data { ...OrderDetail } pagination { hasMore nextCursor } } }`,
  [OrderDetailFragment],
);

const CUSTOMERS = graphql(
  `query exportCustomers($limit: Int, $cursor: String, $updatedSince: DateTime) {
    customers(limit: $limit, cursor: $cursor, updatedSince: $updatedSince) { data { ...CustomerDetail } pagination { hasMore nextCursor } } }`,
  [CustomerDetailFragment],
);

// The product list takes no updatedSince: products are few (a menu), so the export reads each one's updatedAt and keeps those changed since.
const PRODUCTS = graphql(
  `query exportProducts($limit: Int, $cursor: String) {
    products(limit: $limit, cursor: $cursor) { data { ...ProductDetail changedAt: updatedAt } pagination { hasMore nextCursor } } }`,
  [ProductDetailFragment],
);

/** A page of an export: the objects as their detail route answers them (the newest version's shape), and the next cursor. */
export interface ExportPage {
  items: unknown[];
  next: string | null;
}

type PageReader = (answers: PublicAnswers, ctx: object, cursor: string | null, updatedSince: Date | null) => Promise<ExportPage>;

const nextOf = (p: { hasMore: boolean; nextCursor: string | null }) => (p.hasMore ? p.nextCursor : null);

/** Each resource: the REST operation whose answer a line is, and how a page of it is read. */
export const EXPORT_PLANS: Record<ExportResource, { operationId: string; page: PageReader }> = {
  orders: {
    operationId: "getOrderById",
    page: async (answers, ctx, cursor, since) => {
      const { orders } = await answers.run(ORDERS, { limit: MAX_PAGE_SIZE, cursor, updatedSince: since?.toISOString() ?? null }, ctx);
      return { items: orders.data, next: nextOf(orders.pagination) };
    },
  },
  customers: {
    operationId: "getCustomerById",
    page: async (answers, ctx, cursor, since) => {
      const { customers } = await answers.run(CUSTOMERS, { limit: MAX_PAGE_SIZE, cursor, updatedSince: since?.toISOString() ?? null }, ctx);
      return { items: customers.data, next: nextOf(customers.pagination) };
    },
  },
  products: {
    operationId: "getProductById",
    page: async (answers, ctx, cursor, since) => {
      const { products } = await answers.run(PRODUCTS, { limit: MAX_PAGE_SIZE, cursor }, ctx);
      const items = products.data.filter((p) => since === null || new Date(p.changedAt) >= since).map(({ changedAt: _changedAt, ...product }) => product);
      return { items, next: nextOf(products.pagination) };
    },
  },
};
