import { Prisma } from "../../platform/db/prisma.js";

/**
 * Enqueues the event's fan-out job (`task`, payload { eventId }, job key `fan_out:<eventId>`). Plain SQL because
 * graphile_worker.add_job is a function, which Prisma can only call in raw SQL, and it must run in the caller's
 * transaction so the job commits with the event (the transactional outbox).
 */
export const enqueueFanOut = (task: string, eventId: string) =>
  Prisma.sql`select graphile_worker.add_job(${task}, json_build_object('eventId', ${eventId}::text), job_key := ${`fan_out:${eventId}`})`;

/**
 * Deletes up to $2 events recorded before $1, except events with an attempt still scheduled, and drops what their
 * deliveries' attempts kept of the bodies (request body and headers, response excerpt). The delivery rows and
 * the attempts' summaries stay (status, attempts, eventId, eventType): WebhookDelivery.eventId has no foreign key.
 * Plain SQL for the batch bound: Prisma's deleteMany takes no LIMIT, and one unbounded DELETE of a month of
 * events would hold its locks and its WAL in one transaction.
 */
export const DELETE_EXPIRED_EVENTS = `with expired as (
  select e.id from "Event" e
  where e."createdAt" < $1
    and not exists (select 1 from "WebhookDelivery" d where d."eventId" = e.id and d."nextAttemptAt" is not null)
  limit $2
), bodies as (
  update "WebhookAttempt" a set "requestBody" = '', "requestHeaders" = '{}'::jsonb, "responseExcerpt" = null
  from "WebhookDelivery" d
  where d.id = a."deliveryId" and d."eventId" in (select id from expired)
)
delete from "Event" where id in (select id from expired)`;
