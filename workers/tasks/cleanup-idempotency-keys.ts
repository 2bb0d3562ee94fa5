import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";

/** Removes Idempotency-Key records past their 24 h retention. Scheduled hourly by crontab. */
export function cleanupIdempotencyKeys(services: Services): Task {
  return async () => {
    const { count } = await services.db.idempotencyKey.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    if (count > 0) services.log.info({ count }, "expired idempotency keys removed");
  };
}
