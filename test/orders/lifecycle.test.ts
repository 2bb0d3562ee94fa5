import { describe, expect, it } from "vitest";
import { allowedNext, checkTransition } from "../../src/modules/orders/lifecycle.js";
import { statusEvents } from "../../src/modules/orders/events.js";
import type { OrderStatus, OrderType } from "../../src/platform/db/prisma.js";

const STATUSES: OrderStatus[] = ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"];

// The lifecycle (PICKUP skips DISPATCHED), written out independently of the implementation's tables.
const LEGAL: Record<OrderType, string[]> = {
  DELIVERY: [
    "PENDING>CONFIRMED",
    "CONFIRMED>PREPARING",
    "CONFIRMED>READY",
    "PREPARING>READY",
    "READY>DISPATCHED",
    "DISPATCHED>DELIVERED",
    "PENDING>CANCELLED",
    "CONFIRMED>CANCELLED",
    "PREPARING>CANCELLED",
    "READY>CANCELLED",
    "DISPATCHED>CANCELLED",
  ],
  PICKUP: [
    "PENDING>CONFIRMED",
    "CONFIRMED>PREPARING",
    "CONFIRMED>READY",
    "PREPARING>READY",
    "READY>DELIVERED",
    "PENDING>CANCELLED",
    "CONFIRMED>CANCELLED",
    "PREPARING>CANCELLED",
    "READY>CANCELLED",
  ],
};

describe.each(["DELIVERY", "PICKUP"] as const)("%s orders", (type) => {
  for (const from of STATUSES) {
    for (const to of STATUSES) {
      const legal = LEGAL[type].includes(`${from}>${to}`);
      it(`${from} → ${to} is ${legal ? "allowed" : "422 INVALID_TRANSITION"}`, () => {
        if (legal) {
          expect(() => checkTransition(type, from, to)).not.toThrow();
        } else {
          let caught: unknown;
          try {
            checkTransition(type, from, to);
          } catch (e) {
            caught = e;
          }
          expect(caught).toMatchObject({ status: 422, code: "UNPROCESSABLE_ENTITY", violations: [{ field: "status", code: "INVALID_TRANSITION", from, to }] });
        }
      });
    }
  }

  it("terminal statuses allow nothing", () => {
    expect(allowedNext(type, "DELIVERED")).toEqual([]);
    expect(allowedNext(type, "CANCELLED")).toEqual([]);
  });
});

it("each move emits its event; DELIVERED also emits order.completed after order.delivered, with the same version", () => {
  const eventsFor = (to: OrderStatus) => statusEvents("0b0f4a52-1d8e-4c39-9a4f-3f5c2d6e7a81", to, "Closed early", 3).map((e) => e.type);
  expect(eventsFor("CONFIRMED")).toEqual(["order.confirmed"]);
  expect(eventsFor("PREPARING")).toEqual(["order.preparing"]);
  expect(eventsFor("READY")).toEqual(["order.ready"]);
  expect(eventsFor("DISPATCHED")).toEqual(["order.dispatched"]);
  expect(eventsFor("DELIVERED")).toEqual(["order.delivered", "order.completed"]);
  expect(eventsFor("CANCELLED")).toEqual(["order.cancelled"]);
  expect(statusEvents("0b0f4a52-1d8e-4c39-9a4f-3f5c2d6e7a81", "CANCELLED", "Closed early", 3)[0].data).toMatchObject({
    status: "CANCELLED",
    reason: "Closed early",
    version: 3,
  });
  expect(statusEvents("0b0f4a52-1d8e-4c39-9a4f-3f5c2d6e7a81", "DELIVERED", "", 6).map((e) => e.data.version)).toEqual([6, 6]);
});
