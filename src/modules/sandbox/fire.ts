import { randomInt } from "node:crypto";
import type { OrderStatus, Tx } from "../../platform/db/prisma.js";
import { updateStoreProfile } from "../admin/operations.js";
import { setProductActive } from "../catalog/service.js";
import type { CatalogUpdated } from "../catalog/events.js";
import { createCustomer, updateCustomer } from "../customers/service.js";
import { type FeedEnvelope, readEvent } from "../events/feed.js";
import type { EventType } from "../../platform/events/declaration.js";
import { EVENT_TYPES } from "../events/types.js";
import { changeOrderStatus } from "../orders/service.js";
import { generateSandboxOrder } from "./scenarios.js";
import { seedSandboxStore } from "./seed.js";

/** What POST /sandbox/events can fire: every subscribable type but the operational webhook.* and export.* ones. */
export type SandboxEventType = Exclude<EventType, `webhook.${string}` | `export.${string}`>;

export function isSandboxEventType(type: string): type is SandboxEventType {
  return EVENT_TYPES.some((t) => t === type) && !type.startsWith("webhook.") && !type.startsWith("export.");
}

export const SANDBOX_EVENT_TYPES: readonly SandboxEventType[] = EVENT_TYPES.filter(isSandboxEventType);

/** The statuses an order passes through to emit each order.* event, from PENDING (DELIVERY orders). */
const ORDER_PATHS: Record<Exclude<Extract<EventType, `order.${string}`>, "order.created">, OrderStatus[]> = {
  "order.confirmed": ["CONFIRMED"],
  "order.preparing": ["CONFIRMED", "PREPARING"],
  "order.ready": ["CONFIRMED", "PREPARING", "READY"],
  "order.dispatched": ["CONFIRMED", "PREPARING", "READY", "DISPATCHED"],
  "order.delivered": ["CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"],
  "order.completed": ["CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"],
  "order.cancelled": ["CANCELLED"],
};

export type FiredEvent = { event: FeedEnvelope; catalogChange: null } | { event: null; catalogChange: CatalogUpdated };

/**
 * Fires an event of `type` on the sandbox store through the real commands, so everything that follows a real
 * change follows this one (webhooks, the feed, intermediate events: order.ready walks the order through
 * CONFIRMED and PREPARING first). catalog.updated is aggregated over a window, so it answers what changed.
 */
export async function fireSandboxEvent(tx: Tx, storeId: string, type: SandboxEventType, catalogWindowMs: number): Promise<FiredEvent> {
  switch (type) {
    case "store.updated":
      await updateStoreProfile(tx, storeId, { phone: `+55 11 3${randomInt(1_000_000, 9_999_999)}` });
      break;
    case "customer.created":
      await createCustomer(tx, storeId, { name: `Sandbox Customer ${randomInt(1000, 9999)}`, phone: `+55 11 9${randomInt(10_000_000, 99_999_999)}` });
      break;
    case "customer.updated": {
      const existing = await tx.customer.findFirst({ where: { storeId }, orderBy: { createdAt: "asc" }, select: { id: true } });
      const { id } = existing ?? (await createCustomer(tx, storeId, { name: "Sandbox Customer" }));
      await updateCustomer(tx, storeId, id, { phone: `+55 11 9${randomInt(10_000_000, 99_999_999)}` });
      break;
    }
    case "catalog.updated": {
      if ((await tx.product.count({ where: { storeId } })) === 0) await seedSandboxStore(tx, storeId);
      const product = await tx.product.findFirstOrThrow({ where: { storeId }, orderBy: [{ categoryPosition: "asc" }, { name: "asc" }] });
      await setProductActive(tx, storeId, product.id, !product.isActive, catalogWindowMs);
      return { event: null, catalogChange: { itemType: "product", itemId: product.id, action: product.isActive ? "product.paused" : "product.activated" } };
    }
    case "order.created":
      await generateSandboxOrder(tx, storeId, "delivery");
      break;
    default: {
      const { id } = await generateSandboxOrder(tx, storeId, "delivery");
      for (const status of ORDER_PATHS[type]) await changeOrderStatus(tx, storeId, id, status, status === "CANCELLED" ? "Cancelled in the sandbox" : null);
    }
  }
  // The store's sequence row stays locked until this transaction ends, so its latest event of the type is this one.
  const last = await tx.event.findFirstOrThrow({ where: { storeId, type }, orderBy: { sequence: "desc" }, select: { id: true } });
  const event = await readEvent(tx, storeId, last.id, [type]);
  if (!event) throw new Error(`the ${type} event just fired is missing`);
  return { event, catalogChange: null };
}
