import { FIRST_API_VERSION, isApiVersion } from "../../platform/versions.js";
import type DataLoader from "dataloader";
import type pg from "pg";
import type { Services } from "../../platform/services.js";
import { waitInline, type WaitOutside } from "../../platform/outside.js";
import { checkWebhookUrl, type WebhookEnvironment } from "./url-safety.js";
import { sendWebhook, type SendWebhookResult } from "./send.js";
import { deliveryHeaders, envelopeBody } from "./message.js";
import { DELIVER_TASK, SCHEDULED_JOB_KEY_PREFIX, deliverJobKey, paceKey, scheduledJobKey, type DeliverPayload, type FirstAttempt } from "./jobs.js";
import type { Tx, WebhookDeliveryStatus, WebhookEndpointStatus } from "../../platform/db/prisma.js";
import { MAX_SCHEDULED_ATTEMPTS, attemptLeaseMs, retryAfterMs, retryDelayMs } from "./policy.js";
import { emitEvent } from "../../platform/events/outbox.js";
import { OPERATIONAL_EVENT_TYPES } from "../events/operational.js";
import { lockEndpoint } from "./sql/endpoints.js";
import { DEFER_ATTEMPT, DELIVERY_STATE, END_CHAIN, FAIL_REPLAY, WEBHOOK_CLAIM } from "./sql/claim.js";
import { DEFER_FIRST } from "./sql/fan-out.js";
import { WEBHOOK_RECORD, WEBHOOK_RECORD_FIRST } from "./sql/record.js";
import { parseInstant } from "../../platform/input.js";
import { batchStatements } from "../../platform/db/batch.js";
import { duplicateAfterMs, holdOf, type Drill, type Hold } from "./drill.js";
import { ENQUEUE_DUPLICATE, RECORD_DUPLICATE } from "./sql/drill.js";

/**
 * One delivery attempt in Svix's three steps: prepare (claim the delivery and load what to send), send
 * (re-check the URL, sign, POST), record (attempt row, delivery and endpoint state, next scheduled job).
 * The worker runs SCHEDULED, REPLAY, RECOVER and BACKFILL attempts; the API runs TEST attempts inline. Two statements per
 * attempt (claim, record; their SQL is in ./sql/), both on the raw pool; a first attempt needs no claim: the fan-out
 * (src/modules/webhooks/fan-out.ts) reads what to send, and the record creates the delivery in its outcome's state.
 * Records that end together share one statement. The rare
 * attempts that change an endpoint's standing (a dead letter, a 410 Gone, failing for WEBHOOK_DISABLE_AFTER) are
 * recorded in a transaction of their own that also emits the operational event reporting the change.
 *
 * An endpoint running a fault drill (./drill.ts; SANDBOX only) has its new deliveries' first attempts held (created
 * PENDING with their first job later, as the pace puts one off) and some sent twice (a job of its own after the first
 * attempt, recorded apart by RECORD_DUPLICATE). Endpoints without one pay a null column in the claim and the fan-out.
 */

export type AttemptRequest = DeliverPayload | { deliveryId: string; trigger: "TEST" };

export type AttemptOutcome =
  | { kind: "attempted"; succeeded: boolean; status: WebhookDeliveryStatus; attempt: number }
  | { kind: "skipped"; reason: "gone" | "not due" | "endpoint inactive" | "event expired" }
  /** Another attempt of this scheduled step holds the lease (or died holding it): come back at retryAt. */
  | { kind: "busy"; retryAt: Date }
  /** Over its endpoint's pace: put off, uncounted, to the slot reserved for it at `at` (its job runs again then). */
  | { kind: "paced"; at: Date }
  /** Held by the endpoint's fault drill: its first attempt runs at `at`. */
  | { kind: "held"; drill: Hold["drill"]; at: Date }
  /** A fault drill's second send, recorded apart: the delivery's status is what its own attempts made it. */
  | { kind: "duplicated"; succeeded: boolean; attempt: number };

const ENDPOINT_INACTIVE_ERROR = "endpoint inactive";
const EVENT_EXPIRED_ERROR = "event past retention";

