import { ASYNC_COMMIT } from "../../../platform/db/async-commit.js";
import { grantActiveSql } from "../../../platform/auth/grant-rule.js";

/**
 * Fan-out: every ACTIVE or FAILED endpoint on the event's store that subscribed to its type (or to "*": every type but
 * webhook.test), whose Application the grant rule (src/platform/auth/grant-rule.ts) lets reach the store and holds the
 * event's required scope, gets one delivery. An operational event (webhook.endpoint.*, webhook.delivery.*: $3) is
 * about one endpoint (`data.endpointId`): only its Application's other endpoints get it, and none once it is deleted;
 * one about an export (export.*, also $3: `data.exportId`) goes only to the endpoints of the export's Application.
 * ON CONFLICT makes a re-run create nothing twice. $1 is the events' ids, $2 the scope of each type (a JSON object),
 * $3 the operational types. ASYNC_COMMIT: the fan-out job's completion, committed after this, makes it durable.
 *
 * Plain SQL because it is one INSERT ... SELECT over a five-table join with ON CONFLICT DO NOTHING: Prisma cannot
 * insert from a query, so it would read the endpoints and insert in a second statement, two round trips with room
 * for a concurrent change between them.
 */
const TARGETS = `
  event as materialized (
    select ev.id, ev."storeId", ev.type, ev.data, ev."createdAt", ev.sequence, ($2::jsonb ->> ev.type) as scope, s.code as "tenantId", s.environment,
      coalesce(o."applicationId", x."applicationId") as "aboutApplicationId", o.id as "aboutEndpointId", ev.type = any($3::text[]) as operational
    from "Event" ev join "Store" s on s.id = ev."storeId"
    left join "WebhookEndpoint" o on ev.type = any($3::text[]) and o.id = (ev.data ->> 'endpointId')::uuid
    left join "Export" x on ev.type = any($3::text[]) and x.id = (ev.data ->> 'exportId')::uuid
    where ev.id = any($1::uuid[])
  ), target as (
    select event.id as "eventId", event.type as "eventType", e.id as "endpointId", e."applicationId", e."storeId", e.url, e."secretCiphertext",
      e.status as "endpointStatus", e."failingSince", e."rateLimit", case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
      e."apiVersion", event.data, event."createdAt" as "eventCreatedAt", event.sequence::float8 as "eventSequence", event."tenantId", event.environment,
      e.drill, e.type, e."destinationCiphertext", e.ordering
    from event
    join "WebhookEndpoint" e on e."storeId" = event."storeId" and e.status in ('ACTIVE', 'FAILED')
      and (event.type = any(e.events) or (e.events = '{*}' and event.type <> 'webhook.test'))
      and (not event.operational or (e."applicationId" = event."aboutApplicationId" and e.id is distinct from event."aboutEndpointId"))
    join "Application" a on a.id = e."applicationId" and event.scope = any(a.scopes)
    join "Grant" g on g."applicationId" = e."applicationId" and g."storeId" = e."storeId"
      and ${grantActiveSql({ grantStatus: "g.status", applicationStatus: "a.status" })}
  )`;

const INSERT_DELIVERIES = `${TARGETS}, inserted as (
    insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "updatedAt")
    select gen_random_uuid(), t."eventId", t."endpointId", t."applicationId", t."storeId", t."eventType", 'PENDING', now(), now()
    from target t cross join ${ASYNC_COMMIT}
    on conflict ("eventId", "endpointId") do nothing
    returning id, "nextAttemptAt"
  )`;

/**
 * Creates an event's deliveries without attempting any, and returns the first scheduled attempt (id, nextAttemptAt)
 * of every delivery of the event that has none recorded yet: the new ones, and on a re-run those a previous run
 * created but never recorded an attempt for. $1 the event's id as a one-element array, $2 the scopes, $3 the
 * operational types.
 */
export const FAN_OUT_EVENT = `with ${INSERT_DELIVERIES}
     select id, "nextAttemptAt" from inserted
     union all
     select id, "nextAttemptAt" from "WebhookDelivery"
     where "eventId" = $1[1] and attempts = 0 and status = 'PENDING' and "nextAttemptAt" is not null`;

/**
 * What the first attempts of several events' deliveries send, read without writing anything: every delivery the
 * fan-out would create (`Claimed` in delivery/prepare.ts plus deliveryId, eventId and endpointId), its id drawn here. The
 * worker POSTs these first and then creates each delivery already in its outcome's state (WEBHOOK_RECORD_FIRST in
 * ./record.ts): one write per delivery instead of an insert and an update. Prepared once per connection. $1 the
 * events' ids, $2 the scopes, $3 the operational types.
 */
export const WEBHOOK_FAN_OUT_TARGETS = {
  name: "webhook_fan_out_targets",
  text: `with ${TARGETS}
     select gen_random_uuid() as "deliveryId", t.*, now() as "nextAttemptAt", now() as "startedAt", false as "chainExhausted",
       null::timestamptz as "previousAttemptAt"
     from target t`,
} as const;

/**
 * Creates the deliveries whose first attempt the fan-out put off to a slot of their endpoint's pace, or that its fault
 * drill holds (`drill` set: due then, but no slot reserved, so the pace is taken when it runs): PENDING, no
 * attempt, nextAttemptAt the slot, and each a first scheduled job (step 1, due and slotted at the slot, key $4 || id)
 * run then. The batch's endpoints are locked FOR KEY SHARE first, so one deleted meanwhile drops its deliveries (as
 * WEBHOOK_RECORD_FIRST does); a delivery a re-run of the fan-out created first is left alone. Commits asynchronously
 * like the records: the fan-out job completes after it. $1 JSON array of { id, event_id, endpoint_id, application_id,
 * store_id, event_type, created_at, slot_at, drill, queue }, $2 the endpoints' ids, $3 the deliver task, $4 the scheduled job key prefix.
 * `queue`: an ordered endpoint's first attempts are not sent by the fan-out but queued, due now, in its queue (no slot).
 */
export const DEFER_FIRST = `
with input as (
  select * from jsonb_to_recordset($1::jsonb) as i(id uuid, event_id uuid, endpoint_id uuid, application_id uuid, store_id uuid, event_type text,
    created_at timestamptz, slot_at timestamptz, drill text, queue text)
), endpoint_share as (
  select e.id from "WebhookEndpoint" e where e.id = any($2::uuid[]) order by e.id for key share of e
), inserted as (
  insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "createdAt", "updatedAt")
  select i.id, i.event_id, i.endpoint_id, i.application_id, i.store_id, i.event_type, 'PENDING', i.slot_at, i.created_at, now()
  from input i join endpoint_share s on s.id = i.endpoint_id cross join ${ASYNC_COMMIT}
  on conflict ("eventId", "endpointId") do nothing
  returning id, "nextAttemptAt"
)
select (graphile_worker.add_job(
  $3::text,
  json_strip_nulls(json_build_object('deliveryId', d.id, 'trigger', 'SCHEDULED', 'step', 1, 'dueAt', d."nextAttemptAt",
    'slotAt', case when i.drill is null and i.queue is null then d."nextAttemptAt" end, 'drill', i.drill)),
  run_at := d."nextAttemptAt",
  job_key := $4::text || d.id,
  queue_name := i.queue
)).id from inserted d join input i on i.id = d.id order by i.created_at, d.id`;
