import type { WebhookDeliveryStatus } from "../../../platform/db/prisma.js";
import type { SendWebhookResult } from "../send.js";
import { MAX_SCHEDULED_ATTEMPTS, retryAfterMs, retryDelayMs } from "../policy.js";
import type { Hold } from "../drill.js";
import type { AttemptRequest, Claimed } from "./prepare.js";

/** The decision after a send: the delivery's status, its next attempt, and whether its endpoint's standing changes. */

export interface Decision {
  status: WebhookDeliveryStatus;
  /** What happens to nextAttemptAt: set to now + delayMs (and a job enqueued), cleared, or kept. */
  next: "schedule" | "clear" | "keep";
  delayMs: number;
  /** This failure dead-letters the delivery: its endpoint turns FAILED. */
  deadLetter: boolean;
  /** This failure stops the endpoint (INACTIVE): its receiver answered 410 Gone, or it has failed for too long. */
  stop: "gone" | "failing" | null;
}

export interface Policy {
  schedule: readonly number[];
  disableAfterMs: number;
  now: number;
}

/** What the endpoint's fault drill did to this attempt (only a first attempt is ever held). */
export function drillOfAttempt(req: AttemptRequest): Hold["drill"] | null {
  const drill = req.trigger === "SCHEDULED" ? req.drill : undefined;
  return drill === "delayed" || drill === "reordered" ? drill : null;
}

export function decide(req: AttemptRequest, c: Claimed, result: SendWebhookResult, policy: Policy): Decision {
  if (result.ok) return { status: "DELIVERED", next: "clear", delayMs: 0, deadLetter: false, stop: null };
  // A dead letter stays one whatever a later replay does; pending retries still run unless the endpoint stops.
  const wasDead = req.trigger !== "SCHEDULED" && c.chainExhausted && c.nextAttemptAt === null;
  const failingFor = c.failingSince === null ? 0 : policy.now - c.failingSince.getTime();
  // An attempt a drill held never stops its endpoint: its retries, undrilled, may.
  const stop = drillOfAttempt(req) !== null ? null : result.status === 410 ? "gone" : failingFor >= policy.disableAfterMs ? "failing" : null;
  if (stop) {
    // The endpoint stops receiving: this delivery gets no further scheduled attempt; it can be recovered later.
    return { status: wasDead ? "DEAD_LETTER" : "FAILED", next: "clear", delayMs: 0, deadLetter: false, stop };
  }
  if (req.trigger === "SCHEDULED") {
    if (req.step < MAX_SCHEDULED_ATTEMPTS) {
      // 429 and 503 may say when to come back; the schedule's own wait stands when it is longer.
      const asked = result.status === 429 || result.status === 503 ? retryAfterMs(result.retryAfter, policy.now) : 0;
      return { status: "FAILED", next: "schedule", delayMs: Math.max(retryDelayMs(policy.schedule, req.step), asked), deadLetter: false, stop: null };
    }
    return { status: "DEAD_LETTER", next: "clear", delayMs: 0, deadLetter: true, stop: null };
  }
  return { status: wasDead ? "DEAD_LETTER" : "FAILED", next: "keep", delayMs: 0, deadLetter: false, stop: null };
}
