import { Prisma } from "../../../platform/db/prisma.js";

/**
 * Enqueues the first batch job of a recover request in the caller's transaction. Plain SQL: graphile_worker.add_job is
 * a function, which Prisma can only call in raw SQL.
 */
export const enqueueRecovery = (task: string, payload: object) => Prisma.sql`select graphile_worker.add_job(${task}, ${JSON.stringify(payload)}::json)`;

/**
 * One batch of a recovery: the next $7 deliveries of endpoint $1 in status $2 created in [$3, $4), after ($5, $6) in
 * (createdAt, id) order (a range of the (endpointId, status, createdAt, id) index), are marked PENDING and each gets
 * one `$8` job (trigger RECOVER, key $9 || id, so its scheduled retries stay queued beside it). Rows are locked in id
 * order, as recording attempts locks them; one that changed status meanwhile is left alone. Returns the batch's size,
 * the jobs queued and its last row (the next batch's cursor). Plain SQL for the ordered row locks and add_job.
 */
export const RECOVER_BATCH = `
with batch as (
  select id, "createdAt" from "WebhookDelivery"
  where "endpointId" = $1::uuid and status = $2::"WebhookDeliveryStatus" and "createdAt" >= $3::timestamptz and "createdAt" < $4::timestamptz
    and ($5::timestamptz is null or ("createdAt", id) > ($5::timestamptz, $6::uuid))
  order by "createdAt", id
  limit $7
), locked as (
  select d.id from "WebhookDelivery" d where d.id in (select id from batch) order by d.id for no key update
), marked as (
  update "WebhookDelivery" d set status = 'PENDING', "updatedAt" = now()
  from locked l where d.id = l.id and d.status = $2::"WebhookDeliveryStatus"
  returning d.id
), jobs as (
  select graphile_worker.add_job($8::text, json_build_object('deliveryId', id, 'trigger', 'RECOVER'), job_key := $9::text || id) from marked
)
select (select count(*) from batch)::int as size, (select count(*) from jobs)::int as queued, last."createdAt", last.id
from (select 1) one left join lateral (select "createdAt", id from batch order by "createdAt" desc, id desc limit 1) last on true`;
