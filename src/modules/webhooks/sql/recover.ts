import { Prisma, type WebhookDeliveryStatus } from "../../../platform/db/prisma.js";
import { SQL_ORDER_QUEUE } from "../jobs.js";

/**
 * A recover walk's statements (src/modules/webhooks/recover.ts). Plain SQL: a row-value cursor, row locks in id order
 * and graphile_worker.add_job are beyond Prisma's query API.
 */

/** Drops an endpoint's walks nobody continued in time, so a window asked for again starts from its beginning. */
export const dropStaleWalks = (endpointId: string) =>
  Prisma.sql`delete from "WebhookRecovery" where "endpointId" = ${endpointId}::uuid and "expiresAt" < now()`;

/**
 * Takes the walk of one window for this call: locks its row (a concurrent call with the same window waits, then reads
 * where this one left it) and keeps it alive until $expiresAt. The row exists (created just before, or left by an earlier call).
 */
export const takeWalk = (endpointId: string, window: string, expiresAt: Date) => Prisma.sql`
  update "WebhookRecovery" set "expiresAt" = ${expiresAt}
  where "endpointId" = ${endpointId}::uuid and "window" = ${window}
  returning id, since, until, status, "afterCreatedAt", "afterId"`;

export interface WalkStep {
  endpointId: string;
  status: WebhookDeliveryStatus;
  since: Date;
  until: Date;
  after: { createdAt: Date; id: string } | null;
  limit: number;
}

/**
 * The next deliveries of a walk: up to `limit` of the endpoint in `status` created in [since, until), after `after` in
 * (createdAt, id) order (one range of the (endpointId, status, createdAt, id) index), each with whether its event is
 * still kept (the retention sweep removes events past EVENT_RETENTION_DAYS; their deliveries stay).
 */
export const walkStep = (s: WalkStep) => Prisma.sql`
  select d.id, d."createdAt", exists (select 1 from "Event" ev where ev.id = d."eventId") as kept
  from "WebhookDelivery" d
  where d."endpointId" = ${s.endpointId}::uuid and d.status = ${s.status}::"WebhookDeliveryStatus"
    and d."createdAt" >= ${s.since} and d."createdAt" < ${s.until}
    and (${s.after?.createdAt ?? null}::timestamptz is null or (d."createdAt", d.id) > (${s.after?.createdAt ?? null}::timestamptz, ${s.after?.id ?? null}::uuid))
  order by d."createdAt", d.id
  limit ${s.limit}`;

/**
 * Marks the deliveries PENDING and gives each one `task` job (trigger RECOVER, key `jobKeyPrefix` || id, so its scheduled
 * retries stay queued beside it; an ordered endpoint's in its queue, oldest first), locking the rows in id order first, as recording attempts locks them. One that left
 * FAILED and DEAD_LETTER meanwhile (a replay, a success) is left alone. Answers how many were queued.
 */
export const queueRecovered = (task: string, jobKeyPrefix: string, deliveryIds: readonly string[]) => Prisma.sql`
  with locked as (
    select id from "WebhookDelivery" where id = any(${deliveryIds}::uuid[]) order by id for no key update
  ), marked as (
    update "WebhookDelivery" d set status = 'PENDING', "updatedAt" = now()
    from locked l where d.id = l.id and d.status in ('FAILED', 'DEAD_LETTER')
    returning d.id, d."endpointId", d."createdAt"
  )
  select count(*)::int as queued
  from (
    select graphile_worker.add_job(${task}, json_build_object('deliveryId', m.id, 'trigger', 'RECOVER'), job_key := ${jobKeyPrefix} || m.id, queue_name := m.queue)
    from (
      select m.id, ${Prisma.raw(SQL_ORDER_QUEUE("e"))} as queue from marked m join "WebhookEndpoint" e on e.id = m."endpointId" order by m."createdAt", m.id
    ) m
  ) jobs`;

/** How many of the endpoint's deliveries wait to be sent (PENDING), counted up to `atMost` (one index range). */
export const waitingDeliveries = (endpointId: string, atMost: number) => Prisma.sql`
  select count(*)::int as waiting
  from (select 1 from "WebhookDelivery" where "endpointId" = ${endpointId}::uuid and status = 'PENDING' limit ${atMost}) p`;
