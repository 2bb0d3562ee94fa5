import { SQL_ORDER_QUEUE } from "../jobs.js";
import { ASYNC_COMMIT } from "../../../platform/db/async-commit.js";

/**
 * Records every attempt that ended in the same tick in one statement, prepared once per connection (planning
 * these CTEs costs more than running them): each delivery's new state, its attempt row, its endpoint's health
 * and its next scheduled job commit together. The endpoint's failingSince marks the start of its current run of failures
 * (WEBHOOK_DISABLE_AFTER is counted from it). $1 is a JSON array of RecordRow (delivery/record.ts; a delivery appears once per batch),
 * $2 the deliver task, $3 the deliveries' ids, $4 their endpoints' ids.
 * An endpoint's row is shared by all its deliveries, so it is written once per batch, and a batch of successes
 * only writes it when something changes (or lastSuccessAt is over a second old) to keep it from being a hot row;
 * within one batch a success outweighs failures (the endpoint answered).
 * Row locks are taken up front in one order, whatever plan PostgreSQL picks: the endpoints to write, by id, then
 * the deliveries, by id. Updating rows in the order a plan meets them deadlocked concurrent batches (each batch
 * meets shared endpoints in table order, which changes as rows are rewritten, and its deliveries in input order).
 * Endpoints come first as for deleting an endpoint, which locks it and then its deliveries. Each row names its
 * delivery's endpoint as the claim read it (it never changes), so finding them costs no extra read.
 *
 * Plain SQL because Prisma can express none of it in one statement: row locks in a chosen order (FOR NO KEY
 * UPDATE), updates and an insert across three tables for a whole batch of rows, and graphile_worker.add_job.
 */
const INPUT_COLUMNS = `ord int, id uuid, endpoint_id uuid, status "WebhookDeliveryStatus", http_status int, last_error text, duration_ms int, next text,
    delay_ms int, trigger "WebhookAttemptTrigger", succeeded boolean, error text, headers jsonb, body text, excerpt text, started_at timestamptz,
    dead_letter boolean, next_step int, job_key text,
    drill "WebhookAttemptDrill"`;

/**
 * The batch's endpoints whose health this batch writes, locked by id before anything else. An attempt a fault drill
 * held (drill set) that failed says nothing of the endpoint's health: its delivery's retries do.
 */
const ENDPOINT_LOCK = `outcome as (
  select endpoint_id as id, bool_or(succeeded) as ok, count(*) filter (where not succeeded) as failures, bool_or(dead_letter) as dead
  from input where drill is null or succeeded group by endpoint_id
), endpoint_lock as (
  -- $4 repeats the endpoints' ids as an array, for the same reason as $3 (below).
  select e.id from "WebhookEndpoint" e join outcome o on o.id = e.id
  where e.id = any($4::uuid[])
    and (not o.ok or e."failureCount" <> 0 or e."failingSince" is not null or e.status = 'FAILED' or e."lastSuccessAt" is null
      or e."lastSuccessAt" < now() - interval '1 second')
  order by e.id
  for no key update of e
)`;

/** The attempt rows, the endpoints' health and the next scheduled jobs, from `delivery` (the rows written). */
const RECORD_REST = `attempt as (
  insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody", "responseExcerpt", "startedAt",
    drill)
  select gen_random_uuid(), d.id, d.attempts, d.trigger, d.succeeded, d.http_status, d.duration_ms, d.error, d.headers, d.body, d.excerpt, d.started_at,
    d.drill
  from delivery d
), endpoint as (
  update "WebhookEndpoint" e set
    "failureCount" = case when o.ok then 0 else e."failureCount" + o.failures end,
    "lastSuccessAt" = case when o.ok then now() else e."lastSuccessAt" end,
    "failingSince" = case when o.ok then null else coalesce(e."failingSince", now()) end,
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
    job_key := d.job_key,
    queue_name := (select ${SQL_ORDER_QUEUE("e")} from "WebhookEndpoint" e where e.id = d.endpoint_id)
  )).id end as "jobId"
from delivery d`;

export const WEBHOOK_RECORD = {
  name: "webhook_record",
  text: `
with input as (
  select * from jsonb_to_recordset($1::jsonb) as i(${INPUT_COLUMNS})
), ${ENDPOINT_LOCK}, delivery_lock as (
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
  returning d.id, d.attempts, d."nextAttemptAt", i.endpoint_id, i.ord, i.next, i.next_step, i.job_key, i.trigger, i.succeeded,
    i.http_status, i.duration_ms, i.error, i.headers, i.body, i.excerpt, i.started_at, i.drill
), ${RECORD_REST}`,
} as const;

/**
 * Records the first attempts of deliveries the fan-out has not created yet (WEBHOOK_FAN_OUT_TARGETS in
 * ./fan-out.ts): each delivery is inserted already in its outcome's state, with its attempt row, its endpoint's
 * health and its retry job, as WEBHOOK_RECORD would have left it; one row version and one set of index entries
 * per delivery instead of two. The same parameters as WEBHOOK_RECORD (the condition on $3 always holds), each row
 * also naming its delivery's event, Application, store and event type; `next` is 'schedule' or 'clear' (a first attempt has no time to keep).
 * After the endpoints whose health changes, every endpoint of the batch is locked FOR KEY SHARE (by id), so that
 * an endpoint deleted meanwhile makes its deliveries vanish instead of failing the batch's foreign key check; KEY
 * SHARE never waits on another batch's NO KEY UPDATE. ON CONFLICT: a delivery a slower run of the same fan-out
 * created first is left as that run recorded it (no row is returned for it).
 */
export const WEBHOOK_RECORD_FIRST = {
  name: "webhook_record_first",
  text: `
with input as (
  select * from jsonb_to_recordset($1::jsonb) as i(${INPUT_COLUMNS}, event_id uuid, application_id uuid, store_id uuid, event_type text)
), ${ENDPOINT_LOCK}, endpoint_share as (
  select e.id from "WebhookEndpoint" e
  where e.id = any($4::uuid[]) and (select count(*) from endpoint_lock) >= 0
  order by e.id
  for key share of e
), inserted as (
  insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, attempts, "httpStatus", "lastError",
    "requestDurationMs", "lastAttemptAt", "nextAttemptAt", "createdAt", "updatedAt")
  select i.id, i.event_id, i.endpoint_id, i.application_id, i.store_id, i.event_type, i.status, 1, i.http_status, i.last_error,
    i.duration_ms, i.started_at, case when i.next = 'schedule' then now() + i.delay_ms * interval '1 millisecond' end, i.started_at, now()
  from input i join endpoint_share s on s.id = i.endpoint_id cross join ${ASYNC_COMMIT}
  where i.id = any($3::uuid[])
  on conflict ("eventId", "endpointId") do nothing
  returning id, attempts, "nextAttemptAt"
), delivery as (
  select d.id, d.attempts, d."nextAttemptAt", i.endpoint_id, i.ord, i.next, i.next_step, i.job_key, i.trigger, i.succeeded,
    i.http_status, i.duration_ms, i.error, i.headers, i.body, i.excerpt, i.started_at, i.drill
  from inserted d join input i on i.id = d.id
), ${RECORD_REST}`,
} as const;
