import type { OrderStatus, OrderType } from "../../platform/db/prisma.js";
import { unprocessable } from "../../platform/errors.js";

/**
 * The order state machine: PENDING → CONFIRMED → (PREPARING) → READY → DISPATCHED → DELIVERED, PICKUP orders
 * skipping DISPATCHED; any non-final status may become CANCELLED; DELIVERED and CANCELLED are final.
 */

/** Every order status, in lifecycle order: the GraphQL enum and the REST schemas list them in this order. */
export const ORDER_STATUSES = ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"] as const satisfies readonly OrderStatus[];
export const ORDER_TYPES = ["DELIVERY", "PICKUP"] as const satisfies readonly OrderType[];

const TERMINAL: ReadonlySet<OrderStatus> = new Set(["DELIVERED", "CANCELLED"]);

const FORWARD: Record<OrderType, Partial<Record<OrderStatus, OrderStatus[]>>> = {
  DELIVERY: {
    PENDING: ["CONFIRMED"],
    CONFIRMED: ["PREPARING", "READY"],
    PREPARING: ["READY"],
    READY: ["DISPATCHED"],
    DISPATCHED: ["DELIVERED"],
  },
  // Counter pickup skips DISPATCHED: READY → DELIVERED when the customer collects it.
  PICKUP: {
    PENDING: ["CONFIRMED"],
    CONFIRMED: ["PREPARING", "READY"],
    PREPARING: ["READY"],
    READY: ["DELIVERED"],
  },
};

export function allowedNext(type: OrderType, from: OrderStatus): OrderStatus[] {
  const forward = FORWARD[type][from];
  // Terminal, or a status this type never reaches (DISPATCHED for PICKUP): nothing follows.
  return forward ? [...forward, "CANCELLED"] : [];
}

/**
 * The statuses an order of each type may reach `to` from, derived from the table above: the condition of a move
 * that runs without reading the order first (moveOrder in ./sql.ts).
 */
export function allowedFrom(to: OrderStatus): Record<OrderType, OrderStatus[]> {
  const from = (type: OrderType) => ORDER_STATUSES.filter((status) => allowedNext(type, status).includes(to));
  return { DELIVERY: from("DELIVERY"), PICKUP: from("PICKUP") };
}

/**
 * Every status an order of `type` passes through when nothing is skipped and nothing goes wrong, from PENDING to
 * DELIVERED: the first forward move of each status in the table above (the others skip an optional step).
 */
export function fullPath(type: OrderType): OrderStatus[] {
  const path: OrderStatus[] = ["PENDING"];
  for (let next = FORWARD[type].PENDING?.[0]; next; next = FORWARD[type][next]?.[0]) path.push(next);
  return path;
}

export function isTerminal(status: OrderStatus): boolean {
  return TERMINAL.has(status);
}

/** Throws 422 INVALID_TRANSITION unless `to` may follow `from` for this order type. */
export function checkTransition(type: OrderType, from: OrderStatus, to: OrderStatus): void {
  if (allowedNext(type, from).includes(to)) return;
  const why =
    from === to
      ? `The order is already ${from}.`
      : isTerminal(from)
        ? `The order is ${from}, which is final.`
        : `A ${type} order cannot go from ${from} to ${to}; next allowed: ${allowedNext(type, from).join(", ")}.`;
  throw unprocessable(why, [{ field: "status", code: "INVALID_TRANSITION", message: why, from, to }]);
}
