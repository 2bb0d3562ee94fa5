import { defineRoute } from "../../platform/route.js";
import { createOrderInput, listOrdersInput, OrderDetailSchema, OrderSchema, orderStatusInput } from "./schemas.js";
import { idPath, locationHeader, pageOf } from "../../platform/schemas.js";
import type { Page } from "../../platform/schema/pagination.js";

type OrderBody = Record<string, unknown> & { id: string };

/** The list item: both published families of names (displayId/orderNumber, totalAmount/total), items and payments in full. */
const ORDER_FIELDS = `
  id displayId orderNumber status type subtotal deliveryFee discount total totalAmount
  customer { id name phone }
  deliveryAddress { street number neighborhood city state postalCode complement }
  items { id productId name quantity unitPrice total notes additionals { name quantity price } }
  payments { method status value changeFor }
  createdAt updatedAt`;

/** Every write answers with the order as the detail route shows it. */
export const ORDER_DETAIL_FIELDS = `${ORDER_FIELDS}
  couponCode statusHistory { status at reason } scheduledFor notes cancellationReason`;

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
    query: listOrdersInput,
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
      updatedSince: query.updated_since ?? null,
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
    pathParams: idPath,
    document: `query getOrderById($id: ID!) { order(id: $id) { ${ORDER_DETAIL_FIELDS} } }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.order }),
    status: 200,
    response: { description: "The order", schema: OrderDetailSchema },
    errors: [404],
  }),
  defineRoute<{ createOrder: OrderBody }>({
    operationId: "createOrder",
    method: "POST",
    path: "/public/v1/orders",
    tag: "Orders",
    summary: "Register an order",
    description:
      "Creates an order in PENDING and emits order.created (plus customer.created when `customer` creates one). " +
      "Prices come from the catalog: unitPrice or total sent by the client are ignored. An unknown or paused product, " +
      "an unknown customerId or payments that do not add up to the total are 422.",
    scope: "orders:write",
    body: createOrderInput,
    document: `mutation createOrder($input: CreateOrderInput!) { createOrder(input: $input) { ${ORDER_DETAIL_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    respond: (data) => ({ body: data.createOrder, headers: { location: `/public/v1/orders/${data.createOrder.id}` } }),
    status: 201,
    response: { description: "The order", schema: OrderDetailSchema, headers: locationHeader("/public/v1/orders/{id}") },
    errors: [409, 422],
  }),
  defineRoute<{ updateOrderStatus: OrderBody }>({
    operationId: "updateOrderStatus",
    method: "PATCH",
    path: "/public/v1/orders/{id}/status",
    tag: "Orders",
    summary: "Move an order along its lifecycle",
    description:
      "PENDING → CONFIRMED → (PREPARING) → READY → DISPATCHED → DELIVERED for DELIVERY orders; PICKUP orders go READY → DELIVERED. " +
      "Any non-final status → CANCELLED with a reason. Other moves, including to the current status, are 422 with " +
      'errors[{ field: "status", code: "INVALID_TRANSITION", from, to }]. Each move emits its event; DELIVERED also emits order.completed. ' +
      "Of two concurrent changes one wins; the other is 409.",
    scope: "orders:write",
    pathParams: idPath,
    body: orderStatusInput,
    document: `mutation updateOrderStatus($id: ID!, $status: OrderStatus!, $reason: String) {
      updateOrderStatus(id: $id, status: $status, reason: $reason) { ${ORDER_DETAIL_FIELDS} } }`,
    variables: ({ path, body }) => ({ id: path.id, status: (body as { status: string }).status, reason: (body as { reason?: string }).reason ?? null }),
    respond: (data) => ({ body: data.updateOrderStatus }),
    status: 200,
    response: { description: "The order after the change", schema: OrderDetailSchema },
    errors: [404, 409, 422],
  }),
];
