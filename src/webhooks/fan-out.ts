import type pg from "pg";
import { EVENT_SCOPES } from "../events/types.js";
import type { DeliverPayload } from "./jobs.js";
import type { Claimed } from "./attempt.js";
import { ASYNC_COMMIT } from "../db/async-commit.js";
import { grantActiveSql } from "../auth/grant-rule.js";

export type FirstAttempt = Extract<DeliverPayload, { trigger: "SCHEDULED" }>;

// Fan-out: every ACTIVE or FAILED endpoint on the event's store that subscribed to its type, whose Application
// the grant rule (src/auth/grant-rule.ts) lets reach the store and holds the event's required scope, gets one
// delivery. ON CONFLICT makes a re-run create nothing twice. $1 is the events' ids, $2 the scope of each type,
// $3 whether to claim each new delivery's first attempt (stamping lastAttemptAt, as a claim does).
// ASYNC_COMMIT: the fan-out job's completion, committed after this, makes it durable.
const INSERT_DELIVERIES = `
  event as (
    select ev.id, ev."storeId", ev.type, ev.data, ev."createdAt", ($2::jsonb ->> ev.type) as scope, s.code as "tenantId", s.environment
    from "Event" ev join "Store" s on s.id = ev."storeId"
    where ev.id = any($1::uuid[])
  ), inserted as (
    insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "lastAttemptAt", "updatedAt")
    select gen_random_uuid(), event.id, e.id, e."applicationId", e."storeId", event.type, 'PENDING', now(),
      case when $3::boolean then now() end, now()
    from event
    cross join ${ASYNC_COMMIT}
    join "WebhookEndpoint" e on e."storeId" = event."storeId" and event.type = any(e.events) and e.status in ('ACTIVE', 'FAILED')
    join "Application" a on a.id = e."applicationId" and event.scope = any(a.scopes)
    join "Grant" g on g."applicationId" = e."applicationId" and g."storeId" = e."storeId"
      and ${grantActiveSql({ grantStatus: "g.status", applicationStatus: "a.status" })}
    on conflict ("eventId", "endpointId") do nothing
    returning id, "eventId", "endpointId", "nextAttemptAt", "lastAttemptAt"
  )`;

const scopes = JSON.stringify(EVENT_SCOPES);

/**
 * Creates an event's deliveries without attempting any, and returns the first scheduled attempt of every
 * delivery of the event that has none recorded yet: the new ones, and on a re-run (a retried or recovered
 * job) those a previous run created but never recorded an attempt for. One round trip.
 */
export async function fanOutEvent(pool: pg.Pool, eventId: string): Promise<FirstAttempt[]> {
  const { rows } = await pool.query<{ id: string; nextAttemptAt: Date }>(
    `with ${INSERT_DELIVERIES}
     select id, "nextAttemptAt" from inserted
     union all
     select id, "nextAttemptAt" from "WebhookDelivery"
     where "eventId" = $1[1] and attempts = 0 and status = 'PENDING' and "nextAttemptAt" is not null`,
    [[eventId], scopes, false],
  );
  return rows.map((r) => ({ deliveryId: r.id, trigger: "SCHEDULED", step: 1, dueAt: r.nextAttemptAt.toISOString() }));
}

export interface ClaimedFirstAttempt {
  request: FirstAttempt;
  claimed: Claimed;
}

/**
 * The worker's fast path for events fanned out for the first time: creates the deliveries of several events in
 * one statement, each already claimed for its first attempt (no separate claim, no job), and returns what to
 * send, per event in the order given. Prepared once per connection.
 */
export async function fanOutAndClaim(pool: pg.Pool, eventIds: readonly string[]): Promise<ClaimedFirstAttempt[][]> {
  const { rows } = await pool.query<Claimed & { deliveryId: string; nextAttemptAt: Date }>({
    name: "webhook_fan_out_and_claim",
    text: `with ${INSERT_DELIVERIES}
     select c.id as "deliveryId", c."eventId", c."endpointId", ev.type as "eventType", c."nextAttemptAt", c."lastAttemptAt" as "startedAt",
       e.url, e."secretCiphertext",
       case when e."previousSecretExpiresAt" > now() then e."previousSecretCiphertext" end as "previousSecretCiphertext",
       ev.data, ev."createdAt" as "eventCreatedAt", ev."tenantId", ev.environment, false as "chainExhausted"
     from inserted c
     join "WebhookEndpoint" e on e.id = c."endpointId"
     join event ev on ev.id = c."eventId"`,
    values: [eventIds, scopes, true],
  });
  const byEvent = new Map<string, ClaimedFirstAttempt[]>(eventIds.map((id) => [id, []]));
  for (const { deliveryId, ...claimed } of rows) {
    const request: FirstAttempt = { deliveryId, trigger: "SCHEDULED", step: 1, dueAt: claimed.nextAttemptAt.toISOString() };
    byEvent.get(claimed.eventId)?.push({ request, claimed });
  }
  return eventIds.map((id) => byEvent.get(id) ?? []);
}
