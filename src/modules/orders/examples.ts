import {
  ADDRESS,
  CUSTOMER_ID,
  NEW_CUSTOMER_ID,
  notFound,
  one,
  ORDER_ID,
  page,
  PICKUP_ORDER_ID,
  PRODUCT,
  T,
  UNKNOWN_ID,
  type OperationExamples,
  type ProblemExample,
} from "../../platform/examples.js";
import type { orderRoutes } from "./routes.js";

type OrderOperationId = (typeof orderRoutes)[number]["operationId"];

const ANA = { id: CUSTOMER_ID, name: "Ana Souza", phone: "+55 11 91234-5678" };

/** The delivery order of the examples: 51.90 + 56.40 + 13.00 = 121.30, plus an 8.50 fee. */
const ORDER = {
  id: ORDER_ID,
  orderNumber: 1042,
  status: "PENDING",
  type: "DELIVERY",
  subtotal: 121.3,
  deliveryFee: 8.5,
  discount: 0,
  total: 129.8,
  customer: ANA,
  deliveryAddress: ADDRESS,
  items: [
    {
      id: "0cfd004c-6eef-4e74-bbf4-9c13b3c95583",
      productId: PRODUCT.margherita,
      name: "Margherita",
      quantity: 1,
      unitPrice: 42.9,
      total: 51.9,
      notes: "Well done, please",
      additionals: [{ name: "Stuffed crust", quantity: 1, price: 9 }],
    },
    {
      id: "76ce5f83-f743-401f-aa71-8d90acdb6433",
      productId: PRODUCT.pepperoni,
      name: "Pepperoni",
      quantity: 1,
      unitPrice: 49.9,
      total: 56.4,
      notes: null,
      additionals: [{ name: "Extra cheese", quantity: 1, price: 6.5 }],
    },
    { id: "6a077cdf-8de0-4618-b71b-633c02f0c929", productId: PRODUCT.cola, name: "Cola", quantity: 2, unitPrice: 6.5, total: 13, notes: null, additionals: [] },
  ],
  payments: [{ method: "CREDIT_CARD", status: "APPROVED", value: 129.8, changeFor: null }],
  version: 1,
  createdAt: T.created,
  updatedAt: T.created,
};

export const ORDER_DETAIL = {
  ...ORDER,
  couponCode: null,
  statusHistory: [{ status: "PENDING", at: T.created, reason: null }],
  scheduledFor: null,
  notes: "Ring the bell twice",
  cancellationReason: null,
};

const CONFIRMED_DETAIL = {
  ...ORDER_DETAIL,
  status: "CONFIRMED",
  version: 2,
  updatedAt: T.confirmed,
  statusHistory: [...ORDER_DETAIL.statusHistory, { status: "CONFIRMED", at: T.confirmed, reason: null }],
};

/** A PICKUP order for a new customer paying cash: 2 × (32.50 + 5.00) + 49.90 = 124.90. */
const PICKUP_DETAIL = {
  id: PICKUP_ORDER_ID,
  orderNumber: 1043,
  status: "PENDING",
  type: "PICKUP",
  subtotal: 124.9,
  deliveryFee: 0,
  discount: 0,
  total: 124.9,
  customer: { id: NEW_CUSTOMER_ID, name: "Marcos Pereira", phone: "+55 11 97777-1234" },
  deliveryAddress: null,
  items: [
    {
      id: "3e8a1c5f-7d2b-4a9e-8c6f-1b4d7a2e9c05",
      productId: PRODUCT.burger,
      name: "Classic Burger",
      quantity: 2,
      unitPrice: 32.5,
      total: 75,
      notes: "No pickles",
      additionals: [{ name: "Bacon", quantity: 1, price: 5 }],
    },
    {
      id: "5b9d3f7a-1e4c-4b8a-9d2f-6c0e8a4b2d71",
      productId: PRODUCT.pepperoni,
      name: "Pepperoni",
      quantity: 1,
      unitPrice: 49.9,
      total: 49.9,
      notes: null,
      additionals: [],
    },
  ],
  payments: [{ method: "CASH", status: "PENDING", value: 124.9, changeFor: 150 }],
  version: 1,
  createdAt: "2025-03-01T19:02:44.310Z",
  updatedAt: "2025-03-01T19:02:44.310Z",
  couponCode: null,
  statusHistory: [{ status: "PENDING", at: "2025-03-01T19:02:44.310Z", reason: null }],
  scheduledFor: "2025-03-01T19:45:00.000Z",
  notes: null,
  cancellationReason: null,
};

