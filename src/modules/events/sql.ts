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
