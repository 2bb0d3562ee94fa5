import { Prisma } from "../../platform/db/prisma.js";

/** Locks the store's row until the transaction ends, which serialises concurrent seeds of one store. Plain SQL for the FOR UPDATE, which Prisma cannot express. */
export const lockStore = (storeId: string) => Prisma.sql`select id from "Store" where id = ${storeId}::uuid for update`;
