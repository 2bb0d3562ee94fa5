import { defineRoute } from "../../platform/route.js";
import { locationHeader } from "../../platform/schemas.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";
import { AddressFragment } from "../store/routes.js";

/* An order's REST shape is these fragments over the Order type: each fragment is an OpenAPI component. */

const OrderCustomerFragment = graphql(`fragment OrderCustomer on Customer { id name phone }`);

const OrderItemFragment = graphql(`fragment OrderItem on OrderItem {
  id productId name quantity unitPrice total notes additionals { name quantity price } }`);

const PaymentFragment = graphql(`fragment Payment on Payment { method status value changeFor }`);

/** The list item: items and payments in full. */
const OrderFragment = graphql(
  `fragment Order on Order {
    id orderNumber status type subtotal deliveryFee discount total
    customer { ...OrderCustomer }
    deliveryAddress { ...Address }
    items { ...OrderItem }
    payments { ...Payment }
    version createdAt updatedAt }`,
  [OrderCustomerFragment, AddressFragment, OrderItemFragment, PaymentFragment],
);

/** Every write answers with the order as the detail route shows it. */
export const OrderDetailFragment = graphql(
  `fragment OrderDetail on Order {
    ...Order couponCode statusHistory { status at reason } scheduledFor notes cancellationReason }`,
  [OrderFragment],
);

export const orderRoutes = [
  defineRoute({
    operationId: "listOrders",
    method: "GET",
    path: "/public/v1/orders",
    tag: "Orders",
    summary: "List orders",
    description:
      "Newest first (createdAt, then id). With updated_since: only orders changed at or after it, oldest change first " +
      "(updatedAt, then id), to reconcile after missed webhooks.",
    document: graphql(
      `query listOrders($limit: Int, $cursor: String, $status: OrderStatus, $updatedSince: DateTime) {
        orders(limit: $limit, cursor: $cursor, status: $status, updatedSince: $updatedSince) {
          data { ...Order }
          pagination { ...Pagination }
        }
      }`,
      [OrderFragment, PaginationFragment],
    ),
    bind: { rename: { updated_since: "updatedSince" } },
    respond: (data) => ({ body: data.orders }),
    status: 200,
    response: { description: "A page of orders", component: "OrderPage" },
  }),
  defineRoute({
    operationId: "getOrderById",
    method: "GET",
    path: "/public/v1/orders/{id}",
    tag: "Orders",
    summary: "Get an order",
    description: "The list fields plus statusHistory, scheduledFor, notes, couponCode and cancellationReason.",
    document: graphql(`query getOrderById($id: ID!) { order(id: $id) { ...OrderDetail } }`, [OrderDetailFragment]),
    respond: (data) => ({ body: data.order }),
    status: 200,
    response: { description: "The order" },
    errors: [404],
  }),
  defineRoute({
    operationId: "createOrder",
    method: "POST",
    path: "/public/v1/orders",
    tag: "Orders",
    summary: "Register an order",
    description:
      "Creates an order in PENDING and emits order.created (plus customer.created when `customer` creates one). " +
      "Prices come from the catalog: unitPrice or total sent by the client are ignored. An unknown or paused product, " +
      "an unknown customerId or payments that do not add up to the total are 422.",
    document: graphql(`mutation createOrder($input: CreateOrderInput!) { createOrder(input: $input) { ...OrderDetail } }`, [OrderDetailFragment]),
    respond: (data) => ({ body: data.createOrder, headers: { location: `/public/v1/orders/${data.createOrder.id}` } }),
    status: 201,
    response: { description: "The order", headers: locationHeader("/public/v1/orders/{id}") },
    errors: [409, 422],
  }),
  defineRoute({
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
    document: graphql(
      `mutation updateOrderStatus($id: ID!, $status: OrderStatus!, $reason: String) {
        updateOrderStatus(id: $id, status: $status, reason: $reason) { ...OrderDetail } }`,
      [OrderDetailFragment],
    ),
    respond: (data) => ({ body: data.updateOrderStatus }),
    status: 200,
    response: { description: "The order after the change" },
    errors: [404, 409, 422],
  }),
];
