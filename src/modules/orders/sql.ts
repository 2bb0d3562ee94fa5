import { Prisma } from "../../platform/db/prisma.js";

/**
 * Draws the store's next order number and reads its public settings (returns orderSeq, publicSettings), locking
 * the store's row until the transaction ends, so concurrent orders of one store get consecutive numbers.
 * Plain SQL so that drawing a number leaves the store's updatedAt alone: Prisma's update always sets an
 * @updatedAt column.
 */
export const drawOrderNumber = (storeId: string) => Prisma.sql`
    update "Store" set "orderSeq" = "orderSeq" + 1 where id = ${storeId}::uuid returning "orderSeq", "publicSettings"`;
