import type { EventData, EventType } from "../../platform/events/declaration.js";
import {
  CUSTOMER_ID,
  DELIVERY_ID,
  ENDPOINT_ID,
  EVENT_ID,
  EXPORT_ID,
  NEW_CUSTOMER_ID,
  notFound,
  one,
  ORDER_ID,
  PICKUP_ORDER_ID,
  PRODUCT,
  STORE_CODE,
  STORE_ID,
  T,
  UNKNOWN_ID,
  WEBHOOK_URL,
  type OperationExamples,
} from "../../platform/examples.js";
import type { TestEventData } from "./operational.js";
import type { eventRoutes } from "./routes.js";

type EventOperationId = (typeof eventRoutes)[number]["operationId"];

/** Event `data` of every delivered type, as the webhook bodies and the feed carry it. */
const EVENT_DATA: { [K in EventType]: EventData<K> } & { "webhook.test": TestEventData } = {
  "order.created": { orderId: ORDER_ID, orderNumber: 1042, total: 129.8, type: "DELIVERY", status: "PENDING", version: 1 },
  "order.confirmed": { orderId: ORDER_ID, status: "CONFIRMED", version: 2 },
  "order.preparing": { orderId: ORDER_ID, status: "PREPARING", version: 3 },
  "order.ready": { orderId: ORDER_ID, status: "READY", version: 4 },
  "order.dispatched": { orderId: ORDER_ID, status: "DISPATCHED", version: 5 },
  "order.delivered": { orderId: ORDER_ID, status: "DELIVERED", version: 6 },
  "order.cancelled": { orderId: PICKUP_ORDER_ID, status: "CANCELLED", version: 2, reason: "Customer called to cancel" },
  "order.completed": { orderId: ORDER_ID, status: "DELIVERED", version: 6 },
  "customer.created": { customerId: NEW_CUSTOMER_ID, name: "Marcos Pereira", phone: "+55 11 97777-1234" },
  "customer.updated": { customerId: CUSTOMER_ID, name: "Ana Souza", phone: "+55 11 91234-5678", email: "ana@souza.com.br", changed: ["email"] },
  "catalog.updated": { action: "product.paused", itemId: PRODUCT.pepperoni, itemType: "product" },
  "store.updated": { storeId: STORE_ID, changed: ["status"] },
  "webhook.endpoint.failed": { endpointId: ENDPOINT_ID, url: WEBHOOK_URL, reason: "A delivery ran out of its 10 attempts: HTTP 503 from the receiver" },
  "webhook.endpoint.disabled": { endpointId: ENDPOINT_ID, url: WEBHOOK_URL, reason: "The receiver answered 410 Gone" },
  "webhook.delivery.dead_lettered": {
    endpointId: ENDPOINT_ID,
    url: WEBHOOK_URL,
    reason: "10 attempts failed; the last: HTTP 503 from the receiver",
    deliveryId: DELIVERY_ID,
    eventId: EVENT_ID,
    eventType: "order.created",
  },
  "export.completed": { exportId: EXPORT_ID, resource: "orders", objectCount: 1042, sequence: 5310 },
  "export.failed": { exportId: EXPORT_ID, resource: "orders", error: "The Application's grant on the store was revoked" },
  "webhook.test": { message: "This is a test event from PartnerWebhooks: your endpoint is reachable and can verify our signature." },
};

/** The envelope of an event of the examples' store (webhook body and feed entry). */
export function envelope(type: keyof typeof EVENT_DATA, sequence: number, eventId: string, timestamp: string) {
  return { eventId, eventType: type, timestamp, tenantId: STORE_CODE, sequence, data: EVENT_DATA[type] };
}

const isExampleEvent = (type: string): type is keyof typeof EVENT_DATA => Object.hasOwn(EVENT_DATA, type);

/** The body of a webhook of this type, the n-th event of the examples' store; undefined for a type without data here. */
export function eventExample(type: string, sequence: number) {
  if (!isExampleEvent(type)) return undefined;
  return envelope(type, sequence, `9b1f${String(sequence).padStart(4, "0")}-4c2a-4e7d-8f3b-6a1d9e5c7b20`, "2025-03-01T18:30:00.012Z");
}

export const CREATED_EVENT = envelope("order.created", 41, EVENT_ID, "2025-03-01T18:30:00.012Z");

export const eventExamples = {
  listEvents: {
    response: one("The store's events after sequence 40", {
      data: [
        CREATED_EVENT,
        envelope("order.confirmed", 42, "cdf31695-e328-4b55-a993-a89a3010f7b4", T.confirmed),
        envelope("customer.created", 43, "d888088d-acdb-42e0-8aa1-4ccab213d709", "2025-03-01T19:02:44.322Z"),
      ],
      pagination: { hasMore: true, nextCursor: "43" },
    }),
    problem: {
      summary: "An after that is not a sequence number",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `after` must be a sequence number (1 to 16 digits).",
      instance: "/public/v1/events",
      errors: [{ field: "after", code: "INVALID_FORMAT", message: "`after` must be a sequence number (1 to 16 digits)" }],
    },
  },
  getEventById: {
    response: one("An order.created event", CREATED_EVENT),
    problem: notFound("event", "/public/v1/events/{eventId}", UNKNOWN_ID),
  },
} satisfies Record<EventOperationId, OperationExamples>;
