import { Type } from "@sinclair/typebox";
import { ChangedFields, type EventDeclaration, Uuid } from "../../platform/events/declaration.js";

export const STORE_EVENTS = {
  "store.updated": {
    scope: "merchant:read",
    emitted: "The store profile changes.",
    data: Type.Object({ storeId: Uuid(), changed: ChangedFields }),
  },
} satisfies Record<`store.${string}`, EventDeclaration>;

type StoreEventCatalog = typeof STORE_EVENTS;

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends StoreEventCatalog {}
}