/** An order naming a product the store's catalog does not have, at `field` of the body sent to `path`. */
export const unknownProduct = (summary: string, path: string, field: string): ProblemExample => ({
  summary,
  code: "UNPROCESSABLE_ENTITY",
  detail: `The order cannot be registered: no product ${UNKNOWN_ID} in this store's catalog.`,
  instance: path,
  errors: [{ field, code: "UNKNOWN_PRODUCT", message: `no product ${UNKNOWN_ID} in this store's catalog` }],
});

export const orderExamples = {
  listOrders: {
    response: one("The newest order, with more to read", page([ORDER], ORDER_ID)),
    problem: {
      summary: "A status that is not a filter value",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `status` must be one of: PENDING, CONFIRMED, PREPARING, READY, DISPATCHED, DELIVERED, CANCELLED.",
      instance: "/public/v1/orders",
      errors: [
        {
          field: "status",
          code: "INVALID_VALUE",
          message: "`status` must be one of: PENDING, CONFIRMED, PREPARING, READY, DISPATCHED, DELIVERED, CANCELLED",
          allowed: ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"],
        },
      ],
    },
  },
  createOrder: {
    request: {
      existingCustomer: {
        summary: "Delivery for an existing customer (customerId)",
        value: {
          type: "DELIVERY",
          customerId: CUSTOMER_ID,
          items: [
            { productId: PRODUCT.margherita, quantity: 1, notes: "Well done, please", additionals: [{ name: "Stuffed crust", quantity: 1 }] },
            { productId: PRODUCT.pepperoni, quantity: 1, additionals: [{ name: "Extra cheese", quantity: 1 }] },
            { productId: PRODUCT.cola, quantity: 2 },
          ],
          deliveryAddress: ADDRESS,
          payments: [{ method: "CREDIT_CARD", value: 129.8 }],
          notes: "Ring the bell twice",
        },
      },
      newCustomer: {
        summary: "Scheduled pickup for a new customer (customer), paid in cash",
        value: {
          type: "PICKUP",
          customer: { name: "Marcos Pereira", phone: "+55 11 97777-1234", email: "marcos.pereira@example.com" },
          items: [
            { productId: PRODUCT.burger, quantity: 2, notes: "No pickles", additionals: [{ name: "Bacon", quantity: 1 }] },
            { productId: PRODUCT.pepperoni, quantity: 1 },
          ],
          payments: [{ method: "CASH", value: 124.9, changeFor: 150 }],
          scheduledFor: "2025-03-01T19:45:00.000Z",
        },
      },
    },
    response: {
      existingCustomer: { summary: "The delivery order registered (existingCustomer)", value: ORDER_DETAIL },
      newCustomer: { summary: "The pickup order registered, with its new customer (newCustomer)", value: PICKUP_DETAIL },
    },
    problem: unknownProduct("A product the catalog does not have", "/public/v1/orders", "items[0].productId"),
  },
  getOrderById: {
    response: one("A delivery order waiting for confirmation", ORDER_DETAIL),
    problem: notFound("order", "/public/v1/orders/{id}", UNKNOWN_ID),
  },
  updateOrderStatus: {
    request: {
      confirm: { summary: "Confirm and send to the kitchen", value: { status: "CONFIRMED" } },
      cancel: { summary: "Cancel (a reason is required)", value: { status: "CANCELLED", reason: "Out of mozzarella" } },
    },
    response: one("The order, now CONFIRMED", CONFIRMED_DETAIL),
    problem: {
      summary: "A move the lifecycle does not allow",
      code: "UNPROCESSABLE_ENTITY",
      detail: "A DELIVERY order cannot go from CONFIRMED to DELIVERED; next allowed: PREPARING, READY, CANCELLED.",
      instance: `/public/v1/orders/${ORDER_ID}/status`,
      errors: [
        {
          field: "status",
          code: "INVALID_TRANSITION",
          message: "A DELIVERY order cannot go from CONFIRMED to DELIVERED; next allowed: PREPARING, READY, CANCELLED.",
          from: "CONFIRMED",
          to: "DELIVERED",
        },
      ],
    },
  },
} satisfies Record<OrderOperationId, OperationExamples>;
