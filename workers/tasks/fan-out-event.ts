import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { planFirstAttempts, fanOutEvent as fanOut, type PlannedFirstAttempt } from "../../src/modules/webhooks/fan-out.js";
import { DELIVER_TASK, assertFanOutPayload, deliverJobKey } from "../../src/modules/webhooks/jobs.js";
import { attemptFirst } from "../../src/modules/webhooks/attempt.js";
import { batchStatements } from "../../src/platform/db/batch.js";

/** Events fanned out together: the jobs that start in the same tick share one statement. */
const MAX_BATCH = 100;

/**
 * `fan_out_event` {eventId}: one delivery per subscribed endpoint, and each delivery's first attempt run here
 * rather than in a job of its own: one queue hop from commit to POST, and no job (so no pg_notify, which
 * PostgreSQL serialises across committing transactions) per delivery. The first run reads what to send, POSTs, and
 * creates each delivery already recorded (one write per delivery); the job completes only once every first
 * attempt is recorded.
 *
 * A re-run (graphile-worker retrying a failed run, or crash recovery releasing the job of a worker that died)
 * creates the deliveries a previous run did not record (a POST it made may then be repeated: at least once) and
 * finds those a previous re-run created but never recorded an attempt for: each gets a `deliver_webhook` job,
 * whose claim waits out a dead attempt's lease. Safe to re-run.
 */
export function fanOutEvent(services: Services): Task {
  const batch = batchStatements<string, PlannedFirstAttempt[]>((ids) => planFirstAttempts(services.pool, ids), { maxBatchSize: MAX_BATCH });
  return async (payload, helpers) => {
    const { eventId } = assertFanOutPayload(payload);
    if (helpers.job.attempts > 1) {
      for (const request of await fanOut(services.pool, eventId)) {
        await helpers.addJob(DELIVER_TASK, request, { jobKey: deliverJobKey(request) });
      }
      return;
    }
    const attempts = await batch.load(eventId);
    const settled = await Promise.allSettled(
      attempts.map(async ({ request, planned }) => {
        const outcome = await attemptFirst(services, request, planned);
        services.log.debug({ deliveryId: request.deliveryId, trigger: request.trigger, outcome }, "webhook attempt");
      }),
    );
    const failure = settled.find((s) => s.status === "rejected");
    if (failure) throw failure.reason;
  };
}
