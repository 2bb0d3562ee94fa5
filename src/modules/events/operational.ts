import { type Static, Type } from "@sinclair/typebox";
import { type EventDeclaration, Uuid } from "../../platform/events/declaration.js";

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

/** The operational event types: they are about an endpoint (`data.endpointId`) and go only to its Application. */
export const OPERATIONAL_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS);

type WebhookEventCatalog = typeof WEBHOOK_EVENTS;

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends WebhookEventCatalog {}
}