/** What a claim returns: everything an attempt needs to send. */
export interface Claimed {
  eventId: string;
  endpointId: string;
  storeId: string;
  applicationId: string;
  eventType: string;
  nextAttemptAt: Date | null;
  startedAt: Date;
  url: string;
  endpointStatus: WebhookEndpointStatus;
  /** Start of the endpoint's current run of failures; null while it succeeds. */
  failingSince: Date | null;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  data: unknown;
  eventCreatedAt: Date;
  /** As float8, which pg reads as a number (a bigint arrives as text); sequences stay far below 2^53. */
  eventSequence: number;
  tenantId: string;
  environment: WebhookEnvironment;
  /** All scheduled attempts ran and none ever succeeded: the delivery is a dead letter whatever its status says. */
  chainExhausted: boolean;
  /** Deliveries per second the endpoint receives at most. */
  rateLimit: number;
  /** The API version the endpoint's deliveries are rendered in, as stored (an unknown one reads as the first). */
  apiVersion: string;
  /** lastAttemptAt before this claim stamped it (null for a first attempt), given back when the attempt is put off. */
  previousAttemptAt: Date | null;
  /** The endpoint's fault drill, as PATCH stored it; null (nearly always) when none runs. */
  drill: Drill | null;
}

/** A fault drill's second send of a delivery: an extra attempt, outside the retry chain. */
function isDuplicate(req: AttemptRequest): boolean {
  return req.trigger === "SCHEDULED" && req.drill === "duplicate";
}

/** The due time a scheduled attempt's claim (and put-off) holds the chain to; null for extra attempts, which claim regardless. */
function chainDueAt(req: AttemptRequest): string | null {
  return req.trigger === "SCHEDULED" && !isDuplicate(req) ? req.dueAt : null;
}

async function claim(services: Services, req: AttemptRequest): Promise<Claimed | null> {
  const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
  const { rows } = await services.pool.query<Claimed>({ ...WEBHOOK_CLAIM, values: [req.deliveryId, chainDueAt(req), lease, MAX_SCHEDULED_ATTEMPTS] });
  return rows[0] ?? null;
}

/** Why a claim found nothing to do; the rare path, so it may cost a second statement. */
async function explainUnclaimed(services: Services, req: AttemptRequest): Promise<AttemptOutcome> {
  const { rows } = await services.pool.query<{
    status: WebhookDeliveryStatus;
    nextAttemptAt: Date | null;
    lastAttemptAt: Date | null;
    endpointStatus: string;
    eventKept: boolean;
  }>(DELIVERY_STATE, [req.deliveryId]);
  const row = rows[0];
  if (!row) return { kind: "skipped", reason: "gone" };
  // What stops the delivery: its event was swept by retention, or its endpoint is INACTIVE (a replay can send it once re-enabled).
  const stop = row.eventKept
    ? ({ reason: "endpoint inactive", error: ENDPOINT_INACTIVE_ERROR } as const)
    : ({ reason: "event expired", error: EVENT_EXPIRED_ERROR } as const);
  // A drill's second send is extra: the delivery's own attempts decide its state.
  if (isDuplicate(req)) return { kind: "skipped", reason: stop.reason };
  if (req.trigger === "SCHEDULED") {
    const due =
      (row.status === "PENDING" || row.status === "FAILED") && row.nextAttemptAt !== null && row.nextAttemptAt.getTime() === parseInstant(req.dueAt)?.getTime();
    if (!due) return { kind: "skipped", reason: "not due" };
    if (row.eventKept && row.endpointStatus !== "INACTIVE") {
      const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
      return { kind: "busy", retryAt: new Date((row.lastAttemptAt?.getTime() ?? Date.now()) + lease) };
    }
    await services.pool.query(END_CHAIN, [req.deliveryId, req.dueAt, stop.error]);
    return { kind: "skipped", reason: stop.reason };
  }
  // A replay, recover or test claims unless the endpoint was disabled or the event swept after it was requested.
  await services.pool.query(FAIL_REPLAY, [req.deliveryId, stop.error, MAX_SCHEDULED_ATTEMPTS]);
  return { kind: "skipped", reason: stop.reason };
}

