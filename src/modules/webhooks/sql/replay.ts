import { Prisma } from "../../../platform/db/prisma.js";
import { SQL_ORDER_QUEUE } from "../jobs.js";

/**
 * Marks deliveries PENDING for their replay, locking the rows in id order first, as recording attempts locks them
 * (an update reaches rows in table order, and a replay of many deliveries could deadlock with a batch recording
 * their attempts). Plain SQL for the ordered FOR NO KEY UPDATE, which Prisma's updateMany cannot express.
 */
export const markReplaysPending = (deliveryIds: readonly string[]) => Prisma.sql`
    update "WebhookDelivery" d set status = 'PENDING', "updatedAt" = now()
    from (select id from "WebhookDelivery" where id = any(${deliveryIds}::uuid[]) order by id for no key update) l
    where d.id = l.id`;

/**
 * Enqueues one `task` job (trigger REPLAY) per delivery, in the caller's transaction, keyed `jobKeyPrefix` + id so
 * the delivery's scheduled retries stay queued beside it; an ordered endpoint's in its queue, oldest first. Plain SQL: graphile_worker.add_job is a function, which
 * Prisma can only call in raw SQL.
 */
export const enqueueReplays = (task: string, jobKeyPrefix: string, deliveryIds: readonly string[]) => Prisma.sql`
    select graphile_worker.add_job(${task}, json_build_object('deliveryId', r.id, 'trigger', 'REPLAY'), job_key := ${jobKeyPrefix} || r.id, queue_name := r.queue)
    from (
      select d.id::text as id, ${Prisma.raw(SQL_ORDER_QUEUE("e"))} as queue
      from "WebhookDelivery" d join "WebhookEndpoint" e on e.id = d."endpointId"
      where d.id = any(${deliveryIds}::uuid[]) order by d."createdAt", d.id
    ) r`;
