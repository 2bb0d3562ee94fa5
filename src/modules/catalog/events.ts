import { type Static, Type } from "@sinclair/typebox";
import { type EventDeclaration, StringEnum, Uuid } from "../../platform/events/declaration.js";

const CATALOG_ACTIONS = ["product.paused", "product.activated"] as const;
const CATALOG_ITEM_TYPES = ["product"] as const;

export const CATALOG_EVENTS = {
  "catalog.updated": {
    scope: "catalog:read",
    emitted:
      "A product is paused or resumed (`PATCH /public/v1/catalog/products/{id}/status`); changes within a window (default 5 s) become one event per product and action.",
    data: Type.Object({
      action: StringEnum(CATALOG_ACTIONS, {
        description: "`product.paused` when the product was paused (isActive false), `product.activated` when it was resumed",
      }),
      itemId: Uuid({ description: "Id of the product" }),
      itemType: StringEnum(CATALOG_ITEM_TYPES, { description: "What kind of item changed: always `product`" }),
    }),
  },
} satisfies Record<`catalog.${string}`, EventDeclaration>;

export type CatalogUpdated = Static<(typeof CATALOG_EVENTS)["catalog.updated"]["data"]>;

/**
 * The catalog.updated payload of a recorded change. Rows are written from a typed change (recordCatalogChange)
 * but read back as plain strings, so this checks them again; a mismatch is a bug, not bad input.
 */
export function catalogUpdated(change: { action: string; itemId: string; itemType: string }): CatalogUpdated {
  const action = CATALOG_ACTIONS.find((a) => a === change.action);
  const itemType = CATALOG_ITEM_TYPES.find((t) => t === change.itemType);
  if (!action || !itemType) throw new Error(`catalog change ${change.itemType} ${change.action} has no catalog.updated payload`);
  return { action, itemId: change.itemId, itemType };
}

type CatalogEventCatalog = typeof CATALOG_EVENTS;

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends CatalogEventCatalog {}
}
