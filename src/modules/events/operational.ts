import { type Static, Type } from "@sinclair/typebox";
import { type EventDeclaration, StringEnum, Uuid } from "../../platform/events/declaration.js";

/** The synthetic event of a webhook test; delivered like the others but not subscribable (no fan-out). */
export const TEST_EVENT = {
  type: "webhook.test",
  scope: "webhooks:manage",
  emitted: "On demand, by `POST /public/v1/webhooks/{id}/test`. Not subscribable.",
  data: Type.Object({ message: Type.String() }),
} as const satisfies EventDeclaration & { type: string };

export type TestEventData = Static<typeof TEST_EVENT.data>;

const endpointFields = {
  endpointId: Uuid({ description: "The endpoint the event is about" }),
  url: Type.String({ description: "Its URL" }),
  reason: Type.String({ description: "Why, in words" }),
};

const DELIVERED_ELSEWHERE =
  "Delivered to the Application's other endpoints on the store that subscribe to it (or to `*`), never to the endpoint it is about. Extension to the contract.";

/**
 * Operational events about an Application's own endpoints, emitted in the transaction that records the change they
 * report (src/modules/webhooks/delivery/record.ts). Only the Application that owns the endpoint receives them (the fan-out,
 * src/modules/webhooks/sql/fan-out.ts). Declared here rather than beside their emitter because the webhooks domain
 * reads the registry of events (./types.ts), which must hold them: declared in webhooks, the two domains would import
 * each other.
 */
export const WEBHOOK_EVENTS = {
  "webhook.endpoint.failed": {
    scope: "webhooks:manage",
    emitted: `An ACTIVE endpoint turns FAILED: one of its deliveries ran out of scheduled attempts. ${DELIVERED_ELSEWHERE}`,
    data: Type.Object(endpointFields),
  },
  "webhook.endpoint.disabled": {
    scope: "webhooks:manage",
    emitted:
      "An endpoint turns INACTIVE by itself: its receiver answered 410 Gone, or all its attempts failed for WEBHOOK_DISABLE_AFTER (default 5 days). " +
      `Re-enable it with PATCH /public/v1/webhooks/{id} and recover what it missed. ${DELIVERED_ELSEWHERE}`,
    data: Type.Object(endpointFields),
  },
  "webhook.delivery.dead_lettered": {
    scope: "webhooks:manage",
    emitted: `A delivery ran out of scheduled attempts (DEAD_LETTER). Not emitted for deliveries of these operational events. ${DELIVERED_ELSEWHERE}`,
    data: Type.Object({
      ...endpointFields,
      deliveryId: Uuid(),
      eventId: Uuid({ description: "The dead-lettered event" }),
      eventType: Type.String(),
    }),
  },
} satisfies Record<`webhook.${string}`, EventDeclaration>;

/** What can be exported in bulk (src/modules/exports). */
export const EXPORT_RESOURCES = ["orders", "customers", "products"] as const;

const EXPORT_TO = "Delivered to the endpoints of the Application that requested the export, on its store. Extension to the contract.";

const exportFields = {
  exportId: Uuid({ description: "The export" }),
  resource: StringEnum(EXPORT_RESOURCES),
};

/**
 * Operational events about an Application's bulk export (src/modules/exports), emitted in the transaction that ends
 * it. Only the Application that requested it receives them (the fan-out reads its export); they are in the store's
 * feed like any other event. Declared here for the reason the webhook events are.
 */
export const EXPORT_EVENTS = {
  "export.completed": {
    scope: "webhooks:manage",
    emitted: `A bulk export's file is ready: GET /public/v1/exports/{exportId} for its link. ${EXPORT_TO}`,
    data: Type.Object({
      ...exportFields,
      objectCount: Type.Integer({ description: "Lines in the file" }),
      sequence: Type.Integer({ description: "The store's event sequence at the file's snapshot: read the feed after it" }),
    }),
  },
  "export.failed": {
    scope: "webhooks:manage",
    emitted: `A bulk export ran out of attempts (EXPORT_MAX_ATTEMPTS); its \`error\` says why. ${EXPORT_TO}`,
    data: Type.Object({ ...exportFields, error: Type.String({ description: "Why, in words" }) }),
  },
} satisfies Record<`export.${string}`, EventDeclaration>;

/**
 * The operational event types: they are about an endpoint (`data.endpointId`) or an export (`data.exportId`) and go
 * only to its Application.
 */
export const OPERATIONAL_EVENT_TYPES = [...Object.keys(WEBHOOK_EVENTS), ...Object.keys(EXPORT_EVENTS)];

/** The operational types about endpoints: the feed leaves them out for partners (an export's events it shows). */
export const ENDPOINT_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS);

type WebhookEventCatalog = typeof WEBHOOK_EVENTS;
type ExportEventCatalog = typeof EXPORT_EVENTS;

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends WebhookEventCatalog, ExportEventCatalog {}
}
