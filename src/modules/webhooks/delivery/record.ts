import type DataLoader from "dataloader";
import type pg from "pg";
import type { Services } from "../../../platform/services.js";
import type { Tx, WebhookDeliveryStatus, WebhookEndpointStatus } from "../../../platform/db/prisma.js";
import { emitEvent } from "../../../platform/events/outbox.js";
import { batchStatements } from "../../../platform/db/batch.js";
import { OPERATIONAL_EVENT_TYPES } from "../../events/operational.js";
import type { SendWebhookResult } from "../send.js";
import { DELIVER_TASK, deliverJobKey, scheduledJobKey, type DeliverPayload, type FirstAttempt } from "../jobs.js";
import { lockEndpoint } from "../sql/endpoints.js";
import { WEBHOOK_RECORD, WEBHOOK_RECORD_FIRST } from "../sql/record.js";
import { duplicateAfterMs, type Drill, type Hold } from "../drill.js";
import { ENQUEUE_DUPLICATE, RECORD_DUPLICATE } from "../sql/drill.js";
import type { AttemptOutcome, AttemptRequest, Claimed } from "./prepare.js";
import { resultOf, type Sent } from "./send.js";
import { decide, drillOfAttempt, type Decision } from "./decide.js";

/**
 * The record step: the attempt row, the delivery's and endpoint's state and the next scheduled job, in statements
 * batched across attempts; the rare standing-changing attempt in a transaction of its own; a drill's second send apart.
 */

/** One attempt's outcome, as WEBHOOK_RECORD reads it. */
export interface RecordRow {
  id: string;
  endpoint_id: string;
  status: WebhookDeliveryStatus;
  http_status: number | null;
  last_error: string | null;
  duration_ms: number;
  next: Decision["next"];
  delay_ms: number;
  trigger: AttemptRequest["trigger"];
  succeeded: boolean;
  error: string | null;
  headers: Record<string, string>;
  body: string;
  excerpt: string | null;
  started_at: Date;
  dead_letter: boolean;
  next_step: number;
  job_key: string;
  /** What a fault drill did to the attempt (held it); null for nearly every attempt. */
  drill: Hold["drill"] | null;
}

/** A first attempt's outcome, as WEBHOOK_RECORD_FIRST reads it: also what it needs to create the delivery. */
export interface FirstRecordRow extends RecordRow {
  event_id: string;
  application_id: string;
  store_id: string;
  event_type: string;
}

type RecordStatement = typeof WEBHOOK_RECORD | typeof WEBHOOK_RECORD_FIRST;

/**
 * Runs WEBHOOK_RECORD (or WEBHOOK_RECORD_FIRST, for rows that create their delivery) for a batch; a delivery recorded
 * twice in one tick (a replay beside a retry) goes in a later round.
 */
export async function recordBatch(pool: pg.Pool, rows: readonly RecordRow[], statement: RecordStatement = WEBHOOK_RECORD): Promise<(number | null)[]> {
  const attempts: (number | null)[] = rows.map(() => null);
  let pending = rows.map((row, ord) => ({ ...row, ord }));
  while (pending.length > 0) {
    const ids = new Set<string>();
    const round: typeof pending = [];
    const later: typeof pending = [];
    for (const row of pending) {
      (ids.has(row.id) ? later : round).push(row);
      ids.add(row.id);
    }
    pending = later;
    const endpoints = [...new Set(round.map((r) => r.endpoint_id))];
    const { rows: recorded } = await pool.query<{ ord: number; attempts: number }>({
      ...statement,
      values: [JSON.stringify(round), DELIVER_TASK, round.map((r) => r.id), endpoints],
    });
    for (const r of recorded) attempts[r.ord] = r.attempts;
  }
  return attempts;
}

/**
 * How long a finished attempt waits for others to share its WEBHOOK_RECORD statement. Attempts end at scattered moments,
 * so batching only what ends in the same tick gave batches of about one; a statement's fixed cost (executor
 * start, CTEs, commit) dominated, and the worker topped out near 850 deliveries/s. Waiting 5 ms fills batches at
 * load and delays only the job's completion, not the POST (measured: 1,800/s, latency p50 5 ms; docs/performance.md).
 */
