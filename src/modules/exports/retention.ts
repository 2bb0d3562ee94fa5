import type { Db } from "../../platform/db/prisma.js";
import type { Logger } from "../../platform/log.js";

/** Exports removed per statement: a chunk row is up to EXPORT_CHUNK_BYTES, so a batch frees a bounded amount at once. */
const BATCH = 100;

/** Removes the exports whose retention (EXPORT_RETENTION_HOURS after they ended) is over, with their files; how many. */
export async function removeExpiredExports(db: Db, log: Logger, now = new Date()): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await db.export.findMany({ where: { removeAt: { lt: now } }, select: { id: true }, take: BATCH });
    if (expired.length === 0) break;
    // The chunks go with their export (ON DELETE CASCADE).
    const { count } = await db.export.deleteMany({ where: { id: { in: expired.map((e) => e.id) } } });
    total += count;
    if (expired.length < BATCH) break;
  }
  if (total > 0) log.info({ count: total }, "expired exports removed");
  return total;
}
