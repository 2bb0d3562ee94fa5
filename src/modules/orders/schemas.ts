import type { JsonSchema } from "../../platform/route.js";
import { amount, cursorParam, dateTime, integer, limitParam, money, nullable, shortText, text, updatedSinceParam, uuid } from "../../platform/schemas.js";
import { defineBody, defineQuery } from "../../platform/validate.js";
import { MAX_YEAR, MIN_YEAR } from "../../platform/input.js";
import { AddressInputSchema, AddressSchema } from "../store/schemas.js";
import { CustomerInputSchema } from "../customers/schemas.js";
import { ORDER_STATUSES, ORDER_TYPES } from "./lifecycle.js";
import { PAYMENT_METHODS } from "./service.js";

export const OrderCustomerSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "phone"],
  properties: { id: uuid, name: text, phone: nullable(text) },
};

export const OrderItemSchema: JsonSchema = {
  type: "object",
  required: ["id", "productId", "name", "quantity", "unitPrice", "total", "notes", "additionals"],
  properties: {
    id: uuid,
    productId: { ...nullable(uuid), description: "Catalog product; null when it was deleted since" },
    name: text,
    quantity: integer,
    unitPrice: money,
    total: { ...money, description: "quantity × (unitPrice + additionals)" },
    notes: nullable(text),
    additionals: {
      type: "array",
      items: { type: "object", required: ["name", "quantity", "price"], properties: { name: text, quantity: integer, price: money } },
    },
  },
};

export const PaymentSchema: JsonSchema = {
  type: "object",
  required: ["method", "status", "value", "changeFor"],
  properties: {
    method: { type: "string", description: "CASH, CREDIT_CARD, DEBIT_CARD, PIX, ONLINE or VOUCHER" },
    status: { type: "string", description: "PENDING, APPROVED, DECLINED or REFUNDED" },
    value: money,
    changeFor: { ...nullable(money), description: "Cash handed over when change is needed" },
  },
};

/** The list item: both published families of field names (displayId and orderNumber, totalAmount and total). */
export const OrderSchema: JsonSchema = {
  type: "object",
  required: [
    "id",
    "displayId",
    "orderNumber",
    "status",
    "type",
    "subtotal",
    "deliveryFee",
    "discount",
    "total",
    "totalAmount",
    "customer",
    "deliveryAddress",
    "items",
    "payments",
    "createdAt",
    "updatedAt",
  ],
  properties: {
    id: uuid,
    displayId: { type: "string", description: 'orderNumber as a string, e.g. "1042"' },
    orderNumber: { type: "integer", description: "Per-store sequence number" },
    status: { type: "string", enum: [...ORDER_STATUSES] },
    type: { type: "string", enum: [...ORDER_TYPES] },
    subtotal: money,
    deliveryFee: money,
    discount: money,
    total: { ...money, description: "subtotal + deliveryFee − discount" },
    totalAmount: { ...money, description: "Same as total" },
    customer: nullable(OrderCustomerSchema),
    deliveryAddress: { ...nullable(AddressSchema), description: "Null for PICKUP orders" },
    items: { type: "array", items: OrderItemSchema },
    payments: { type: "array", items: PaymentSchema },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

export const OrderDetailSchema: JsonSchema = {
  type: "object",
  required: [...(OrderSchema.required as string[]), "couponCode", "statusHistory", "scheduledFor", "notes", "cancellationReason"],
  properties: {
    ...(OrderSchema.properties as Record<string, JsonSchema>),
    couponCode: nullable(text),
    statusHistory: {
      type: "array",
      description: "Every status the order went through, oldest first",
      items: {
        type: "object",
        required: ["status", "at", "reason"],
        properties: { status: { type: "string", enum: [...ORDER_STATUSES] }, at: dateTime, reason: nullable(text) },
      },
    },
    scheduledFor: { ...nullable(dateTime), description: "Requested delivery or pickup time of a scheduled order" },
    notes: nullable(text),
    cancellationReason: nullable(text),
  },
};

export const CreateOrderSchema: JsonSchema = {
  type: "object",
  required: ["type", "items"],
  properties: {
    type: { type: "string", enum: [...ORDER_TYPES] },
    customerId: { ...uuid, description: "An existing customer; or send `customer` to create one" },
    customer: { ...CustomerInputSchema, description: "Creates a customer (emits customer.created)" },
    items: {
      type: "array",
      minItems: 1,
      maxItems: 100,
      items: {
        type: "object",
        required: ["productId", "quantity"],
        properties: {
          productId: uuid,
          quantity: { type: "integer", minimum: 1, maximum: 999 },
          notes: nullable({ type: "string", maxLength: 500 }),
          additionals: {
            type: "array",
            maxItems: 50,
            items: {
              type: "object",
              required: ["name", "quantity"],
              properties: { name: shortText(200), quantity: { type: "integer", minimum: 1, maximum: 99 } },
            },
          },
        },
      },
    },
    deliveryAddress: { ...AddressInputSchema, description: "Required for DELIVERY; not allowed for PICKUP" },
    payments: {
      type: "array",
      maxItems: 10,
      description: "When given, the values must add up to the order total (prices come from the catalog)",
      items: {
        type: "object",
        required: ["method", "value"],
        properties: {
          method: { type: "string", enum: [...PAYMENT_METHODS] },
          value: amount,
          changeFor: { ...nullable(amount), description: "CASH only: what the customer pays with" },
        },
      },
    },
    scheduledFor: { ...dateTime, description: `Requested delivery or pickup time, in years ${MIN_YEAR} to ${MAX_YEAR}` },
    notes: nullable({ type: "string", maxLength: 500 }),
  },
};

export const StatusChangeSchema: JsonSchema = {
  type: "object",
  required: ["status"],
  properties: {
    status: { type: "string", enum: [...ORDER_STATUSES] },
    reason: { type: "string", minLength: 1, maxLength: 500, description: "Required, and not blank, when status is CANCELLED" },
  },
  if: { properties: { status: { const: "CANCELLED" } }, required: ["status"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable.
  then: { required: ["reason"], properties: { reason: { pattern: "\\S" } } },
};

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const listOrdersInput = defineQuery({
  limit: limitParam,
  cursor: cursorParam,
  status: { type: "string", enum: [...ORDER_STATUSES], description: "Only orders in this status" },
  updated_since: updatedSinceParam,
});

export const createOrderInput = defineBody(CreateOrderSchema);

export const orderStatusInput = defineBody(StatusChangeSchema);
