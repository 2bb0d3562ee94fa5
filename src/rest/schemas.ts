import { EVENT_TYPES } from "../events/types.js";
import type { JsonSchema } from "./route.js";
import { ORDER_STATUSES, ORDER_TYPES } from "../orders/lifecycle.js";
import { STORE_STATUSES } from "../store/status.js";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES } from "../webhooks/statuses.js";
import { PAYMENT_METHODS } from "../orders/service.js";
import { SCENARIOS } from "../sandbox/scenarios.js";
import { MAX_AMOUNT, MAX_YEAR, MIN_YEAR } from "../input.js";

/** JSON schemas of response bodies: printed into OpenAPI and checked by the contract tests. */

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });
export const uuid: JsonSchema = { type: "string", format: "uuid" };
export const dateTime: JsonSchema = { type: "string", format: "date-time" };
export const money: JsonSchema = { type: "number", multipleOf: 0.01, description: "Amount with at most two decimals" };

/** The Location header of a 201: the new resource's path, relative to the API's base URL. */
export const locationHeader = (path: string) => ({
  Location: { description: `Path of the created resource, ${path}`, schema: { type: "string", format: "uri-reference" } },
});

export const AddressSchema: JsonSchema = {
  type: "object",
  required: ["street", "number", "neighborhood", "city", "state", "postalCode"],
  properties: {
    street: { type: "string" },
    number: { type: "string" },
    neighborhood: { type: "string" },
    city: { type: "string" },
    state: { type: "string" },
    postalCode: { type: "string" },
    complement: nullable({ type: "string" }),
  },
};

export const StoreSchema: JsonSchema = {
  type: "object",
  required: ["id", "code", "name", "slug", "logo", "phone", "isActive", "status", "address", "openingHours", "publicSettings"],
  properties: {
    id: uuid,
    code: { type: "string", description: "Alphanumeric store code; equals the token's tenant_id" },
    name: { type: "string" },
    slug: { type: "string" },
    logo: nullable({ type: "string" }),
    phone: nullable({ type: "string" }),
    isActive: { type: "boolean" },
    status: { type: "string", enum: [...STORE_STATUSES] },
    address: nullable(AddressSchema),
    openingHours: {
      type: "array",
      items: {
        type: "object",
        required: ["dayOfWeek", "opens", "closes"],
        properties: { dayOfWeek: { type: "integer", minimum: 0, maximum: 6 }, opens: { type: "string" }, closes: { type: "string" } },
      },
    },
    publicSettings: {
      type: "object",
      description: "Settings the store publishes; the keys below are the usual ones, a store may add others",
      additionalProperties: true,
      properties: {
        currency: { type: "string", description: "ISO 4217 code, e.g. BRL" },
        timezone: { type: "string", description: "IANA zone the opening hours are in, e.g. America/Sao_Paulo" },
        acceptsDelivery: { type: "boolean" },
        acceptsPickup: { type: "boolean" },
        minimumOrder: { type: "number", description: "Smallest order total accepted, in currency units" },
      },
    },
  },
};

// ---- Read API: store, orders, customers, catalog ----

/** Query parameters shared by the lists. Text is coerced ("20" → 20) but never clamped: 0, 101, "abc" are 400. */
export const limitParam: JsonSchema = { type: "integer", minimum: 1, maximum: 100, default: 20, description: "Page size, 1 to 100 (default 20)" };
export const cursorParam: JsonSchema = { type: "string", minLength: 1, description: "pagination.nextCursor of the previous page (the id of its last item)" };
export const updatedSinceParam: JsonSchema = {
  type: "string",
  format: "date-time",
  description: `ISO 8601 date-time with a zone (e.g. 2025-01-31T12:00:00.000Z), years ${MIN_YEAR} to ${MAX_YEAR}; only items with updatedAt at or after it, oldest change first`,
};

const integer: JsonSchema = { type: "integer" };
const text: JsonSchema = { type: "string" };

export const PaginationSchema: JsonSchema = {
  type: "object",
  required: ["hasMore", "cursor", "nextCursor"],
  properties: {
    hasMore: { type: "boolean" },
    cursor: { ...nullable(text), description: "Id of the last returned item; null on the last page" },
    nextCursor: { ...nullable(text), description: "Same value as cursor (both published names)" },
  },
};

