import type DataLoader from "dataloader";
import type pg from "pg";
import type { Services } from "../../../platform/services.js";
import { parseInstant } from "../../../platform/input.js";
import { batchStatements } from "../../../platform/db/batch.js";
import { DELIVER_TASK, SCHEDULED_JOB_KEY_PREFIX, deliverJobKey, orderQueue, paceKey, type DeliverPayload, type FirstAttempt } from "../jobs.js";
import { DEFER_ATTEMPT } from "../sql/claim.js";
import { DEFER_FIRST } from "../sql/fan-out.js";
import type { Hold } from "../drill.js";
import { chainDueAt, type AttemptOutcome, type Claimed } from "./prepare.js";

/** Putting an attempt off to a slot of its endpoint's pace (or, for a first attempt, its drill's hold): nothing is sent. */

/** Null to send now, or the slot of the endpoint's pace the attempt must wait for. */
export async function paceSlot(services: Services, req: DeliverPayload, c: Claimed): Promise<Date | null> {
  // A job that waited for the slot reserved for it uses it, unless it started too late for the slot's second.
  const reserved = req.slotAt ? parseInstant(req.slotAt) : null;
  if (reserved && services.pacer.holds(reserved)) return null;
  return services.pacer.take(paceKey(c.endpointId), c.rateLimit);
}

/** Puts a claimed attempt off to its slot: nothing is sent or counted, and its job runs again then (DEFER_ATTEMPT). */
export async function putOff(services: Services, req: DeliverPayload, c: Claimed, slot: Date): Promise<AttemptOutcome> {
  const slotAt = slot.toISOString();
  const payload: DeliverPayload =
    req.trigger === "SCHEDULED" ? { ...req, dueAt: slotAt, slotAt } : { deliveryId: req.deliveryId, trigger: req.trigger, slotAt };
  await services.pool.query(DEFER_ATTEMPT, [
    req.deliveryId,
    slotAt,
    c.previousAttemptAt,
    chainDueAt(req),
    JSON.stringify(payload),
    deliverJobKey(payload),
    DELIVER_TASK,
    c.ordering === null ? null : orderQueue(c.endpointId),
  ]);
  services.log.debug({ deliveryId: req.deliveryId, endpointId: c.endpointId, trigger: req.trigger, slotAt }, "webhook attempt paced");
  return { kind: "paced", at: slot };
}

/** A first attempt the fan-out put off to a slot of its endpoint's pace (or its drill held), as DEFER_FIRST reads it. */
interface DeferredFirst {
  id: string;
  event_id: string;
  endpoint_id: string;
  application_id: string;
  store_id: string;
  event_type: string;
  created_at: Date;
  slot_at: Date;
  /** Held by the endpoint's fault drill, not paced: no slot is reserved at slot_at. */
  drill: Hold["drill"] | null;
  /** An ordered endpoint's queue: its first attempt runs there, in order (no slot reserved). */
  queue: string | null;
}

const deferrers = new WeakMap<pg.Pool, DataLoader<DeferredFirst, null>>();
function deferrer(pool: pg.Pool): DataLoader<DeferredFirst, null> {
  let loader = deferrers.get(pool);
  if (!loader) {
    loader = batchStatements(async (rows: readonly DeferredFirst[]) => {
      await pool.query(DEFER_FIRST, [JSON.stringify(rows), [...new Set(rows.map((r) => r.endpoint_id))], DELIVER_TASK, SCHEDULED_JOB_KEY_PREFIX]);
      return rows.map(() => null);
    });
    deferrers.set(pool, loader);
  }
  return loader;
}

export function deferFirst(services: Services, req: FirstAttempt, planned: Claimed, at: Date, drill: Hold["drill"] | null): Promise<null> {
  return deferrer(services.pool).load({
    id: req.deliveryId,
    event_id: planned.eventId,
    endpoint_id: planned.endpointId,
    application_id: planned.applicationId,
    store_id: planned.storeId,
    event_type: planned.eventType,
    created_at: planned.startedAt,
    slot_at: at,
    drill,
    queue: planned.ordering === null ? null : orderQueue(planned.endpointId),
  });
}