interface Sent {
  result: SendWebhookResult;
  headers: Record<string, string>;
  body: string;
  /** The URL failed its safety check at delivery time: nothing was sent. */
  refused: boolean;
}

/**
 * How an attempt ended, as metrics count it: succeeded; failed (the receiver answered, but not 2xx, or broke off its
 * body); timeout; unreachable (no answer: refused connection, reset, TLS or DNS failure); refused (its URL
 * failed the safety check at delivery time).
 */
export const ATTEMPT_RESULTS = ["succeeded", "failed", "timeout", "unreachable", "refused"] as const;
export type AttemptResult = (typeof ATTEMPT_RESULTS)[number];

export interface AttemptReport {
  result: AttemptResult;
  seconds: number;
}

function resultOf(sent: Sent): AttemptResult {
  if (sent.result.ok) return "succeeded";
  if (sent.refused) return "refused";
  if (sent.result.timedOut) return "timeout";
  return sent.result.status === null ? "unreachable" : "failed";
}

/** Who hears of every attempt a process's services run (its metrics); a Set, so watching twice counts once. */
const watchers = new WeakMap<Services, Set<(report: AttemptReport) => void>>();

export function watchAttempts(services: Services, watcher: (report: AttemptReport) => void): void {
  const set = watchers.get(services) ?? new Set();
  set.add(watcher);
  watchers.set(services, set);
}

/**
 * Decrypted endpoint secrets by ciphertext: an endpoint's deliveries all carry the same ciphertext, so each is
 * decrypted once rather than once per attempt. A rotation stores a new ciphertext (a new entry); the map is emptied
 * when it holds SECRET_CACHE_SIZE of them.
 */
const SECRET_CACHE_SIZE = 10_000;
const secretCache = new WeakMap<Services, Map<string, string>>();
function decryptSecret(services: Services, ciphertext: string): string {
  const cache = secretCache.get(services) ?? new Map<string, string>();
  secretCache.set(services, cache);
  let secret = cache.get(ciphertext);
  if (secret === undefined) {
    if (cache.size >= SECRET_CACHE_SIZE) cache.clear();
    secret = services.box.decrypt(ciphertext);
    cache.set(ciphertext, secret);
  }
  return secret;
}

