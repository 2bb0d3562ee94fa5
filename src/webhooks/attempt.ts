import DataLoader from "dataloader";
import type pg from "pg";
import type { Services } from "../services.js";
import { checkWebhookUrl, type WebhookEnvironment } from "./url-safety.js";
import { sendWebhook, type SendWebhookResult } from "./send.js";
import { deliveryHeaders, envelopeBody } from "./message.js";
import { DELIVER_TASK, scheduledJobKey, type DeliverPayload } from "./jobs.js";
import type { WebhookDeliveryStatus } from "../db/prisma.js";
import { MAX_SCHEDULED_ATTEMPTS, attemptLeaseMs, retryDelayMs } from "./policy.js";
import { ASYNC_COMMIT } from "../db/async-commit.js";
import { parseInstant } from "../input.js";

/**
 * One delivery attempt in Svix's three steps: prepare (claim the delivery and load what to send), send
 * (re-check the URL, sign, POST), record (attempt row, delivery and endpoint state, next scheduled job).
 * The worker runs SCHEDULED and REPLAY attempts; the API runs TEST attempts inline. Two statements per
 * attempt (claim, record), both on the raw pool; a first attempt is claimed by the fan-out that creates it
 * (src/webhooks/fan-out.ts), and records that end together share one statement.
 */

export type AttemptRequest = DeliverPayload | { deliveryId: string; trigger: "TEST" };

export type AttemptOutcome =
  | { kind: "attempted"; succeeded: boolean; status: WebhookDeliveryStatus; attempt: number }
  | { kind: "skipped"; reason: "gone" | "not due" | "endpoint inactive" }
  /** Another attempt of this scheduled step holds the lease (or died holding it): come back at retryAt. */
  | { kind: "busy"; retryAt: Date };

const ENDPOINT_INACTIVE_ERROR = "endpoint inactive";

/** What a claim returns: everything an attempt needs to send. */
export interface Claimed {
  eventId: string;
  endpointId: string;
  eventType: string;
  nextAttemptAt: Date | null;
  startedAt: Date;
  url: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  data: unknown;
  eventCreatedAt: Date;
  tenantId: string;
  environment: WebhookEnvironment;
  /** All scheduled attempts ran and none ever succeeded: the delivery is a dead letter whatever its status says. */
  chainExhausted: boolean;
}

// The scheduled claim succeeds once per due time: it stamps lastAttemptAt, and another claim for the same
// dueAt only passes once that stamp is older than the lease (the worker that made it died). Replays and tests
// are extra attempts and claim unconditionally (their stamp can hold back an overdue scheduled attempt for
// one lease). INACTIVE endpoints are never claimed. Claims and records commit asynchronously (ASYNC_COMMIT): the
// job's completion, committed after them, flushes them; losing them in a database crash re-runs the attempt.
const CLAIM = `
update "WebhookDelivery" d set "lastAttemptAt" = now(), "updatedAt" = now()
from "WebhookEndpoint" e, "Event" ev, "Store" s, ${ASYNC_COMMIT}
where d.id = $1 and e.id = d."endpointId" and ev.id = d."eventId" and s.id = d."storeId"
  and e.status <> 'INACTIVE'
  and ($2::timestamptz is null or (
    d.status in ('PENDING', 'FAILED') and d."nextAttemptAt" = $2::timestamptz
    and (d."lastAttemptAt" is null or d."lastAttemptAt" < $2::timestamptz or d."lastAttemptAt" < now() - $3::int * interval '1 millisecond')))
returning d."eventId", d."endpointId", d."eventType", d."nextAttemptAt", d."lastAttemptAt" as "startedAt", e.url, e."secretCiphertext",
  case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
  ev.data, ev."createdAt" as "eventCreatedAt", s.code as "tenantId", s.environment,
  case when $2::timestamptz is null then (
    select count(*) filter (where a.trigger = 'SCHEDULED') >= $4::int and not coalesce(bool_or(a.succeeded), false)
    from "WebhookAttempt" a where a."deliveryId" = d.id
  ) else false end as "chainExhausted"`;

