import type { Services } from "../services.js";
import { checkWebhookUrl, type WebhookEnvironment } from "./url-safety.js";
import { sendWebhook, type SendWebhookResult } from "./send.js";
import { deliveryHeaders, envelopeBody } from "./message.js";
import { DELIVER_TASK, scheduledJobKey, type DeliverPayload } from "./jobs.js";
import type { WebhookDeliveryStatus } from "../db/prisma.js";
import { MAX_SCHEDULED_ATTEMPTS, attemptLeaseMs, retryDelayMs } from "./policy.js";

/**
 * One delivery attempt in Svix's three steps: prepare (claim the delivery and load what to send), send
 * (re-check the URL, sign, POST), record (attempt row, delivery and endpoint state, next scheduled job).
 * The worker runs SCHEDULED and REPLAY attempts; the API runs TEST attempts inline. Two statements per
 * attempt on the hot path (claim, record), both on the raw pool.
 */

export type AttemptRequest = DeliverPayload | { deliveryId: string; trigger: "TEST" };

export type AttemptOutcome =
  | { kind: "attempted"; succeeded: boolean; status: WebhookDeliveryStatus; attempt: number }
  | { kind: "skipped"; reason: "gone" | "not due" | "endpoint inactive" }
  /** Another attempt of this scheduled step holds the lease (or died holding it): come back at retryAt. */
  | { kind: "busy"; retryAt: Date };

const ENDPOINT_INACTIVE_ERROR = "endpoint inactive";

interface Claimed {
  eventId: string;
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
// one lease). INACTIVE endpoints are never claimed.
const CLAIM = `
update "WebhookDelivery" d set "lastAttemptAt" = now(), "updatedAt" = now()
from "WebhookEndpoint" e, "Event" ev, "Store" s
where d.id = $1 and e.id = d."endpointId" and ev.id = d."eventId" and s.id = d."storeId"
  and e.status <> 'INACTIVE'
  and ($2::timestamptz is null or (
    d.status in ('PENDING', 'FAILED') and d."nextAttemptAt" = $2::timestamptz
    and (d."lastAttemptAt" is null or d."lastAttemptAt" < $2::timestamptz or d."lastAttemptAt" < now() - $3::int * interval '1 millisecond')))
returning d."eventId", d."eventType", d."nextAttemptAt", d."lastAttemptAt" as "startedAt", e.url, e."secretCiphertext",
  case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
  ev.data, ev."createdAt" as "eventCreatedAt", s.code as "tenantId", s.environment,
  case when $2::timestamptz is null then (
    select count(*) filter (where a.trigger = 'SCHEDULED') >= $4::int and not coalesce(bool_or(a.succeeded), false)
    from "WebhookAttempt" a where a."deliveryId" = d.id
  ) else false end as "chainExhausted"`;

async function claim(services: Services, req: AttemptRequest): Promise<Claimed | null> {
  const dueAt = req.trigger === "SCHEDULED" ? req.dueAt : null;
  const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
  const { rows } = await services.pool.query<Claimed>(CLAIM, [req.deliveryId, dueAt, lease, MAX_SCHEDULED_ATTEMPTS]);
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
    const due = (row.status === "PENDING" || row.status === "FAILED") && row.nextAttemptAt?.getTime() === Date.parse(req.dueAt);
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
  await services.pool.query(
    `update "WebhookDelivery" set status = 'FAILED', "lastError" = $2, "updatedAt" = now() where id = $1 and status = 'PENDING'`,
    [req.deliveryId, ENDPOINT_INACTIVE_ERROR],
  );
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

// One statement: the delivery's new state, the attempt row, the endpoint's health and the next scheduled job
// commit together. The endpoint row is shared by all its deliveries, so a success only writes it when
// something changes (or lastSuccessAt is over a second old) to keep a busy endpoint from being a hot row.
const RECORD = `
with delivery as (
  update "WebhookDelivery" d set
    status = $2::"WebhookDeliveryStatus",
    attempts = d.attempts + 1,
    "httpStatus" = $3::int,
    "lastError" = $4::text,
    "requestDurationMs" = $5::int,
    "nextAttemptAt" = case $6::text when 'schedule' then now() + $7::int * interval '1 millisecond' when 'clear' then null else d."nextAttemptAt" end,
    "updatedAt" = now()
  where d.id = $1
  returning d.id, d."endpointId", d.attempts, d."nextAttemptAt"
), attempt as (
  insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody", "responseExcerpt", "startedAt")
  select gen_random_uuid(), delivery.id, delivery.attempts, $8::"WebhookAttemptTrigger", $9::boolean, $3::int, $5::int, $10::text, $11::jsonb, $12::text, $13::text, $14::timestamptz
  from delivery
), endpoint as (
  update "WebhookEndpoint" e set
    "failureCount" = case when $9::boolean then 0 else e."failureCount" + 1 end,
    "lastSuccessAt" = case when $9::boolean then now() else e."lastSuccessAt" end,
    status = case
      when $9::boolean and e.status = 'FAILED' then 'ACTIVE'::"WebhookEndpointStatus"
      when $15::boolean and e.status = 'ACTIVE' then 'FAILED'::"WebhookEndpointStatus"
      else e.status end,
    "updatedAt" = now()
  from delivery
  where e.id = delivery."endpointId"
    and (not $9::boolean or e."failureCount" <> 0 or e.status = 'FAILED' or e."lastSuccessAt" is null or e."lastSuccessAt" < now() - interval '1 second')
)
select delivery.attempts,
  case when $6::text = 'schedule' then (graphile_worker.add_job(
    $16::text,
    json_build_object('deliveryId', delivery.id, 'trigger', 'SCHEDULED', 'step', $17::int, 'dueAt', delivery."nextAttemptAt"),
    run_at := delivery."nextAttemptAt",
    job_key := $18::text
  )).id end as "jobId"
from delivery`;

/** lastError: the failure, then as much of the receiver's answer as was read (up to 4 KiB). */
function lastErrorOf(result: SendWebhookResult): string | null {
  if (result.ok) return null;
  const excerpt = result.responseExcerpt?.trim();
  return excerpt ? `${result.error ?? "failed"}: ${excerpt}` : (result.error ?? "failed");
}

async function record(services: Services, req: AttemptRequest, c: Claimed, sent: Sent): Promise<AttemptOutcome> {
  const { result } = sent;
  const d = decide(req, c, result.ok, services.config.WEBHOOK_RETRY_SCHEDULE);
  const nextStep = req.trigger === "SCHEDULED" ? req.step + 1 : 0;
  const { rows } = await services.pool.query<{ attempts: number }>(RECORD, [
    req.deliveryId,
    d.status,
    result.status,
    lastErrorOf(result),
    result.durationMs,
    d.next,
    d.delayMs,
    req.trigger,
    result.ok,
    result.error,
    JSON.stringify(sent.headers),
    sent.body,
    result.responseExcerpt,
    c.startedAt,
    d.deadLetter,
    DELIVER_TASK,
    nextStep,
    scheduledJobKey(req.deliveryId),
  ]);
  // The delivery vanished mid-attempt (its endpoint was deleted): nothing left to record against.
  if (!rows[0]) return { kind: "skipped", reason: "gone" };
  return { kind: "attempted", succeeded: result.ok, status: d.status, attempt: rows[0].attempts };
}

export async function runAttempt(services: Services, req: AttemptRequest): Promise<AttemptOutcome> {
  const claimed = await claim(services, req);
  if (!claimed) return explainUnclaimed(services, req);
  const sent = await send(services, req.deliveryId, claimed);
  return record(services, req, claimed, sent);
}
