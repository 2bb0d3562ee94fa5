import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { runAttempt } from "../../src/modules/webhooks/attempt.js";
import { DELIVER_TASK, assertDeliverPayload, deliverJobKey } from "../../src/modules/webhooks/jobs.js";

/**
 * `deliver_webhook`: one attempt. A receiver's failure is not a job failure: the attempt records it and
 * enqueues the next step of OUR schedule itself. Only infrastructure errors (database down) throw, and
 * graphile-worker's own retries cover those.
 */
export function deliverWebhook(services: Services): Task {
  return async (payload, helpers) => {
    const request = assertDeliverPayload(payload);
    const outcome = await runAttempt(services, request);
    if (outcome.kind === "busy") {
      // The step is leased by another (possibly dead) worker: look again when the lease runs out.
      await helpers.addJob(DELIVER_TASK, request, { jobKey: deliverJobKey(request), runAt: outcome.retryAt });
    }
    services.log.debug({ deliveryId: request.deliveryId, trigger: request.trigger, outcome }, "webhook attempt");
  };
}
