import { ASYNC_COMMIT } from "../../../platform/db/async-commit.js";
import { grantActiveSql } from "../../../platform/auth/grant-rule.js";

/**
 * Fan-out: every ACTIVE or FAILED endpoint on the event's store that subscribed to its type (or to "*": every type but
 * webhook.test), whose Application the grant rule (src/platform/auth/grant-rule.ts) lets reach the store and holds the
 * event's required scope, gets one delivery. An operational event (webhook.endpoint.*, webhook.delivery.*: $4) is
 * about one endpoint (`data.endpointId`): only its Application's other endpoints get it, and none once it is deleted.
 * ON CONFLICT makes a re-run create nothing twice. $1 is the events' ids, $2 the scope of each type (a JSON object),
 * $3 whether to claim each new delivery's first attempt (stamping lastAttemptAt, as a claim does), $4 the
 * operational types.
 * ASYNC_COMMIT: the fan-out job's completion, committed after this, makes it durable.
 *
 * Plain SQL because it is one INSERT ... SELECT over a five-table join with ON CONFLICT DO NOTHING: Prisma cannot
 * insert from a query, so it would read the endpoints and insert in a second statement, two round trips with room
 * for a concurrent change between them.
 */
const INSERT_DELIVERIES = `
  event as (
    select ev.id, ev."storeId", ev.type, ev.data, ev."createdAt", ev.sequence, ($2::jsonb ->> ev.type) as scope, s.code as "tenantId", s.environment,
      o."applicationId" as "aboutApplicationId", o.id as "aboutEndpointId", ev.type = any($4::text[]) as operational
    from "Event" ev join "Store" s on s.id = ev."storeId"
    left join "WebhookEndpoint" o on ev.type = any($4::text[]) and o.id = (ev.data ->> 'endpointId')::uuid
    where ev.id = any($1::uuid[])
  ), inserted as (
    insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "lastAttemptAt", "updatedAt")
    select gen_random_uuid(), event.id, e.id, e."applicationId", e."storeId", event.type, 'PENDING', now(),
      case when $3::boolean then now() end, now()
    from event
    cross join ${ASYNC_COMMIT}
    join "WebhookEndpoint" e on e."storeId" = event."storeId" and e.status in ('ACTIVE', 'FAILED')
      and (event.type = any(e.events) or (e.events = '{*}' and event.type <> 'webhook.test'))
      and (not event.operational or (e."applicationId" = event."aboutApplicationId" and e.id <> event."aboutEndpointId"))
    join "Application" a on a.id = e."applicationId" and event.scope = any(a.scopes)
    join "Grant" g on g."applicationId" = e."applicationId" and g."storeId" = e."storeId"
      and ${grantActiveSql({ grantStatus: "g.status", applicationStatus: "a.status" })}
    on conflict ("eventId", "endpointId") do nothing
    returning id, "eventId", "endpointId", "nextAttemptAt", "lastAttemptAt"
  )`;

/**
 * Creates an event's deliveries without attempting any, and returns the first scheduled attempt (id, nextAttemptAt)
 * of every delivery of the event that has none recorded yet: the new ones, and on a re-run those a previous run
 * created but never recorded an attempt for. $1 the event's id as a one-element array, $2 the scopes, $3 false, $4 the
 * operational types.
 */
export const FAN_OUT_EVENT = `with ${INSERT_DELIVERIES}
     select id, "nextAttemptAt" from inserted
     union all
     select id, "nextAttemptAt" from "WebhookDelivery"
     where "eventId" = $1[1] and attempts = 0 and status = 'PENDING' and "nextAttemptAt" is not null`;

/**
 * Creates the deliveries of several events in one statement, each already claimed for its first attempt, and
 * returns what to send (a claim's columns, as `Claimed` in attempt.ts, plus deliveryId and eventId). Prepared once
 * per connection. $1 the events' ids, $2 the scopes, $3 true, $4 the operational types.
 */
export const WEBHOOK_FAN_OUT_AND_CLAIM = {
  name: "webhook_fan_out_and_claim",
  text: `with ${INSERT_DELIVERIES}
     select c.id as "deliveryId", c."eventId", c."endpointId", e."storeId", e."applicationId", ev.type as "eventType", c."nextAttemptAt", c."lastAttemptAt" as "startedAt",
       e.url, e."secretCiphertext", e.status as "endpointStatus", e."failingSince",
       case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
       ev.data, ev."createdAt" as "eventCreatedAt", ev.sequence::float8 as "eventSequence", ev."tenantId", ev.environment, false as "chainExhausted"
     from inserted c
     join "WebhookEndpoint" e on e.id = c."endpointId"
     join event ev on ev.id = c."eventId"`,
} as const;
