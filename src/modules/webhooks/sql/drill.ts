import { ASYNC_COMMIT } from "../../../platform/db/async-commit.js";

/**
 * What a fault drill adds to the attempt path (src/modules/webhooks/attempt.ts), run only for endpoints that run one.
 * Plain SQL on the raw pool like the rest of that path.
 */

/**
 * Queues a drill's second send of a delivery: a deliver job of its own key (so it never displaces the retry chain),
 * run after `$3` ms. graphile_worker.add_job is a function, which only raw SQL calls. $1 the deliver task, $2 the
 * job's payload, $3 the wait in ms, $4 its key.
 */
export const ENQUEUE_DUPLICATE = `select (graphile_worker.add_job($1::text, $2::json, run_at := now() + $3::int * interval '1 millisecond', job_key := $4::text)).id`;

/**
 * Records a drill's second send: its attempt row (marked duplicate, trigger SCHEDULED like the attempt it repeats) and
 * the delivery's attempt count, nothing else: its status, its retries and its endpoint's health stay as the delivery's
 * own attempts left them. One row lock, so it cannot deadlock with a batch of records. $1 delivery id, $2 succeeded,
 * $3 HTTP status, $4 duration in ms, $5 error, $6 the headers sent, $7 the body, $8 the response excerpt, $9 when it started.
 */
export const RECORD_DUPLICATE = `with d as (
  update "WebhookDelivery" set attempts = attempts + 1, "updatedAt" = now() from ${ASYNC_COMMIT} where id = $1::uuid returning id, attempts
)
insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody",
  "responseExcerpt", "startedAt", drill)
select gen_random_uuid(), d.id, d.attempts, 'SCHEDULED', $2::boolean, $3::int, $4::int, $5::text, $6::jsonb, $7::text, $8::text, $9::timestamptz, 'duplicate'
from d
returning number`;
