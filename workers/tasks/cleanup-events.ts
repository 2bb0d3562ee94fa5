import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { DELETE_EXPIRED_EVENTS } from "../../src/modules/events/sql.js";
import { DELETE_EXPIRED_REVOCATIONS } from "../../src/platform/auth/revocations.js";
import { removeExpiredExports } from "../../src/modules/exports/retention.js";

const BATCH = 1000;

/**
 * Removes events (and the bodies their deliveries' attempts kept; the delivery records stay) past EVENT_RETENTION_DAYS, in batches, so the event feed and the
 * deliveries list keep what they promise and no more; and the revocations of access tokens that have expired since,
 * which no request can present any more; and bulk exports past EXPORT_RETENTION_HOURS with their files. Scheduled hourly by crontab; any worker may run it.
 */
export function cleanupEvents(services: Services): Task {
  return async () => {
    await removeExpiredEvents(services);
    await removeExpiredRevocations(services);
    await removeExpiredExports(services.db, services.log);
  };
}

/** The revocations of tokens past their expiry; how many were removed. */
export async function removeExpiredRevocations(services: Services): Promise<number> {
  const { rowCount } = await services.pool.query(DELETE_EXPIRED_REVOCATIONS);
  if (rowCount) services.log.debug({ count: rowCount }, "revocations of expired tokens removed");
  return rowCount ?? 0;
}

/** One sweep; the number of events removed. */
export async function removeExpiredEvents(services: Services): Promise<number> {
  const before = new Date(Date.now() - services.config.EVENT_RETENTION_DAYS * 86_400_000);
  let total = 0;
  for (;;) {
    const { rowCount } = await services.pool.query(DELETE_EXPIRED_EVENTS, [before, BATCH]);
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < BATCH) break;
  }
  if (total > 0) services.log.info({ count: total, before }, "expired events removed");
  return total;
}