async function claim(services: Services, req: AttemptRequest): Promise<Claimed | null> {
  const dueAt = req.trigger === "SCHEDULED" ? req.dueAt : null;
  const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
  const { rows } = await services.pool.query<Claimed>({ name: "webhook_claim", text: CLAIM, values: [req.deliveryId, dueAt, lease, MAX_SCHEDULED_ATTEMPTS] });
  return rows[0] ?? null;
}

/** Why a claim found nothing to do; the rare path, so it may cost a second statement. */
async function explainUnclaimed(services: Services, req: AttemptRequest): Promise<AttemptOutcome> {
  const { rows } = await services.pool.query<{ status: WebhookDeliveryStatus; nextAttemptAt: Date | null; lastAttemptAt: Date | null; endpointStatus: string }>(
    `select d.status, d."nextAttemptAt", d."lastAttemptAt", e.status as "endpointStatus"
     from "WebhookDelivery" d join "WebhookEndpoint" e on e.id = d."endpointId" where d.id = $1`,
    [req.deliveryId],
  );
  const row = rows[0];
  if (!row) return { kind: "skipped", reason: "gone" };
  if (req.trigger === "SCHEDULED") {
    const due =
      (row.status === "PENDING" || row.status === "FAILED") && row.nextAttemptAt !== null && row.nextAttemptAt.getTime() === parseInstant(req.dueAt)?.getTime();
    if (!due) return { kind: "skipped", reason: "not due" };
    if (row.endpointStatus === "INACTIVE") {
      // INACTIVE endpoints receive nothing: the retry chain ends here; a replay can send it once re-enabled.
      await services.pool.query(
        `update "WebhookDelivery" set status = 'FAILED', "nextAttemptAt" = null, "lastError" = $3, "updatedAt" = now()
         where id = $1 and "nextAttemptAt" = $2::timestamptz`,
        [req.deliveryId, req.dueAt, ENDPOINT_INACTIVE_ERROR],
      );
      return { kind: "skipped", reason: "endpoint inactive" };
    }
    const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
    return { kind: "busy", retryAt: new Date((row.lastAttemptAt?.getTime() ?? Date.now()) + lease) };
  }
  // A replay whose endpoint was disabled after it was requested: leave PENDING for what it was before.
  await services.pool.query(`update "WebhookDelivery" set status = 'FAILED', "lastError" = $2, "updatedAt" = now() where id = $1 and status = 'PENDING'`, [
    req.deliveryId,
    ENDPOINT_INACTIVE_ERROR,
  ]);
  return { kind: "skipped", reason: "endpoint inactive" };
}

interface Sent {
  result: SendWebhookResult;
  headers: Record<string, string>;
  body: string;
}

