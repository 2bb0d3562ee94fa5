import { Prisma } from "../../platform/db/prisma.js";

/**
 * Locks the store's row until the transaction ends, which serialises concurrent seeds of one store. FOR NO KEY
 * UPDATE, not FOR UPDATE: the foreign-key checks of other writes on the store (an event's, an order's) take KEY
 * SHARE on the row, which FOR UPDATE blocks, so a write holding the store's event sequence and a seed about to
 * emit could deadlock. Plain SQL for the row lock, which Prisma cannot express.
 */
export const lockStore = (storeId: string) => Prisma.sql`select id from "Store" where id = ${storeId}::uuid for no key update`;
