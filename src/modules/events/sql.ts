import { Prisma } from "../../platform/db/prisma.js";

/**
 * Inserts the events, in the order given (so the `event_sequence` trigger numbers them in that order), and adds
 * each one's fan-out job (`task`, payload { eventId }, job key `fan_out:<eventId>`) in the same statement;
 * returns the events' ids in order. `change` is the caller's change as CTEs, the last one named `changed`: the
 * events are written only if `changed` returns a row, so a change and its events make one round trip. A `fields`
 * column of `changed` (a JSON object), when it has one, overrides those keys of every event's data: what only the
 * change knows once it ran, such as the version a move made. Plain SQL
 * because graphile_worker.add_job is a function, which Prisma can only call in raw SQL.
 */
export const insertEvents = (
  task: string,
  storeId: string,
  events: readonly { type: string; data: unknown }[],
  createdAt: Date,
  change: Prisma.Sql = Prisma.sql`changed as (select 1)`,
) => Prisma.sql`
    with ${change},
    inserted as (
      insert into "Event" (id, "storeId", type, data, "createdAt")
      select gen_random_uuid(), ${storeId}::uuid, e.value->>'type',
             e.value->'data' || coalesce((select to_jsonb(c)->'fields' from changed c limit 1), '{}'), ${createdAt}::timestamptz
      from jsonb_array_elements(${JSON.stringify(events)}::jsonb) with ordinality as e(value, n)
      where exists (select 1 from changed)
      order by e.n
      returning id
    )
    select id::text as id from inserted
    where (graphile_worker.add_job(${task}, json_build_object('eventId', id::text), job_key := 'fan_out:' || id::text)).id is not null`;

/**
 * Deletes up to $2 events recorded before $1, except events with an attempt still scheduled or queued (a PENDING
 * delivery: a replay or recover requested before the event expired still finds it), and drops what their
 * deliveries' attempts kept of the bodies (request body and headers, response excerpt). The delivery rows and
 * the attempts' summaries stay (status, attempts, eventId, eventType): WebhookDelivery.eventId has no foreign key.
 * Plain SQL for the batch bound: Prisma's deleteMany takes no LIMIT, and one unbounded DELETE of a month of
 * events would hold its locks and its WAL in one transaction.
 */
export const DELETE_EXPIRED_EVENTS = `with expired as (
  select e.id from "Event" e
  where e."createdAt" < $1
    and not exists (select 1 from "WebhookDelivery" d where d."eventId" = e.id and (d."nextAttemptAt" is not null or d.status = 'PENDING'))
  limit $2
), bodies as (
  update "WebhookAttempt" a set "requestBody" = '', "requestHeaders" = '{}'::jsonb, "responseExcerpt" = null
  from "WebhookDelivery" d
  where d.id = a."deliveryId" and d."eventId" in (select id from expired)
)
delete from "Event" where id in (select id from expired)`;
