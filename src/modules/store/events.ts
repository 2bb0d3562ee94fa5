import { Type } from "@sinclair/typebox";
import { ChangedFields, type EventDeclaration, Uuid } from "../events/schema.js";

export const STORE_EVENTS = {
  "store.updated": {
    scope: "merchant:read",
    emitted: "The store profile changes.",
    data: Type.Object({ storeId: Uuid(), changed: ChangedFields }),
  },
} satisfies Record<`store.${string}`, EventDeclaration>;
