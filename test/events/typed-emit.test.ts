import { expectTypeOf, it } from "vitest";
import { emitEvent } from "../../src/platform/events/outbox.js";
import type { EventData, EventType } from "../../src/platform/events/declaration.js";
import type { Tx } from "../../src/platform/db/prisma.js";
import type { EVENTS } from "../../src/modules/events/types.js";

/**
 * emitEvent takes only the payload declared for the event type. Checked by `tsc` (npm run typecheck): each
 * `@ts-expect-error` below fails the typecheck if the call it marks were accepted. Never called.
 */
const refusedPayloads = (tx: Tx, storeId: string, orderId: string) => {
  // @ts-expect-error order.created without orderNumber, total and type
  void emitEvent(tx, storeId, "order.created", { orderId, status: "PENDING" });
  // @ts-expect-error a field store.updated does not declare
  void emitEvent(tx, storeId, "store.updated", { storeId, changed: [], name: "x" });
  // @ts-expect-error order.confirmed carries status CONFIRMED only
  void emitEvent(tx, storeId, "order.confirmed", { orderId, status: "READY" });
  // @ts-expect-error order.cancelled needs its reason
  void emitEvent(tx, storeId, "order.cancelled", { orderId, status: "CANCELLED" });
  // @ts-expect-error not an event type
  void emitEvent(tx, storeId, "order.shipped", { orderId });
};

it("the outbox takes exactly the events the registry publishes", () => {
  // The domains declare their events to the outbox by declaration merging (EventCatalog); the registry spreads the
  // same declarations. A domain that merged its events but was left out of the registry, or the reverse, fails here.
  expectTypeOf<EventType>().toEqualTypeOf<keyof typeof EVENTS>();
});

it("each event's data type follows its declared schema", () => {
  expectTypeOf(refusedPayloads).toBeFunction();
  expectTypeOf<EventData<"order.cancelled">>().toEqualTypeOf<{ orderId: string; status: "CANCELLED"; version: number; reason: string }>();
  expectTypeOf<EventData<"customer.created">>().toEqualTypeOf<{ customerId: string; name: string; phone: string | null }>();
  expectTypeOf<EventData<"catalog.updated">>().toEqualTypeOf<{ action: "product.paused" | "product.activated"; itemId: string; itemType: "product" }>();
});
