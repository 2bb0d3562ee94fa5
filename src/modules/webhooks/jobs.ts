import { FAN_OUT_TASK, type FanOutPayload } from "../events/outbox.js";
import { parseInstant } from "../../platform/input.js";
import { isUuid } from "../../platform/uuid.js";

export const DELIVER_TASK = "deliver_webhook";

/**
 * One attempt of one delivery. A SCHEDULED job carries its place in the retry chain (`step`, 1-based) and
 * the `dueAt` it was scheduled for: the delivery's `nextAttemptAt` must still equal it, which is what makes
 * a stale or duplicated job a no-op. A REPLAY job runs one extra attempt regardless of the chain.
 */
export type DeliverPayload = { deliveryId: string; trigger: "SCHEDULED"; step: number; dueAt: string } | { deliveryId: string; trigger: "REPLAY" | "RECOVER" };

export const RECOVER_TASK = "recover_webhook_deliveries";

/**
 * One batch of a recover request: the endpoint's FAILED and DEAD_LETTER deliveries created in [since, until), after
 * `after` (the last delivery of the previous batch, in (createdAt, id) order).
 */
export interface RecoverPayload {
  endpointId: string;
  since: string;
  until: string;
  /** The walk takes FAILED deliveries, then DEAD_LETTER ones, each in (createdAt, id) order (one index range). */
  status: RecoverStatus;
  after: { createdAt: string; id: string } | null;
}

export const RECOVER_STATUSES = ["FAILED", "DEAD_LETTER"] as const;
export type RecoverStatus = (typeof RECOVER_STATUSES)[number];

declare global {
  namespace GraphileWorker {
    interface Tasks {
      [FAN_OUT_TASK]: FanOutPayload;
      [DELIVER_TASK]: DeliverPayload;
      [RECOVER_TASK]: RecoverPayload;
    }
  }
}

/** One live scheduled job per delivery; a replay has its own key so it never displaces the retry chain. */
export const SCHEDULED_JOB_KEY_PREFIX = "deliver:";
export const scheduledJobKey = (deliveryId: string): string => `${SCHEDULED_JOB_KEY_PREFIX}${deliveryId}`;
export const REPLAY_JOB_KEY_PREFIX = "replay:";
export const replayJobKey = (deliveryId: string): string => `${REPLAY_JOB_KEY_PREFIX}${deliveryId}`;

/** A recovery's attempt has a key of its own too, so a replay requested meanwhile is not displaced. */
export const RECOVER_JOB_KEY_PREFIX = "recover:";

export function deliverJobKey(payload: DeliverPayload): string {
  if (payload.trigger === "SCHEDULED") return scheduledJobKey(payload.deliveryId);
  return payload.trigger === "REPLAY" ? replayJobKey(payload.deliveryId) : `${RECOVER_JOB_KEY_PREFIX}${payload.deliveryId}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function assertFanOutPayload(payload: unknown): FanOutPayload {
  if (isRecord(payload) && typeof payload.eventId === "string" && isUuid(payload.eventId)) return { eventId: payload.eventId };
  throw new Error(`${FAN_OUT_TASK}: payload must be { eventId: uuid }, got ${JSON.stringify(payload)}`);
}

export function assertDeliverPayload(payload: unknown): DeliverPayload {
  if (isRecord(payload) && typeof payload.deliveryId === "string" && isUuid(payload.deliveryId)) {
    const { deliveryId, trigger, step, dueAt } = payload;
    if (trigger === "REPLAY" || trigger === "RECOVER") return { deliveryId, trigger };
    if (trigger === "SCHEDULED" && Number.isInteger(step) && typeof dueAt === "string" && parseInstant(dueAt) !== null) {
      return { deliveryId, trigger, step: step as number, dueAt };
    }
  }
  throw new Error(`${DELIVER_TASK}: unrecognised payload ${JSON.stringify(payload)}`);
}

const isInstant = (value: unknown): value is string => typeof value === "string" && parseInstant(value) !== null;

export function assertRecoverPayload(payload: unknown): RecoverPayload {
  if (isRecord(payload) && typeof payload.endpointId === "string" && isUuid(payload.endpointId) && isInstant(payload.since) && isInstant(payload.until)) {
    const { endpointId, since, until, after } = payload;
    const status = RECOVER_STATUSES.find((s) => s === payload.status);
    if (status && after === null) return { endpointId, since, until, status, after: null };
    if (status && isRecord(after) && isInstant(after.createdAt) && typeof after.id === "string" && isUuid(after.id)) {
      return { endpointId, since, until, status, after: { createdAt: after.createdAt, id: after.id } };
    }
  }
  throw new Error(`${RECOVER_TASK}: unrecognised payload ${JSON.stringify(payload)}`);
}
