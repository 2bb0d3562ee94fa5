import { ASYNC_COMMIT } from "../../../platform/db/async-commit.js";

/**
 * Claiming a delivery attempt, and what happens when the claim finds nothing to do: the attempt path's
 * statements, run on the raw pool (src/modules/webhooks/delivery/). The named one is prepared once per connection; the
 * others are sent as text with their values, as they always were.
 */

/**
 * Claims an attempt and returns everything it needs to send (`Claimed` in delivery/prepare.ts), in one round trip: a
 * conditional UPDATE ... FROM four tables returning joined columns and an aggregate, which Prisma's update (its
 * own model's columns, conditions on its own row) cannot express. The scheduled claim
 * succeeds once per due time: it stamps lastAttemptAt, and another claim for the same dueAt only passes once that
 * stamp is older than the lease (the worker that made it died). Replays and tests are extra attempts and claim
 * unconditionally (their stamp can hold back an overdue scheduled attempt for one lease). INACTIVE endpoints are
 * never claimed. It also answers the endpoint's rateLimit and the stamp it replaced, so an attempt put off for its
 * endpoint's pace can give the stamp back (DEFER_ATTEMPT). Claims and records commit asynchronously (ASYNC_COMMIT): the job's completion, committed after
 * them, flushes them; losing them in a database crash re-runs the attempt. Prepared once per connection.
 * $1 delivery id, $2 the scheduled attempt's due time (null for a replay or test), $3 the lease in ms,
 * $4 how many scheduled attempts a chain has.
 */
export const WEBHOOK_CLAIM = {
  name: "webhook_claim",
  text: `
update "WebhookDelivery" d set "lastAttemptAt" = now(), "updatedAt" = now()
from "WebhookEndpoint" e, "Event" ev, "Store" s, ${ASYNC_COMMIT},
  (select x."lastAttemptAt" as "previousAttemptAt" from "WebhookDelivery" x where x.id = $1) prev
where d.id = $1 and e.id = d."endpointId" and ev.id = d."eventId" and s.id = d."storeId"
  and e.status <> 'INACTIVE'
  and ($2::timestamptz is null or (
    d.status in ('PENDING', 'FAILED') and d."nextAttemptAt" = $2::timestamptz
    and (d."lastAttemptAt" is null or d."lastAttemptAt" < $2::timestamptz or d."lastAttemptAt" < now() - $3::int * interval '1 millisecond')))
returning d."eventId", d."endpointId", d."storeId", d."applicationId", d."eventType", d."nextAttemptAt", d."lastAttemptAt" as "startedAt", e.url, e."secretCiphertext",
  e.status as "endpointStatus", e."failingSince", e."rateLimit", e."apiVersion", prev."previousAttemptAt", e.drill,
  e.type, e."destinationCiphertext", e.ordering,
  case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
  ev.data, ev."createdAt" as "eventCreatedAt", ev.sequence::float8 as "eventSequence", s.code as "tenantId", s.environment,
  case when $2::timestamptz is null then (
    select count(*) filter (where a.trigger = 'SCHEDULED' and a.drill is distinct from 'duplicate') >= $4::int and not coalesce(bool_or(a.succeeded), false)
    from "WebhookAttempt" a where a."deliveryId" = d.id
  ) else false end as "chainExhausted"`,
} as const;

/**
 * Why a claim found nothing: the delivery's state, its endpoint's status and whether its event is still kept (the
 * rare path, so a second statement). Plain SQL on the raw pool like the rest of the attempt path. $1 delivery id.
 */
export const DELIVERY_STATE = `select d.status, d."nextAttemptAt", d."lastAttemptAt", e.status as "endpointStatus",
       exists (select 1 from "Event" ev where ev.id = d."eventId") as "eventKept"
     from "WebhookDelivery" d join "WebhookEndpoint" e on e.id = d."endpointId" where d.id = $1`;

/**
 * Ends the retry chain of a delivery whose endpoint is INACTIVE or whose event was swept, unless it was rescheduled
 * meanwhile (the condition on nextAttemptAt). On the raw pool like the rest of the attempt path (Prisma's updateMany
 * could say the same). $1 delivery id, $2 the due time the chain was at, $3 lastError.
 */
export const END_CHAIN = `update "WebhookDelivery" set status = 'FAILED', "nextAttemptAt" = null, "lastError" = $3, "updatedAt" = now()
         where id = $1 and "nextAttemptAt" = $2::timestamptz`;

/**
 * Ends a replay or recover that cannot be sent (its endpoint was disabled, or its event swept, after it was requested),
 * only while it is still PENDING: a dead letter (every scheduled attempt ran, none succeeded, none left) returns to
 * DEAD_LETTER, anything else is FAILED, as a failed replay leaves them. On the raw pool like the rest of the attempt
 * path. $1 delivery id, $2 lastError, $3 how many scheduled attempts a chain has.
 */
export const FAIL_REPLAY = `update "WebhookDelivery" d set "lastError" = $2, "updatedAt" = now(),
    status = case when d."nextAttemptAt" is null and (
      select count(*) filter (where a.trigger = 'SCHEDULED' and a.drill is distinct from 'duplicate') >= $3::int and not coalesce(bool_or(a.succeeded), false)
      from "WebhookAttempt" a where a."deliveryId" = d.id
    ) then 'DEAD_LETTER'::"WebhookDeliveryStatus" else 'FAILED'::"WebhookDeliveryStatus" end
  where d.id = $1 and d.status = 'PENDING'`;

/**
 * Puts a claimed attempt off to the slot its endpoint's pace reserved for it: no attempt is counted, the claim's stamp
 * is given back (lastAttemptAt as it was), a scheduled attempt's nextAttemptAt moves to the slot (unless the chain
 * moved meanwhile), and the same job (same key, so a scheduled chain keeps one job) runs again at the slot. Plain SQL
 * for graphile_worker.add_job. $1 delivery id, $2 the slot, $3 lastAttemptAt before the claim, $4 the scheduled
 * attempt's due time (null for a replay or recover), $5 the job's payload, $6 its key, $7 the deliver task, $8 its queue (an
 * ordered endpoint's) or null.
 */
export const DEFER_ATTEMPT = `with d as (
  update "WebhookDelivery" set "lastAttemptAt" = $3::timestamptz, "updatedAt" = now(),
    "nextAttemptAt" = case when $4::timestamptz is null then "nextAttemptAt" else $2::timestamptz end
  from ${ASYNC_COMMIT}
  where id = $1::uuid and ($4::timestamptz is null or "nextAttemptAt" = $4::timestamptz)
  returning id
)
select (graphile_worker.add_job($7::text, $5::json, run_at := $2::timestamptz, job_key := $6::text, queue_name := $8::text)).id from d`;
