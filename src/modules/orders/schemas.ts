import type { JsonSchema } from "../../platform/json.js";
import { amount, cursorParam, dateTime, limitParam, notBlank, nullable, shortText, updatedSinceParam, uuid } from "../../platform/schemas.js";
import { MAX_YEAR, MIN_YEAR } from "../../platform/input.js";
import { AddressInputSchema } from "../store/schemas.js";
import { CustomerInputSchema } from "../customers/schemas.js";
import { ORDER_STATUSES, ORDER_TYPES } from "./lifecycle.js";
import { PAYMENT_METHODS } from "./service.js";

/** POST /orders' body fields, by name: the sandbox's order overrides take some of them as they are. */
export const CREATE_ORDER_PROPERTIES = {
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
} satisfies Record<string, JsonSchema>;

export const CreateOrderSchema: JsonSchema = { type: "object", required: ["type", "items"], properties: CREATE_ORDER_PROPERTIES };

const reason = (description: string): JsonSchema => ({ type: "string", minLength: 1, maxLength: 500, description });

export const OrderCancellationSchema: JsonSchema = {
  type: "object",
  description: "Cancels the order: a reason is required.",
  required: ["status", "reason"],
  properties: { status: { type: "string", enum: ["CANCELLED"] }, reason: { ...reason("Why the order is cancelled; not blank"), ...notBlank } },
};

export const OrderStatusAdvanceSchema: JsonSchema = {
  type: "object",
  description: "Moves the order to any status but CANCELLED.",
  required: ["status"],
  properties: { status: { type: "string", enum: ORDER_STATUSES.filter((s) => s !== "CANCELLED") }, reason: reason("An optional note") },
};

/**
 * One of two named bodies told apart by `status`, so generated clients see that CANCELLED needs a reason. The
 * server validates with this schema too (ajv's `discriminator`, src/platform/validate.ts).
 */
export const StatusChangeSchema: JsonSchema = {
  type: "object",
  required: ["status"],
  oneOf: [OrderStatusAdvanceSchema, OrderCancellationSchema],
  discriminator: { propertyName: "status" },
};

/** The order list's arguments, by name: the GraphQL fields check them, and GET /orders takes them as its query. */
export const ORDER_LIST_ARGS = {
  limit: limitParam,
  cursor: cursorParam,
  status: { type: "string", enum: [...ORDER_STATUSES], description: "Only orders in this status" },
  updatedSince: updatedSinceParam,
} satisfies Record<string, JsonSchema>;
