import type { Services } from "../../../platform/services.js";
import { DELIVER_TASK, deliverJobKey, orderQueue, type DeliverPayload } from "../jobs.js";
import { DEFER_ATTEMPT } from "../sql/claim.js";
import { EARLIER_UNDONE } from "../sql/ordering.js";
import { chainDueAt, type AttemptOutcome, type Claimed } from "./prepare.js";

/**
 * Ordered delivery: an ordered endpoint's attempt waits until every earlier delivery of the endpoint (by event
 * sequence) succeeded or was dead-lettered. Its jobs run one at a time in the endpoint's graphile-worker queue, in the
 * order they were queued; this check is what keeps the order when they were queued out of it (a retry scheduled
 * later, two events fanned out at once). A held attempt sends nothing and counts nothing: its job runs again when the
 * earlier delivery's next attempt is due (queued behind that attempt's job), or after ORDER_RECHECK_MS when that one
 * is due already (its job is running or about to).
 */
const ORDER_RECHECK_MS = 50;

/** Null to send now; else when to look again. */
export async function heldUntil(services: Services, c: Claimed, deliveryId: string): Promise<Date | null> {
  if (c.ordering === null) return null;
  const { rows } = await services.pool.query<{ id: string; nextAttemptAt: Date | null }>({
    ...EARLIER_UNDONE,
    values: [c.endpointId, deliveryId, c.eventSequence],
  });
  const blocker = rows[0];
  if (!blocker) return null;
  const soonest = Date.now() + ORDER_RECHECK_MS;
  return new Date(Math.max(blocker.nextAttemptAt?.getTime() ?? soonest, soonest));
}

/** Puts a claimed attempt off behind the earlier delivery: its claim's stamp given back, its job queued again at `at`. */
export async function holdBehind(services: Services, req: DeliverPayload, c: Claimed, at: Date): Promise<AttemptOutcome> {
  const dueAt = at.toISOString();
  // No slot of the pace is reserved: the attempt takes its pace when it runs.
  const payload: DeliverPayload = req.trigger === "SCHEDULED" ? { ...req, dueAt, slotAt: undefined } : { deliveryId: req.deliveryId, trigger: req.trigger };
  await services.pool.query(DEFER_ATTEMPT, [
    req.deliveryId,
    dueAt,
    c.previousAttemptAt,
    chainDueAt(req),
    JSON.stringify(payload),
    deliverJobKey(payload),
    DELIVER_TASK,
    orderQueue(c.endpointId),
  ]);
  services.log.debug(
    { deliveryId: req.deliveryId, endpointId: c.endpointId, trigger: req.trigger, at: dueAt },
    "webhook attempt held behind an earlier delivery",
  );
  return { kind: "ordered", at };
}
