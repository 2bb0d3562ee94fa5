import { defineRoute } from "../route.js";
import { OrderDetailSchema, OrderSchema, cursorParam, instantParam, limitParam, pageOf, updatedSinceParam, uuid } from "../schemas.js";
import { ORDER_STATUSES } from "../../graphql/orders.js";
import type { Page } from "../../graphql/pagination.js";

type OrderBody = Record<string, unknown> & { id: string };

/** The list item: both published families of names (DECISIONS §1), with items and payments in full. */
const ORDER_FIELDS = `
  id displayId orderNumber status type subtotal deliveryFee discount total totalAmount
  customer { id name phone }
  deliveryAddress { street number neighborhood city state postalCode complement }
  items { id productId name quantity unitPrice total notes additionals { name quantity price } }
  payments { method status value changeFor }
  createdAt updatedAt`;

export const orderRoutes = [
  defineRoute<{ orders: Page<OrderBody> }>({
    operationId: "listOrders",
    method: "GET",
    path: "/public/v1/orders",
    tag: "Orders",
    summary: "List orders",
    description:
      "Newest first (createdAt, then id). With updated_since: only orders changed at or after it, oldest change first " +
      "(updatedAt, then id), to reconcile after missed webhooks.",
    scope: "orders:read",
    query: {
      properties: {
        limit: limitParam,
        cursor: cursorParam,
        status: { type: "string", enum: [...ORDER_STATUSES], description: "Only orders in this status" },
        updated_since: updatedSinceParam,
      },
    },
    document: `query listOrders($limit: Int, $cursor: String, $status: OrderStatus, $updatedSince: DateTime) {
      orders(limit: $limit, cursor: $cursor, status: $status, updatedSince: $updatedSince) {
        data { ${ORDER_FIELDS} }
        pagination { hasMore cursor nextCursor }
      }
    }`,
    variables: ({ query }) => ({
      limit: query.limit,
      cursor: query.cursor ?? null,
      status: query.status ?? null,
      updatedSince: instantParam(query.updated_since, "updated_since"),
    }),
    respond: (data) => ({ body: data.orders }),
    status: 200,
    response: { description: "A page of orders", schema: pageOf(OrderSchema) },
  }),
  defineRoute<{ order: OrderBody }>({
    operationId: "getOrderById",
    method: "GET",
    path: "/public/v1/orders/{id}",
    tag: "Orders",
    summary: "Get an order",
    description: "The list fields plus statusHistory, scheduledFor, notes, couponCode and cancellationReason.",
    scope: "orders:read",
    pathParams: { id: uuid },
    document: `query getOrderById($id: ID!) {
      order(id: $id) {
        ${ORDER_FIELDS}
        couponCode statusHistory { status at reason } scheduledFor notes cancellationReason
      }
    }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.order }),
    status: 200,
    response: { description: "The order", schema: OrderDetailSchema },
    errors: [404],
  }),
];
