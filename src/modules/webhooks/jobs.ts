import { FAN_OUT_TASK, type FanOutPayload } from "../../platform/events/outbox.js";
import { parseInstant } from "../../platform/input.js";
import { isUuid } from "../../platform/uuid.js";
import { isRecord } from "../../platform/json.js";
import { ATTEMPT_DRILLS, type AttemptDrill } from "./drill.js";

export const DELIVER_TASK = "deliver_webhook";

/**
 * One attempt of one delivery. A SCHEDULED job carries its place in the retry chain (`step`, 1-based) and
 * the `dueAt` it was scheduled for: the delivery's `nextAttemptAt` must still equal it, which is what makes
 * a stale or duplicated job a no-op. A REPLAY job (or a RECOVER or BACKFILL one) runs one extra attempt regardless of the chain. `slotAt`: the job
 * was put off to a slot of its endpoint's pace reserved for it (src/platform/pace), which it uses if it runs in time.
 * `drill`: what the endpoint's fault drill (./drill.ts) did to a first attempt: held it (delayed, reordered), or made
 * this job its second send (duplicate: an extra attempt that claims regardless of the chain, as a replay does).
 */
export type DeliverPayload =
  | { deliveryId: string; trigger: "SCHEDULED"; step: number; dueAt: string; slotAt?: string; drill?: AttemptDrill }
  | { deliveryId: string; trigger: "REPLAY" | "RECOVER" | "BACKFILL"; slotAt?: string };

/** A delivery's first scheduled attempt, as the fan-out plans it and the attempt sends it. */
export type FirstAttempt = Extract<DeliverPayload, { trigger: "SCHEDULED" }>;

declare global {
  namespace GraphileWorker {
    interface Tasks {
      [FAN_OUT_TASK]: FanOutPayload;
      [DELIVER_TASK]: DeliverPayload;
    }
  }
}

/** One live scheduled job per delivery; a replay has its own key so it never displaces the retry chain. */
export const SCHEDULED_JOB_KEY_PREFIX = "deliver:";
export const scheduledJobKey = (deliveryId: string): string => `${SCHEDULED_JOB_KEY_PREFIX}${deliveryId}`;
export const REPLAY_JOB_KEY_PREFIX = "replay:";
export const replayJobKey = (deliveryId: string): string => `${REPLAY_JOB_KEY_PREFIX}${deliveryId}`;

/**
 * The graphile-worker queue an ordered endpoint's jobs run in, one at a time (one queue per ordered endpoint only: the
 * others run in no queue, as graphile-worker advises against many queue names). SQL_ORDER_QUEUE says the same in SQL.
 */
export const orderQueue = (endpointId: string): string => `webhook-order:${endpointId}`;
export const SQL_ORDER_QUEUE = (endpoint: string) => `case when ${endpoint}.ordering is not null then 'webhook-order:' || ${endpoint}.id::text end`;

/** The key an endpoint's pace is kept under (src/platform/pace). */
export const paceKey = (endpointId: string): string => `endpoint:${endpointId}`;

/** A recovery's attempt has a key of its own too, so a replay requested meanwhile is not displaced. */
export const RECOVER_JOB_KEY_PREFIX = "recover:";
/** And a backfill's, for the same reason. */
export const BACKFILL_JOB_KEY_PREFIX = "backfill:";
/** And a drill's second send, so it neither displaces nor is displaced by the chain. */
export const DUPLICATE_JOB_KEY_PREFIX = "duplicate:";

export function deliverJobKey(payload: DeliverPayload): string {
  if (payload.trigger === "SCHEDULED") {
    return payload.drill === "duplicate" ? `${DUPLICATE_JOB_KEY_PREFIX}${payload.deliveryId}` : scheduledJobKey(payload.deliveryId);
  }
  if (payload.trigger === "BACKFILL") return `${BACKFILL_JOB_KEY_PREFIX}${payload.deliveryId}`;
  return payload.trigger === "REPLAY" ? replayJobKey(payload.deliveryId) : `${RECOVER_JOB_KEY_PREFIX}${payload.deliveryId}`;
}

export function assertFanOutPayload(payload: unknown): FanOutPayload {
  if (isRecord(payload) && typeof payload.eventId === "string" && isUuid(payload.eventId)) {
    const { eventId, traceparent } = payload;
    return typeof traceparent === "string" ? { eventId, traceparent } : { eventId };
  }
  throw new Error(`${FAN_OUT_TASK}: payload must be { eventId: uuid, traceparent?: string }, got ${JSON.stringify(payload)}`);
}

export function assertDeliverPayload(payload: unknown): DeliverPayload {
  if (isRecord(payload) && typeof payload.deliveryId === "string" && isUuid(payload.deliveryId)) {
    const { deliveryId, trigger, step, dueAt, slotAt, drill } = payload;
    const slot = typeof slotAt === "string" && parseInstant(slotAt) !== null ? { slotAt } : {};
    if (slotAt !== undefined && !("slotAt" in slot)) throw new Error(`${DELIVER_TASK}: unrecognised slotAt in ${JSON.stringify(payload)}`);
    if (trigger === "REPLAY" || trigger === "RECOVER" || trigger === "BACKFILL") return { deliveryId, trigger, ...slot };
    const drilled = ATTEMPT_DRILLS.find((d) => d === drill);
    if (drill !== undefined && !drilled) throw new Error(`${DELIVER_TASK}: unrecognised drill in ${JSON.stringify(payload)}`);
    if (trigger === "SCHEDULED" && typeof step === "number" && Number.isInteger(step) && typeof dueAt === "string" && parseInstant(dueAt) !== null) {
      return { deliveryId, trigger, step, dueAt, ...slot, ...(drilled ? { drill: drilled } : {}) };
    }
  }
  throw new Error(`${DELIVER_TASK}: unrecognised payload ${JSON.stringify(payload)}`);
}