/** `{ data: [item], pagination }`, the body of every paginated list. */
export const pageOf = (item: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["data", "pagination"],
  properties: { data: { type: "array", items: item }, pagination: PaginationSchema },
});

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

export const CustomerSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "phone", "email", "createdAt", "updatedAt"],
  properties: { id: uuid, name: text, phone: nullable(text), email: nullable(text), createdAt: dateTime, updatedAt: dateTime },
};

export const CustomerDetailSchema: JsonSchema = {
  type: "object",
  required: [...(CustomerSchema.required as string[]), "deliveryAddresses", "contactSummary"],
  properties: {
    ...(CustomerSchema.properties as Record<string, JsonSchema>),
    deliveryAddresses: {
      type: "array",
      items: {
        type: "object",
        required: ["id", ...(AddressSchema.required as string[])],
        properties: { id: uuid, ...(AddressSchema.properties as Record<string, JsonSchema>) },
      },
    },
    contactSummary: {
      type: "object",
      description: "The customer's order history with the store",
      required: ["orderCount", "firstOrderAt", "lastOrderAt"],
      properties: { orderCount: integer, firstOrderAt: nullable(dateTime), lastOrderAt: nullable(dateTime) },
    },
  },
};

export const CategorySchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "position"],
  properties: { id: uuid, name: text, position: { type: "integer", description: "Display order, ascending" } },
};

export const ProductSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "description", "price", "image", "categoryId", "isActive"],
  properties: {
    id: uuid,
    name: text,
    description: nullable(text),
    price: money,
    image: nullable(text),
    categoryId: uuid,
    isActive: { type: "boolean", description: "False while the store has paused the product" },
  },
};

const choiceFields = { id: uuid, name: text, price: money, isAvailable: { type: "boolean" }, position: integer };

export const ProductDetailSchema: JsonSchema = {
  type: "object",
  required: [...(ProductSchema.required as string[]), "variations", "additionals"],
  properties: {
    ...(ProductSchema.properties as Record<string, JsonSchema>),
    variations: {
      type: "array",
      description: "Sizes or versions; a variation's price replaces the product's price",
      items: { type: "object", required: Object.keys(choiceFields), properties: choiceFields },
    },
    additionals: {
      type: "array",
      description: "Extras; an item takes between minChoices and maxChoices of each",
      items: {
        type: "object",
        required: [...Object.keys(choiceFields), "minChoices", "maxChoices"],
        properties: { ...choiceFields, minChoices: integer, maxChoices: integer },
      },
    },
  },
};

/* Request bodies. Unknown fields are ignored, so a client may send an item's unitPrice
   or total: prices always come from the catalog. */

const shortText = (max: number, description?: string): JsonSchema => ({
  type: "string",
  minLength: 1,
  maxLength: max,
  ...(description ? { description } : {}),
});
/** Stored as int4 cents, hence the maximum. */
const amount: JsonSchema = { type: "number", minimum: 0, maximum: MAX_AMOUNT, multipleOf: 0.01 };

export const AddressInputSchema: JsonSchema = {
  type: "object",
  required: ["street", "number", "neighborhood", "city", "state", "postalCode"],
  properties: {
    street: shortText(200),
    number: shortText(20),
    neighborhood: shortText(120),
    city: shortText(120),
    state: shortText(60),
    postalCode: shortText(20),
    complement: nullable({ type: "string", maxLength: 200 }),
  },
};

export const CustomerInputSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { ...shortText(200), pattern: "\\S" },
    phone: nullable({ type: "string", maxLength: 40, pattern: "\\d" }),
    email: nullable({ type: "string", format: "email", maxLength: 254 }),
  },
};

