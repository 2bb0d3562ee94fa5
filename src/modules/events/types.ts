import type { Scope } from "../../platform/auth/scopes.js";
import { CATALOG_EVENTS } from "../catalog/events.js";
import { CUSTOMER_EVENTS } from "../customers/events.js";
import { ORDER_EVENTS } from "../orders/events.js";
import { STORE_EVENTS } from "../store/events.js";
import type { EventDeclaration, EventType } from "../../platform/events/declaration.js";
import { EXPORT_EVENTS, TEST_EVENT, WEBHOOK_EVENTS } from "./operational.js";

/**
 * The registry of subscribable events, assembled from the declarations beside their emitters
 * (src/modules/<domain>/events.ts; the webhooks' operational events in ./operational.ts). The domains emit through
 * src/platform/events/outbox.ts and declare their events' types there by declaration merging (EventCatalog), so
 * they never import this module and the imports stay one-way. `satisfies` holds the registry to that catalog:
 * an event declared for the outbox but missing here fails the typecheck.
 */
export const EVENTS = { ...ORDER_EVENTS, ...CUSTOMER_EVENTS, ...CATALOG_EVENTS, ...STORE_EVENTS, ...WEBHOOK_EVENTS, ...EXPORT_EVENTS } satisfies Record<
  EventType,
  EventDeclaration
>;

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENTS, value);
}

export const EVENT_TYPES: EventType[] = Object.keys(EVENTS).filter(isEventType);

/** The read scope needed to subscribe to and receive each event type. */
export const EVENT_SCOPES: Readonly<Record<string, Scope>> = Object.fromEntries(EVENT_TYPES.map((t) => [t, EVENTS[t].scope]));

/** Sent only by the test operation; not subscribable. */
export const TEST_EVENT_TYPE = TEST_EVENT.type;

/** Every event a webhook endpoint can receive: the subscribable ones and the test event. */
export const DELIVERED_EVENTS: Record<string, EventDeclaration> = { ...EVENTS, [TEST_EVENT.type]: TEST_EVENT };