async function send(services: Services, deliveryId: string, c: Claimed): Promise<Sent> {
  const { box, config } = services;
  const secrets = [box.decrypt(c.secretCiphertext)];
  if (c.previousSecretCiphertext) secrets.push(box.decrypt(c.previousSecretCiphertext));
  const body = envelopeBody({ id: c.eventId, type: c.eventType, createdAt: c.eventCreatedAt, data: c.data }, c.tenantId);
  const headers = deliveryHeaders({ deliveryId, eventId: c.eventId, eventType: c.eventType, body, secrets });
  // Repeated at every attempt: the host may resolve elsewhere now than at registration (DNS rebinding).
  const check = await checkWebhookUrl(c.url, { environment: c.environment, allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
  if (!check.ok) {
    const error = `URL refused at delivery time (${check.code}): ${check.message}`;
    return { result: { ok: false, status: null, durationMs: 0, error, responseExcerpt: null }, headers, body };
  }
  const result = await sendWebhook({ url: check.url, address: check.addresses[0], headers, body, timeoutMs: config.WEBHOOK_TIMEOUT_MS });
  return { result, headers, body };
}

interface Decision {
  status: WebhookDeliveryStatus;
  /** What happens to nextAttemptAt: set to now + delayMs (and a job enqueued), cleared, or kept. */
  next: "schedule" | "clear" | "keep";
  delayMs: number;
  /** This failure dead-letters the delivery: its endpoint turns FAILED. */
  deadLetter: boolean;
}

function decide(req: AttemptRequest, c: Claimed, succeeded: boolean, schedule: readonly number[]): Decision {
  if (succeeded) return { status: "DELIVERED", next: "clear", delayMs: 0, deadLetter: false };
  if (req.trigger === "SCHEDULED") {
    if (req.step < MAX_SCHEDULED_ATTEMPTS) return { status: "FAILED", next: "schedule", delayMs: retryDelayMs(schedule, req.step), deadLetter: false };
    return { status: "DEAD_LETTER", next: "clear", delayMs: 0, deadLetter: true };
  }
  // A failed replay or test leaves the retry chain alone: a dead letter stays one, pending retries still run.
  return { status: c.chainExhausted && c.nextAttemptAt === null ? "DEAD_LETTER" : "FAILED", next: "keep", delayMs: 0, deadLetter: false };
}

// Records every attempt that ended in the same tick in one statement, prepared once per connection (planning
// these CTEs costs more than running them): each delivery's new state, its attempt row, its endpoint's health
// and its next scheduled job commit together. $1 is a JSON array of RecordRow (a delivery appears once per batch),
// $2 the deliver task, $3 the deliveries' ids, $4 their endpoints' ids.
// An endpoint's row is shared by all its deliveries, so it is written once per batch, and a batch of successes
// only writes it when something changes (or lastSuccessAt is over a second old) to keep it from being a hot row;
// within one batch a success outweighs failures (the endpoint answered).
// Row locks are taken up front in one order, whatever plan PostgreSQL picks: the endpoints to write, by id, then
// the deliveries, by id. Updating rows in the order a plan meets them deadlocked concurrent batches (each batch
// meets shared endpoints in table order, which changes as rows are rewritten, and its deliveries in input order).
// Endpoints come first as for deleting an endpoint, which locks it and then its deliveries. Each row names its
// delivery's endpoint as the claim read it (it never changes), so finding them costs no extra read.
const RECORD = `
with input as (
  select * from jsonb_to_recordset($1::jsonb) as i(
    ord int, id uuid, endpoint_id uuid, status "WebhookDeliveryStatus", http_status int, last_error text, duration_ms int, next text, delay_ms int,
    trigger "WebhookAttemptTrigger", succeeded boolean, error text, headers jsonb, body text, excerpt text, started_at timestamptz,
    dead_letter boolean, next_step int, job_key text)
), outcome as (
  select endpoint_id as id, bool_or(succeeded) as ok, count(*) filter (where not succeeded) as failures, bool_or(dead_letter) as dead
  from input group by endpoint_id
), endpoint_lock as (
  -- $4 repeats the endpoints' ids as an array, for the same reason as $3 (below).
  select e.id from "WebhookEndpoint" e join outcome o on o.id = e.id
  where e.id = any($4::uuid[])
    and (not o.ok or e."failureCount" <> 0 or e.status = 'FAILED' or e."lastSuccessAt" is null or e."lastSuccessAt" < now() - interval '1 second')
  order by e.id
  for no key update of e
), delivery_lock as (
  -- The condition on endpoint_lock is always true: it is evaluated once, before the first delivery is locked.
  -- $3 repeats the ids as an array: the planner cannot see how few rows jsonb_to_recordset yields (it assumes
  -- 100), and without it chose to scan the whole table for a batch of one (3 ms instead of 0.1 ms).
  select d.id from "WebhookDelivery" d
  where d.id = any($3::uuid[]) and (select count(*) from endpoint_lock) >= 0
  order by d.id
  for no key update of d
), delivery as (
  update "WebhookDelivery" d set
    status = i.status,
    attempts = d.attempts + 1,
    "httpStatus" = i.http_status,
    "lastError" = i.last_error,
    "requestDurationMs" = i.duration_ms,
    "nextAttemptAt" = case i.next when 'schedule' then now() + i.delay_ms * interval '1 millisecond' when 'clear' then null else d."nextAttemptAt" end,
    "updatedAt" = now()
  from input i, delivery_lock l, ${ASYNC_COMMIT}
  where d.id = i.id and d.id = l.id
  returning d.id, d.attempts, d."nextAttemptAt", i.ord, i.next, i.next_step, i.job_key, i.trigger, i.succeeded,
    i.http_status, i.duration_ms, i.error, i.headers, i.body, i.excerpt, i.started_at
), attempt as (
  insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody", "responseExcerpt", "startedAt")
  select gen_random_uuid(), d.id, d.attempts, d.trigger, d.succeeded, d.http_status, d.duration_ms, d.error, d.headers, d.body, d.excerpt, d.started_at
  from delivery d
), endpoint as (
  update "WebhookEndpoint" e set
    "failureCount" = case when o.ok then 0 else e."failureCount" + o.failures end,
    "lastSuccessAt" = case when o.ok then now() else e."lastSuccessAt" end,
    status = case
      when o.ok and e.status = 'FAILED' then 'ACTIVE'::"WebhookEndpointStatus"
      when not o.ok and o.dead and e.status = 'ACTIVE' then 'FAILED'::"WebhookEndpointStatus"
      else e.status end,
    "updatedAt" = now()
  from outcome o, endpoint_lock l
  where e.id = o.id and e.id = l.id and e.id = any($4::uuid[])
)
select d.ord, d.attempts,
  case when d.next = 'schedule' then (graphile_worker.add_job(
    $2::text,
    json_build_object('deliveryId', d.id, 'trigger', 'SCHEDULED', 'step', d.next_step, 'dueAt', d."nextAttemptAt"),
    run_at := d."nextAttemptAt",
    job_key := d.job_key
  )).id end as "jobId"
from delivery d`;

/** One attempt's outcome, as RECORD reads it. */
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
}

/** Runs RECORD for a batch; a delivery recorded twice in one tick (a replay beside a retry) goes in a later round. */
export async function recordBatch(pool: pg.Pool, rows: readonly RecordRow[]): Promise<(number | null)[]> {
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
      name: "webhook_record",
      text: RECORD,
      values: [JSON.stringify(round), DELIVER_TASK, round.map((r) => r.id), endpoints],
    });
    for (const r of recorded) attempts[r.ord] = r.attempts;
  }
  return attempts;
}

