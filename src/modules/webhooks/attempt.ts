import type { Services } from "../../platform/services.js";
import { waitInline, type WaitOutside } from "../../platform/outside.js";
import { paceKey, type FirstAttempt } from "./jobs.js";
import { holdOf } from "./drill.js";
import { claim, explainUnclaimed, isDuplicate, type AttemptOutcome, type AttemptRequest, type Claimed } from "./delivery/prepare.js";
import { resultOf, send, type AttemptReport } from "./delivery/send.js";
import { duplicateLater, record, recordDuplicate } from "./delivery/record.js";
import { deferFirst, paceSlot, putOff } from "./delivery/pace.js";
import { heldUntil, holdBehind } from "./delivery/order.js";

/**
 * One delivery attempt in Svix's three steps, each a module of ./delivery/: prepare (claim the delivery and load what
 * to send), send (re-check the URL, sign, POST), record (attempt row, delivery and endpoint state, next scheduled job;
 * the outcome decided by decide.ts); pace.ts puts an attempt over its endpoint's pace off. This file runs them in order.
 * The worker runs SCHEDULED, REPLAY, RECOVER and BACKFILL attempts; the API runs TEST attempts inline. Two statements per
 * attempt (claim, record; their SQL is in ./sql/), both on the raw pool; a first attempt needs no claim: the fan-out
 * (src/modules/webhooks/fan-out.ts) reads what to send, and the record creates the delivery in its outcome's state.
 * Records that end together share one statement. The rare attempts that change an endpoint's standing (a dead letter,
 * a 410 Gone, failing for WEBHOOK_DISABLE_AFTER) are recorded in a transaction of their own that also emits the
 * operational event reporting the change.
 *
 * An ordered endpoint's attempts run in its graphile-worker queue and wait for its earlier deliveries (./delivery/order.ts).
 *
 * An endpoint running a fault drill (./drill.ts; SANDBOX only) has its new deliveries' first attempts held (created
 * PENDING with their first job later, as the pace puts one off) and some sent twice (a job of its own after the first
 * attempt, recorded apart by RECORD_DUPLICATE). Endpoints without one pay a null column in the claim and the fan-out.
 */

export type { AttemptOutcome, AttemptRequest, Claimed } from "./delivery/prepare.js";
export { ATTEMPT_RESULTS, type AttemptReport, type AttemptResult } from "./delivery/send.js";
export { recordBatch, type FirstRecordRow, type RecordRow } from "./delivery/record.js";

/** Who hears of every attempt a process's services run (its metrics); a Set, so watching twice counts once. */
const watchers = new WeakMap<Services, Set<(report: AttemptReport) => void>>();

export function watchAttempts(services: Services, watcher: (report: AttemptReport) => void): void {
  const set = watchers.get(services) ?? new Set();
  set.add(watcher);
  watchers.set(services, set);
}

async function sendAndRecord(
  services: Services,
  req: AttemptRequest,
  claimed: Claimed,
  create: boolean,
  waitOutside: WaitOutside = waitInline,
): Promise<AttemptOutcome> {
  const sent = await send(services, req.deliveryId, claimed, waitOutside);
  const report = { result: resultOf(sent), seconds: sent.result.durationMs / 1000 };
  for (const watcher of watchers.get(services) ?? []) watcher(report);
  if (isDuplicate(req)) return recordDuplicate(services, req, claimed, sent);
  const outcome = await record(services, req, claimed, sent, create);
  if (claimed.drill && outcome.kind === "attempted" && req.trigger === "SCHEDULED" && req.step === 1) await duplicateLater(services, req, claimed.drill);
  return outcome;
}

/**
 * Claims, sends and records one attempt; the API's tests pass `waitOutside` so the send holds no admission slot. An
 * attempt over its endpoint's pace is put off to the slot reserved for it (a test is paced before it is created, see
 * sendTestEvent).
 */
export async function runAttempt(services: Services, req: AttemptRequest, waitOutside: WaitOutside = waitInline): Promise<AttemptOutcome> {
  const claimed = await claim(services, req);
  if (!claimed) return explainUnclaimed(services, req);
  if (req.trigger !== "TEST") {
    const held = await heldUntil(services, claimed, req.deliveryId);
    if (held) return holdBehind(services, req, claimed, held);
    const slot = await paceSlot(services, req, claimed);
    if (slot) return putOff(services, req, claimed, slot);
  }
  return sendAndRecord(services, req, claimed, false, waitOutside);
}

/**
 * The first attempt of a delivery the fan-out planned but did not create (WEBHOOK_FAN_OUT_TARGETS). Under its
 * endpoint's pace it is sent, then created already recorded; a crash in between loses nothing: the fan-out job has not
 * completed, and its re-run creates the deliveries and schedules their attempts. Over the pace, the delivery is created
 * PENDING with a first scheduled job at the slot reserved for it (one statement for the tick's). Under the pace this
 * costs nothing more: an endpoint's slots come from this process's lease (src/platform/pace).
 */
export async function attemptFirst(services: Services, req: FirstAttempt, planned: Claimed): Promise<AttemptOutcome> {
  // A drill's hold comes first: the held attempt takes its pace when it runs.
  const hold = planned.drill ? holdOf(planned.drill) : null;
  if (hold) {
    const at = new Date(Date.now() + hold.ms);
    await deferFirst(services, req, planned, at, hold.drill);
    return { kind: "held", drill: hold.drill, at };
  }
  if (planned.ordering !== null) {
    // An ordered endpoint's first attempt runs in its queue, in order, never beside an earlier one.
    const now = new Date();
    await deferFirst(services, req, planned, now, null);
    return { kind: "ordered", at: now };
  }
  const slot = await services.pacer.take(paceKey(planned.endpointId), planned.rateLimit);
  if (!slot) return sendAndRecord(services, req, planned, true);
  await deferFirst(services, req, planned, slot, null);
  services.log.debug({ deliveryId: req.deliveryId, endpointId: planned.endpointId, slotAt: slot.toISOString() }, "webhook attempt paced");
  return { kind: "paced", at: slot };
}