const RECORD_WINDOW_MS = 5;
// One batcher per pool and statement.
const recorders = new WeakMap<pg.Pool, Map<RecordStatement, DataLoader<RecordRow, number | null>>>();
function recorder(pool: pg.Pool, statement: RecordStatement): DataLoader<RecordRow, number | null> {
  const byStatement = recorders.get(pool) ?? new Map<RecordStatement, DataLoader<RecordRow, number | null>>();
  recorders.set(pool, byStatement);
  let loader = byStatement.get(statement);
  if (!loader) {
    loader = batchStatements((rows: readonly RecordRow[]) => recordBatch(pool, rows, statement), {
      maxBatchSize: 200,
      schedule: (send) => setTimeout(send, RECORD_WINDOW_MS),
    });
    byStatement.set(statement, loader);
  }
  return loader;
}

/** lastError: the failure, then as much of the receiver's answer as was read (up to 4 KiB). */
function lastErrorOf(result: SendWebhookResult): string | null {
  if (result.ok) return null;
  const excerpt = result.responseExcerpt?.trim();
  return excerpt ? `${result.error ?? "failed"}: ${excerpt}` : (result.error ?? "failed");
}

const DISABLED_BY_GONE = "The receiver answered 410 Gone.";

/**
 * Records an attempt that changes its endpoint's standing, and emits the operational events that report the change,
 * in one transaction: the endpoint is locked first (as WEBHOOK_RECORD locks it) and its status read before and after.
 * A first attempt's delivery (`create`) is created there, as the fan-out would have, and then recorded.
 */
async function recordWithEvents(services: Services, row: RecordRow, c: Claimed, d: Decision, create: boolean): Promise<number | null> {
  return services.db.$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<{ status: WebhookEndpointStatus }[]>(lockEndpoint(c.endpointId));
    if (!before) return null;
    if (create) {
      await tx.webhookDelivery.createMany({
        data: [{ ...deliveryOf(row.id, c), status: "PENDING", nextAttemptAt: c.nextAttemptAt, lastAttemptAt: c.startedAt, createdAt: c.startedAt }],
        skipDuplicates: true,
      });
    }
    const recorded = await tx.$queryRawUnsafe<{ attempts: number }[]>(
      WEBHOOK_RECORD.text,
      JSON.stringify([{ ...row, ord: 0 }]),
      DELIVER_TASK,
      [row.id],
      [row.endpoint_id],
    );
    if (recorded.length === 0) return null;
    const endpoint = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: c.endpointId }, select: { status: true, failingSince: true } });
    const about = { endpointId: c.endpointId, url: c.url };
    const failingSince = endpoint.failingSince;
    const failingTooLong = failingSince !== null && Date.now() - failingSince.getTime() >= services.config.WEBHOOK_DISABLE_AFTER;
    if (d.stop === "gone" || failingTooLong) {
      const reason =
        d.stop === "gone" ? DISABLED_BY_GONE : `Every attempt has failed since ${failingSince?.toISOString()} (longer than WEBHOOK_DISABLE_AFTER).`;
      await stopEndpoint(tx, c, reason);
    } else if (before.status === "ACTIVE" && endpoint.status === "FAILED") {
      await emitEvent(tx, c.storeId, "webhook.endpoint.failed", { ...about, reason: `Delivery ${row.id} ran out of scheduled attempts.` });
    }
    // Not for the operational events themselves: two failing endpoints must not keep reporting on each other.
    if (d.deadLetter && !OPERATIONAL_EVENT_TYPES.includes(c.eventType)) {
      await emitEvent(tx, c.storeId, "webhook.delivery.dead_lettered", {
        ...about,
        reason: row.last_error ?? "failed",
        deliveryId: row.id,
        eventId: c.eventId,
        eventType: c.eventType,
      });
    }
    return recorded[0].attempts;
  });
}

async function stopEndpoint(tx: Tx, c: Claimed, reason: string): Promise<void> {
  const { count } = await tx.webhookEndpoint.updateMany({
    where: { id: c.endpointId, status: { not: "INACTIVE" } },
    data: { status: "INACTIVE", disabledReason: reason },
  });
  if (count > 0) await emitEvent(tx, c.storeId, "webhook.endpoint.disabled", { endpointId: c.endpointId, url: c.url, reason });
}

/** The columns of a delivery that never change, for a first attempt that creates it. */
function deliveryOf(id: string, c: Claimed) {
  return { id, eventId: c.eventId, endpointId: c.endpointId, applicationId: c.applicationId, storeId: c.storeId, eventType: c.eventType };
}