/**
 * How long a finished attempt waits for others to share its RECORD statement. Attempts end at scattered moments,
 * so batching only what ends in the same tick gave batches of about one; a statement's fixed cost (executor
 * start, CTEs, commit) dominated, and the worker topped out near 850 deliveries/s. Waiting 5 ms fills batches at
 * load and delays only the job's completion, not the POST (measured: 1,800/s, latency p50 5 ms; docs/performance.md).
 */
const RECORD_WINDOW_MS = 5;
// One batcher per pool (DataLoader for its batching only; nothing is cached).
const recorders = new WeakMap<pg.Pool, DataLoader<RecordRow, number | null>>();
function recorder(pool: pg.Pool): DataLoader<RecordRow, number | null> {
  let loader = recorders.get(pool);
  if (!loader) {
    loader = new DataLoader((rows) => recordBatch(pool, rows), {
      cache: false,
      maxBatchSize: 200,
      batchScheduleFn: (run) => setTimeout(run, RECORD_WINDOW_MS),
    });
    recorders.set(pool, loader);
  }
  return loader;
}

/** lastError: the failure, then as much of the receiver's answer as was read (up to 4 KiB). */
function lastErrorOf(result: SendWebhookResult): string | null {
  if (result.ok) return null;
  const excerpt = result.responseExcerpt?.trim();
  return excerpt ? `${result.error ?? "failed"}: ${excerpt}` : (result.error ?? "failed");
}

async function record(services: Services, req: AttemptRequest, c: Claimed, sent: Sent): Promise<AttemptOutcome> {
  const { result } = sent;
  const d = decide(req, c, result.ok, services.config.WEBHOOK_RETRY_SCHEDULE);
  const attempts = await recorder(services.pool).load({
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
  });
  // The delivery vanished mid-attempt (its endpoint was deleted): nothing left to record against.
  if (attempts === null) return { kind: "skipped", reason: "gone" };
  return { kind: "attempted", succeeded: result.ok, status: d.status, attempt: attempts };
}

/** Sends and records an attempt someone already claimed (the fan-out claims first attempts as it creates them). */
export async function attemptClaimed(services: Services, req: AttemptRequest, claimed: Claimed): Promise<AttemptOutcome> {
  const sent = await send(services, req.deliveryId, claimed);
  return record(services, req, claimed, sent);
}

export async function runAttempt(services: Services, req: AttemptRequest): Promise<AttemptOutcome> {
  const claimed = await claim(services, req);
  if (!claimed) return explainUnclaimed(services, req);
  return attemptClaimed(services, req, claimed);
}
