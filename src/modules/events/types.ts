import type { Scope } from "../../platform/auth/scopes.js";

/** Event types a webhook endpoint can subscribe to, with the read scope needed to subscribe to and receive each. */
export const EVENT_SCOPES = {
  "order.created": "orders:read",
  "order.confirmed": "orders:read",
  "order.preparing": "orders:read",
  "order.ready": "orders:read",
  "order.dispatched": "orders:read",
  "order.delivered": "orders:read",
  "order.cancelled": "orders:read",
  "order.completed": "orders:read",
  "customer.created": "customers:read",
  "customer.updated": "customers:read",
  "catalog.updated": "catalog:read",
  "store.updated": "merchant:read",
} as const satisfies Record<string, Scope>;

export type EventType = keyof typeof EVENT_SCOPES;
export const EVENT_TYPES = Object.keys(EVENT_SCOPES) as EventType[];

/** Sent only by the test operation; not subscribable. */
export const TEST_EVENT_TYPE = "webhook.test";

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_SCOPES, value);
}
