import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { catalogUpdated } from "../../src/modules/catalog/events.js";

interface FlushPayload {
  storeId: string;
}

function assertPayload(payload: unknown): asserts payload is FlushPayload {
  if (!payload || typeof payload !== "object" || typeof (payload as FlushPayload).storeId !== "string") {
    throw new Error("flush_catalog_changes payload needs storeId");
  }
}

/** Closes a store's catalog window: one catalog.updated per (item, action), in one transaction. */
export function flushCatalogChanges(services: Services): Task {
  return async (payload) => {
    assertPayload(payload);
    const { storeId } = payload;
    await services.db.$transaction(async (tx) => {
      const changes = await tx.catalogChange.findMany({ where: { storeId }, orderBy: { createdAt: "asc" } });
      if (changes.length === 0) return;
      await tx.catalogChange.deleteMany({ where: { id: { in: changes.map((c) => c.id) } } });
      const seen = new Map<string, (typeof changes)[number]>();
      for (const c of changes) seen.set(`${c.itemId}\u0000${c.action}`, c);
      for (const c of seen.values()) {
        await emitEvent(tx, storeId, "catalog.updated", catalogUpdated(c));
      }
    });
  };
}
