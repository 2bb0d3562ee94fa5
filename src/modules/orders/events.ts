import { type Static, Type } from "@sinclair/typebox";
import type { OrderStatus } from "../../platform/db/prisma.js";
import { type EventDeclaration, StringEnum, Uuid } from "../events/schema.js";
import { ORDER_STATUSES, ORDER_TYPES } from "./lifecycle.js";

/** The `data` of a status event: the order and the status it reached. */
const statusChange = <S extends OrderStatus>(status: S) => Type.Object({ orderId: Uuid(), status: StringEnum([status]) });

export const ORDER_EVENTS = {
  "order.created": {
    scope: "orders:read",
    emitted: "A new order is registered (also by the sandbox scenarios).",
    data: Type.Object({
      orderId: Uuid(),
      orderNumber: Type.Integer({ description: "Per-store sequence" }),
      total: Type.Number(),
      type: StringEnum(ORDER_TYPES),
      status: StringEnum(ORDER_STATUSES),
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
  "order.completed": { scope: "orders:read", emitted: "Right after `order.delivered`, when an order reaches DELIVERED.", data: statusChange("DELIVERED") },
} satisfies Record<`order.${string}`, EventDeclaration>;

type OrderEvents = typeof ORDER_EVENTS;
type StatusEventType = Exclude<keyof OrderEvents, "order.created">;

/** One status event with its data; the union ties each type to its own payload. */
export type StatusEvent = { [K in StatusEventType]: { type: K; data: Static<OrderEvents[K]["data"]> } }[StatusEventType];

/** The events a move to `to` emits, in order. Reaching DELIVERED also completes the order. */
export function statusEvents(orderId: string, to: OrderStatus, reason: string): StatusEvent[] {
  switch (to) {
    case "CONFIRMED":
      return [{ type: "order.confirmed", data: { orderId, status: to } }];
    case "PREPARING":
      return [{ type: "order.preparing", data: { orderId, status: to } }];
    case "READY":
      return [{ type: "order.ready", data: { orderId, status: to } }];
    case "DISPATCHED":
      return [{ type: "order.dispatched", data: { orderId, status: to } }];
    case "DELIVERED":
      return [
        { type: "order.delivered", data: { orderId, status: to } },
        { type: "order.completed", data: { orderId, status: to } },
      ];
    case "CANCELLED":
      return [{ type: "order.cancelled", data: { orderId, status: to, reason } }];
    default:
      return [];
  }
}