async function recordOutcome(services: Services, row: RecordRow, c: Claimed, d: Decision, create: boolean): Promise<number | null> {
  if (d.deadLetter || d.stop) return recordWithEvents(services, row, c, d, create);
  if (!create) return recorder(services.pool, WEBHOOK_RECORD).load(row);
  const first: FirstRecordRow = { ...row, event_id: c.eventId, application_id: c.applicationId, store_id: c.storeId, event_type: c.eventType };
  return recorder(services.pool, WEBHOOK_RECORD_FIRST).load(first);
}

export async function record(services: Services, req: AttemptRequest, c: Claimed, sent: Sent, create: boolean): Promise<AttemptOutcome> {
  const { result } = sent;
  const { config } = services;
  const d = decide(req, c, result, { schedule: config.WEBHOOK_RETRY_SCHEDULE, disableAfterMs: config.WEBHOOK_DISABLE_AFTER, now: Date.now() });
  const row: RecordRow = {
    id: req.deliveryId,
    endpoint_id: c.endpointId,
    status: d.status,
    http_status: result.status,
    last_error: lastErrorOf(result),
    duration_ms: result.durationMs,
    next: d.next,
    delay_ms: d.delayMs,
    trigger: req.trigger,
    succeeded: result.ok,
    error: result.error,
    headers: sent.headers,
    body: sent.body,
    excerpt: result.responseExcerpt,
    started_at: c.startedAt,
    dead_letter: d.deadLetter,
    next_step: req.trigger === "SCHEDULED" ? req.step + 1 : 0,
    job_key: scheduledJobKey(req.deliveryId),
    drill: drillOfAttempt(req),
  };
  const attempts = await recordOutcome(services, row, c, d, create);
  // The delivery vanished mid-attempt (its endpoint was deleted): nothing left to record against.
  if (attempts === null) return { kind: "skipped", reason: "gone" };
  if (!result.ok) {
    // Enough to find the delivery, its endpoint and both tenants from one line, and why it failed.
    const fields = {
      deliveryId: req.deliveryId,
      endpointId: c.endpointId,
      storeId: c.storeId,
      applicationId: c.applicationId,
      eventType: c.eventType,
      trigger: req.trigger,
      attempt: attempts,
      result: resultOf(sent),
      httpStatus: result.status,
      error: result.error,
      drill: row.drill,
    };
    services.log.warn(fields, "webhook attempt failed");
    if (d.deadLetter) services.log.warn({ ...fields, status: d.status }, "webhook delivery dead-lettered: its endpoint is now FAILED");
    if (d.stop) services.log.warn({ ...fields, reason: d.stop }, "webhook endpoint stopped: it is now INACTIVE");
  }
  return { kind: "attempted", succeeded: result.ok, status: d.status, attempt: attempts };
}

/**
 * At the drill's duplicateRate, queues the delivery's second send, within the reorder window after the first: same
 * event, same eventId and webhook-id, signed when it is sent. Queued once its first attempt is recorded, so the
 * delivery exists; a crash in between loses only the copy.
 */
export async function duplicateLater(services: Services, req: FirstAttempt, drill: Drill): Promise<void> {
  const afterMs = duplicateAfterMs(drill);
  if (afterMs === null) return;
  const payload: DeliverPayload = { deliveryId: req.deliveryId, trigger: "SCHEDULED", step: 1, dueAt: req.dueAt, drill: "duplicate" };
  await services.pool.query(ENQUEUE_DUPLICATE, [DELIVER_TASK, JSON.stringify(payload), afterMs, deliverJobKey(payload)]);
}

/** Records a drill's second send: an attempt row marked duplicate; the delivery and its endpoint's health are left as they are. */
export async function recordDuplicate(services: Services, req: AttemptRequest, c: Claimed, sent: Sent): Promise<AttemptOutcome> {
  const { result } = sent;
  const { rows } = await services.pool.query<{ number: number }>(RECORD_DUPLICATE, [
    req.deliveryId,
    result.ok,
    result.status,
    result.durationMs,
    result.error,
    JSON.stringify(sent.headers),
    sent.body,
    result.responseExcerpt,
    c.startedAt,
  ]);
  const attempt = rows[0]?.number;
  if (attempt === undefined) return { kind: "skipped", reason: "gone" };
  if (!result.ok) {
    const fields = { deliveryId: req.deliveryId, endpointId: c.endpointId, storeId: c.storeId, applicationId: c.applicationId, attempt, drill: "duplicate" };
    services.log.warn({ ...fields, result: resultOf(sent), httpStatus: result.status, error: result.error }, "webhook attempt failed");
  }
  return { kind: "duplicated", succeeded: result.ok, attempt };
}
