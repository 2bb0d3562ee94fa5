import { Prisma } from "../../../platform/db/prisma.js";

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
 * the delivery's scheduled retries stay queued beside it. Plain SQL: graphile_worker.add_job is a function, which
 * Prisma can only call in raw SQL.
 */
export const enqueueReplays = (task: string, jobKeyPrefix: string, deliveryIds: readonly string[]) => Prisma.sql`
    select graphile_worker.add_job(${task}, json_build_object('deliveryId', id, 'trigger', 'REPLAY'), job_key := ${jobKeyPrefix} || id)
    from unnest(${deliveryIds}::text[]) as id`;