export const CustomerPatchSchema: JsonSchema = {
  type: "object",
  minProperties: 1,
  description: "Any of name, phone, email; null clears phone or email.",
  properties: CustomerInputSchema.properties,
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
    reason: { type: "string", minLength: 1, maxLength: 500, description: "Required when status is CANCELLED" },
  },
  if: { properties: { status: { const: "CANCELLED" } }, required: ["status"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable.
  then: { required: ["reason"] },
};

export const ProductStatusSchema: JsonSchema = {
  type: "object",
  required: ["isActive"],
  properties: { isActive: { type: "boolean", description: "false pauses the product" } },
};

export const SandboxOrderSchema: JsonSchema = {
  type: "object",
  required: ["scenario"],
  properties: {
    scenario: {
      type: "string",
      enum: [...SCENARIOS],
      description:
        "delivery: fee and full address; pickup: counter pickup; scheduled: future delivery; cash: pay on delivery with change; " +
        "online_payment: approved digital payment; with_discount: coupon applied; cancelled: cancelled by the restaurant",
    },
  },
};

export const SeedResultSchema: JsonSchema = {
  type: "object",
  required: ["storeId", "categories", "products", "customers"],
  properties: {
    storeId: uuid,
    categories: { type: "integer", description: "Categories the store now has" },
    products: { type: "integer" },
    customers: { type: "integer" },
  },
};

export const WebhookEventTypeSchema: JsonSchema = { type: "string", enum: [...EVENT_TYPES], description: "A subscribable event type" };

export const CreateWebhookEndpointBody: JsonSchema = {
  type: "object",
  required: ["url", "events"],
  additionalProperties: false,
  properties: {
    url: { type: "string", format: "uri", maxLength: 2048, description: "https:// (http:// is accepted in SANDBOX); public hosts only" },
    events: { type: "array", minItems: 1, items: WebhookEventTypeSchema, description: "Each needs its event's read scope in the token" },
  },
};

export const WebhookEndpointSchema: JsonSchema = {
  type: "object",
  required: ["id", "url", "events", "status", "secretPrefix", "lastSuccessAt", "failureCount"],
  properties: {
    id: uuid,
    url: { type: "string", format: "uri" },
    events: { type: "array", items: { type: "string" } },
    status: { type: "string", enum: [...WEBHOOK_ENDPOINT_STATUSES] },
    secretPrefix: { type: "string", description: "First 12 characters of the signing secret" },
    lastSuccessAt: nullable(dateTime),
    failureCount: { type: "integer", minimum: 0, description: "Consecutive failed attempts" },
  },
};

export const WebhookEndpointCreatedSchema: JsonSchema = {
  type: "object",
  required: ["id", "url", "events", "secret", "secretPrefix", "message"],
  properties: {
    id: uuid,
    url: { type: "string" },
    events: { type: "array", items: { type: "string" } },
    secret: { type: "string", description: "whsec_… signing secret; returned only in this response" },
    secretPrefix: { type: "string" },
    message: { type: "string" },
  },
};

export const WebhookSecretRotatedSchema: JsonSchema = {
  type: "object",
  required: ["id", "secret", "secretPrefix", "previousSecretExpiresAt", "message"],
  properties: {
    id: uuid,
    secret: { type: "string", description: "The new signing secret; returned only in this response" },
    secretPrefix: { type: "string" },
    previousSecretExpiresAt: { ...dateTime, description: "Until then deliveries carry a v1 signature for the new and the previous secret" },
    message: { type: "string" },
  },
};

export const WebhookDeliverySchema: JsonSchema = {
  type: "object",
  required: [
    "id",
    "eventId",
    "eventType",
    "tenantId",
    "status",
    "httpStatus",
    "attempts",
    "lastAttemptAt",
    "nextAttemptAt",
    "lastError",
    "requestDurationMs",
    "endpointId",
  ],
  properties: {
    id: uuid,
    eventId: { type: "string", description: "Same on every attempt and replay: deduplicate on it" },
    eventType: { type: "string" },
    tenantId: { type: "string", description: "Store code" },
    status: { type: "string", enum: [...WEBHOOK_DELIVERY_STATUSES] },
    httpStatus: nullable({ type: "integer" }),
    attempts: { type: "integer", minimum: 0 },
    lastAttemptAt: nullable(dateTime),
    nextAttemptAt: nullable(dateTime),
    lastError: nullable({ type: "string" }),
    requestDurationMs: nullable({ type: "integer" }),
    endpointId: { ...uuid, description: "The endpoint the delivery is for (extension to the contract)" },
  },
};