async function send(services: Services, deliveryId: string, c: Claimed, waitOutside: WaitOutside): Promise<Sent> {
  const { config } = services;
  const secrets = [decryptSecret(services, c.secretCiphertext)];
  if (c.previousSecretCiphertext) secrets.push(decryptSecret(services, c.previousSecretCiphertext));
  const apiVersion = isApiVersion(c.apiVersion) ? c.apiVersion : FIRST_API_VERSION;
  const body = envelopeBody({ id: c.eventId, type: c.eventType, createdAt: c.eventCreatedAt, sequence: c.eventSequence, data: c.data }, c.tenantId, apiVersion);
  // The attempt log keeps the headers sent, so it shows which version each attempt's body was rendered in.
  const headers = deliveryHeaders({ deliveryId, eventId: c.eventId, eventType: c.eventType, body, secrets, apiVersion });
  // The lookup and the POST both wait on the partner's side, so both run outside.
  return waitOutside(async (): Promise<Sent> => {
    // Repeated at every attempt: the host may resolve elsewhere now than at registration (DNS rebinding).
    const check = await checkWebhookUrl(c.url, { environment: c.environment, allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
    if (!check.ok) {
      const error = `URL refused at delivery time (${check.code}): ${check.message}`;
      return {
        result: { ok: false, status: null, durationMs: 0, error, responseExcerpt: null, timedOut: false, retryAfter: null },
        headers,
        body,
        refused: true,
      };
    }
    const result = await sendWebhook({ url: check.url, address: check.addresses[0], headers, body, timeoutMs: config.WEBHOOK_TIMEOUT_MS });
    return { result, headers, body, refused: false };
  });
}

interface Decision {
  status: WebhookDeliveryStatus;
  /** What happens to nextAttemptAt: set to now + delayMs (and a job enqueued), cleared, or kept. */
  next: "schedule" | "clear" | "keep";
  delayMs: number;
  /** This failure dead-letters the delivery: its endpoint turns FAILED. */
  deadLetter: boolean;
  /** This failure stops the endpoint (INACTIVE): its receiver answered 410 Gone, or it has failed for too long. */
  stop: "gone" | "failing" | null;
}

interface Policy {
  schedule: readonly number[];
  disableAfterMs: number;
  now: number;
}

/** What the endpoint's fault drill did to this attempt (only a first attempt is ever held). */
function drillOfAttempt(req: AttemptRequest): RecordRow["drill"] {
  const drill = req.trigger === "SCHEDULED" ? req.drill : undefined;
  return drill === "delayed" || drill === "reordered" ? drill : null;
}

function decide(req: AttemptRequest, c: Claimed, result: SendWebhookResult, policy: Policy): Decision {
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

async function record(services: Services, req: AttemptRequest, c: Claimed, sent: Sent, create: boolean): Promise<AttemptOutcome> {
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
 * At the drill's duplicateRate, queues the delivery's second send, within the reorder window after the first: same
 * event, same eventId and webhook-id, signed when it is sent. Queued once its first attempt is recorded, so the
 * delivery exists; a crash in between loses only the copy.
 */
async function duplicateLater(services: Services, req: FirstAttempt, drill: Drill): Promise<void> {
  const afterMs = duplicateAfterMs(drill);
  if (afterMs === null) return;
  const payload: DeliverPayload = { deliveryId: req.deliveryId, trigger: "SCHEDULED", step: 1, dueAt: req.dueAt, drill: "duplicate" };
  await services.pool.query(ENQUEUE_DUPLICATE, [DELIVER_TASK, JSON.stringify(payload), afterMs, deliverJobKey(payload)]);
}

/** Records a drill's second send: an attempt row marked duplicate; the delivery and its endpoint's health are left as they are. */
async function recordDuplicate(services: Services, req: AttemptRequest, c: Claimed, sent: Sent): Promise<AttemptOutcome> {
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

/**
 * Claims, sends and records one attempt; the API's tests pass `waitOutside` so the send holds no admission slot. An
 * attempt over its endpoint's pace is put off to the slot reserved for it (a test is paced before it is created, see
 * sendTestEvent).
 */
export async function runAttempt(services: Services, req: AttemptRequest, waitOutside: WaitOutside = waitInline): Promise<AttemptOutcome> {
  const claimed = await claim(services, req);
  if (!claimed) return explainUnclaimed(services, req);
  if (req.trigger !== "TEST") {
    const slot = await paceSlot(services, req, claimed);
    if (slot) return putOff(services, req, claimed, slot);
  }
  return sendAndRecord(services, req, claimed, false, waitOutside);
}

/** Null to send now, or the slot of the endpoint's pace the attempt must wait for. */
async function paceSlot(services: Services, req: DeliverPayload, c: Claimed): Promise<Date | null> {
  // A job that waited for the slot reserved for it uses it, unless it started too late for the slot's second.
  const reserved = req.slotAt ? parseInstant(req.slotAt) : null;
  if (reserved && services.pacer.holds(reserved)) return null;
  return services.pacer.take(paceKey(c.endpointId), c.rateLimit);
}

/** Puts a claimed attempt off to its slot: nothing is sent or counted, and its job runs again then (DEFER_ATTEMPT). */
async function putOff(services: Services, req: DeliverPayload, c: Claimed, slot: Date): Promise<AttemptOutcome> {
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
  const slot = await services.pacer.take(paceKey(planned.endpointId), planned.rateLimit);
  if (!slot) return sendAndRecord(services, req, planned, true);
  await deferFirst(services, req, planned, slot, null);
  services.log.debug({ deliveryId: req.deliveryId, endpointId: planned.endpointId, slotAt: slot.toISOString() }, "webhook attempt paced");
  return { kind: "paced", at: slot };
}

function deferFirst(services: Services, req: FirstAttempt, planned: Claimed, at: Date, drill: Hold["drill"] | null): Promise<null> {
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
  });
}
