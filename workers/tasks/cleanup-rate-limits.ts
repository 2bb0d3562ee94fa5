import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { DELETE_OLD_BUCKETS } from "../../src/platform/ratelimit/sql.js";
import { DELETE_OLD_PACE_CURSORS } from "../../src/platform/pace/stores.js";

/**
 * Removes rate-limit buckets the sliding window no longer reads (only the current and the previous minute are), and
 * webhook pace cursors left over a minute behind (a missing cursor means the same). Scheduled every five minutes by
 * crontab; any worker may run it, deletes are idempotent.
 */
export function cleanupRateLimits(services: Services): Task {
  return async () => {
    const { rowCount } = await services.pool.query(DELETE_OLD_BUCKETS);
    if (rowCount) services.log.debug({ count: rowCount }, "old rate-limit buckets removed");
    const { rowCount: cursors } = await services.pool.query(DELETE_OLD_PACE_CURSORS);
    if (cursors) services.log.debug({ count: cursors }, "old pace cursors removed");
  };
}
