import { Prisma } from "../../../platform/db/prisma.js";
import { SQL_ORDER_QUEUE } from "../jobs.js";

export interface BackfillPage {
  endpointId: string;
  afterSequence: bigint;
  /** Events this call queues at most; one more is read to answer hasMore. */
  limit: number;
  /** The scope each event type needs (a JSON object), as the fan-out has it. */
  scopes: string;
  /** The operational types (webhook.*), which go only to the other endpoints of the Application they are about. */
  operational: readonly string[];
  task: string;
  jobKeyPrefix: string;
}

/**
 * A backfill's one statement (src/modules/webhooks/backfill.ts): the store's events after `afterSequence`, in sequence
 * order, that the endpoint would get from the fan-out today (its types or "*", its Application's scopes, the rule for
 * operational events), `limit` of them; a delivery for each one that has none (PENDING, no scheduled attempt: the
 * endpoint did not exist or did not subscribe when the event fanned out), every one of them marked PENDING and given one
 * `task` job (trigger BACKFILL, key `jobKeyPrefix` || id, so a scheduled chain or a replay keeps its own job). Answers
 * how many were queued, the last queued event's sequence and whether another event follows. Plain SQL: an INSERT from
 * a query with ON CONFLICT, and graphile_worker.add_job, are beyond Prisma's query API.
 */
export const backfillPage = (p: BackfillPage) => Prisma.sql`
  with endpoint as (
    select e.id, e."applicationId", e."storeId", e.events, a.scopes, ${Prisma.raw(SQL_ORDER_QUEUE("e"))} as queue
    from "WebhookEndpoint" e join "Application" a on a.id = e."applicationId"
    where e.id = ${p.endpointId}::uuid
  ), subscribed as (
    select ev.id, ev.type, ev.sequence, e.id as "endpointId", e."applicationId", e."storeId"
    from endpoint e join "Event" ev on ev."storeId" = e."storeId" and ev.sequence > ${p.afterSequence}
    where (ev.type = any(e.events) or (e.events = '{*}' and ev.type <> 'webhook.test'))
      and (${p.scopes}::jsonb ->> ev.type) = any(e.scopes)
      and (not ev.type = any(${p.operational}::text[]) or exists (
        select 1 from "WebhookEndpoint" o
        where o.id::text = ev.data ->> 'endpointId' and o."applicationId" = e."applicationId" and o.id <> e.id))
    order by ev.sequence
    limit ${p.limit + 1}
  ), page as (
    select * from subscribed order by sequence limit ${p.limit}
  ), created as (
    insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "updatedAt")
    select gen_random_uuid(), pg.id, pg."endpointId", pg."applicationId", pg."storeId", pg.type, 'PENDING', now() from page pg
    on conflict ("eventId", "endpointId") do nothing
    returning id, "eventId"
  ), marked as (
    update "WebhookDelivery" d set status = 'PENDING', "updatedAt" = now()
    from page pg where d."eventId" = pg.id and d."endpointId" = pg."endpointId"
    returning d.id, pg.sequence
  ), queued as (
    select graphile_worker.add_job(${p.task}, json_build_object('deliveryId', q.id, 'trigger', 'BACKFILL'), job_key := ${p.jobKeyPrefix} || q.id,
      queue_name := (select queue from endpoint))
    from (
      select c.id, pg.sequence from created c join page pg on pg.id = c."eventId"
      union all select id, sequence from marked
      order by sequence
    ) q
  )
  select (select count(*)::int from queued) as count,
    (select max(sequence)::text from page) as "lastSequence",
    (select count(*) from subscribed) > ${p.limit} as "hasMore"`;
