import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { DELETE_OLD_BUCKETS } from "../../src/platform/ratelimit/sql.js";

/**
 * Removes rate-limit buckets the sliding window no longer reads (only the current and the previous minute are).
 * Scheduled every five minutes by crontab; any worker may run it, deletes are idempotent.
 */
export function cleanupRateLimits(services: Services): Task {
  return async () => {
    const { rowCount } = await services.pool.query(DELETE_OLD_BUCKETS);
    if (rowCount) services.log.debug({ count: rowCount }, "old rate-limit buckets removed");
  };
}
