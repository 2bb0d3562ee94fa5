import { type Static, Type } from "@sinclair/typebox";
import type { OrderStatus } from "../../platform/db/prisma.js";
import { type EventDeclaration, StringEnum, Uuid } from "../../platform/events/declaration.js";
import { ORDER_STATUSES, ORDER_TYPES } from "./lifecycle.js";

/** The order's version after the change the event reports: a receiver drops an event older than what it holds. */
const version = () => Type.Integer({ minimum: 1, description: "The order's version after this change (1 at creation, +1 per change)" });

/** The `data` of a status event: the order, the status it reached and the version that made. */
const statusChange = <S extends OrderStatus>(status: S) => Type.Object({ orderId: Uuid(), status: StringEnum([status]), version: version() });

export const ORDER_EVENTS = {
  "order.created": {
    scope: "orders:read",
    emitted: "A new order is registered (also by the sandbox scenarios).",
    data: Type.Object({
      orderId: Uuid(),
      orderNumber: Type.Integer({ description: "Per-store sequence" }),
      total: Type.Number({ "x-decimal-places": 2, description: "The order total: an amount with at most two decimals" }),
      type: StringEnum(ORDER_TYPES),
      status: StringEnum(ORDER_STATUSES),
      version: version(),
    }),
  },
  "order.confirmed": { scope: "orders:read", emitted: "PENDING → CONFIRMED.", data: statusChange("CONFIRMED") },
  "order.preparing": { scope: "orders:read", emitted: "CONFIRMED → PREPARING.", data: statusChange("PREPARING") },
  "order.ready": { scope: "orders:read", emitted: "CONFIRMED or PREPARING → READY.", data: statusChange("READY") },
  "order.dispatched": { scope: "orders:read", emitted: "READY → DISPATCHED (DELIVERY orders).", data: statusChange("DISPATCHED") },
  "order.delivered": { scope: "orders:read", emitted: "→ DELIVERED (terminal).", data: statusChange("DELIVERED") },
  "order.cancelled": {
    scope: "orders:read",
    emitted: "Any non-terminal status → CANCELLED (terminal).",
    data: Type.Composite([statusChange("CANCELLED"), Type.Object({ reason: Type.String() })]),
  },
  "order.completed": {
    scope: "orders:read",
    emitted: "Right after `order.delivered`, when an order reaches DELIVERED, with the same version.",
    data: statusChange("DELIVERED"),
  },
} satisfies Record<`order.${string}`, EventDeclaration>;

type OrderEvents = typeof ORDER_EVENTS;
type StatusEventType = Exclude<keyof OrderEvents, "order.created">;

/** One status event with its data; the union ties each type to its own payload. */
export type StatusEvent = { [K in StatusEventType]: { type: K; data: Static<OrderEvents[K]["data"]> } }[StatusEventType];

/**
 * The events a move to `to` emits, in order, each with the version the move made. Reaching DELIVERED also
 * completes the order: one change, so order.completed carries order.delivered's version.
 */
export function statusEvents(orderId: string, to: OrderStatus, reason: string, version: number): StatusEvent[] {
  switch (to) {
    case "CONFIRMED":
      return [{ type: "order.confirmed", data: { orderId, status: to, version } }];
    case "PREPARING":
      return [{ type: "order.preparing", data: { orderId, status: to, version } }];
    case "READY":
      return [{ type: "order.ready", data: { orderId, status: to, version } }];
    case "DISPATCHED":
      return [{ type: "order.dispatched", data: { orderId, status: to, version } }];
    case "DELIVERED":
      return [
        { type: "order.delivered", data: { orderId, status: to, version } },
        { type: "order.completed", data: { orderId, status: to, version } },
      ];
    case "CANCELLED":
      return [{ type: "order.cancelled", data: { orderId, status: to, reason, version } }];
    default:
      return [];
  }
}

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends OrderEvents {}
}
