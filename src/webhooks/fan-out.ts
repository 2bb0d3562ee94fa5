import type pg from "pg";
import { EVENT_SCOPES } from "../events/types.js";
import { DELIVER_TASK, SCHEDULED_JOB_KEY_PREFIX } from "./jobs.js";

/**
 * Turns one event into one delivery per subscribed endpoint (DECISIONS §8 fan-out): every ACTIVE or FAILED
 * endpoint on the event's store that subscribed to its type, whose Application is enabled, holds an active
 * Grant on the store and holds the event's required scope. Each new delivery gets its first scheduled job
 * in the same statement. ON CONFLICT makes a re-run (a retried or recovered job) insert and enqueue nothing.
 * One round trip; returns how many deliveries were created.
 */
export async function fanOutEvent(pool: pg.Pool, eventId: string): Promise<number> {
  const { rowCount } = await pool.query(
    `with event as (
       select id, "storeId", type, ($2::jsonb ->> type) as scope from "Event" where id = $1
     ), inserted as (
       insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "updatedAt")
       select gen_random_uuid(), event.id, e.id, e."applicationId", e."storeId", event.type, 'PENDING', now(), now()
       from event
       join "WebhookEndpoint" e on e."storeId" = event."storeId" and event.type = any(e.events) and e.status in ('ACTIVE', 'FAILED')
       join "Application" a on a.id = e."applicationId" and a.status = 'ACTIVE' and event.scope = any(a.scopes)
       join "Grant" g on g."applicationId" = e."applicationId" and g."storeId" = e."storeId" and g.status = 'ACTIVE'
       on conflict ("eventId", "endpointId") do nothing
       returning id, "nextAttemptAt"
     )
     select graphile_worker.add_job(
       $3,
       json_build_object('deliveryId', id, 'trigger', 'SCHEDULED', 'step', 1, 'dueAt', "nextAttemptAt"),
       run_at := "nextAttemptAt",
       job_key := $4 || id
     ) from inserted`,
    [eventId, JSON.stringify(EVENT_SCOPES), DELIVER_TASK, SCHEDULED_JOB_KEY_PREFIX],
  );
  return rowCount ?? 0;
}
