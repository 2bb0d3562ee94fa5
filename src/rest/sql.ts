import { Prisma } from "../platform/db/prisma.js";

/**
 * Inserts an Idempotency-Key's record IN_PROGRESS unless there is one; a row comes back only if this statement
 * inserted it. A record another transaction is still inserting is invisible, so the insert waits on the unique
 * index until that transaction ends, then inserts (it rolled back) or does nothing (it committed). The wait is
 * bounded by lock_timeout (`waitMs`, at least 1 ms), set in the FROM item before the insert runs and put back by
 * RETURNING, so the operation's own statements wait on locks as they always did. The value put back is the one
 * the FROM item found, kept in a transaction-local setting (the inner set_config runs first, as an argument of
 * the outer): reading it from pg_settings instead built all its ~350 rows, 0.4 ms of database CPU per keyed write.
 * Plain SQL because the bound must hold for this one statement only (set_config in its FROM and RETURNING),
 * which no Prisma create can carry.
 */
export const claimIdempotencyKey = (
  k: { applicationId: string; storeId: string; key: string; fingerprint: string },
  expiresAt: Date,
  waitMs: number,
) => Prisma.sql`
    insert into "IdempotencyKey" (id, "applicationId", "storeId", key, fingerprint, "expiresAt")
    select gen_random_uuid(), ${k.applicationId}::uuid, ${k.storeId}::uuid, ${k.key}, ${k.fingerprint}, ${expiresAt}
    from (select set_config('lock_timeout', ${`${Math.max(1, Math.ceil(waitMs))}ms`}
                 || left(set_config('partner.lock_timeout_before', current_setting('lock_timeout'), true), 0), true)) as bounded_wait
    on conflict ("applicationId", "storeId", key) do nothing
    returning set_config('lock_timeout', current_setting('partner.lock_timeout_before'), true)`;

/**
 * Marks a key's record COMPLETED with its answer. Plain SQL because Prisma compiles every write afresh (its plan
 * cache serves reads only), and this statement runs on every keyed write with a different body each time.
 */
export const completeIdempotencyKey = (
  k: { applicationId: string; storeId: string; key: string },
  answer: { responseStatus: number; responseHeaders: Record<string, string>; responseBody: string },
) => Prisma.sql`
    update "IdempotencyKey"
    set state = 'COMPLETED', "responseStatus" = ${answer.responseStatus}::int, "responseHeaders" = ${JSON.stringify(answer.responseHeaders)}::jsonb,
        "responseBody" = ${answer.responseBody}::text
    where "applicationId" = ${k.applicationId}::uuid and "storeId" = ${k.storeId}::uuid and key = ${k.key}`;
