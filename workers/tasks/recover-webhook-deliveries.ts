import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { RECOVER_TASK, assertRecoverPayload } from "../../src/modules/webhooks/jobs.js";
import { recoverBatch } from "../../src/modules/webhooks/recover.js";

/**
 * `recover_webhook_deliveries`: one batch of a recover request (POST /public/v1/webhooks/{id}/recover), then a job for
 * the next, so a window of any size never holds a worker or a transaction for long. A re-run finds the batch's
 * deliveries already PENDING and moves on.
 */
export function recoverWebhookDeliveries(services: Services): Task {
  return async (payload, helpers) => {
    const next = await recoverBatch(services, assertRecoverPayload(payload));
    if (next) await helpers.addJob(RECOVER_TASK, next);
  };
}
