import { Prisma } from "../../platform/db/prisma.js";

/**
 * The export's job, retried up to `maxAttempts` times, due at `runAt` (default now). Plain SQL because
 * graphile_worker.add_job is a function, which Prisma can only call in raw SQL, and it must run in the caller's
 * transaction so the export and its job commit together.
 */
export const enqueueExport = (task: string, exportId: string, maxAttempts: number, runAt = new Date()) =>
  Prisma.sql`select graphile_worker.add_job(${task}, json_build_object('exportId', ${exportId}::text),
    run_at := ${runAt.toISOString()}::timestamptz, max_attempts := ${maxAttempts}::int)`;

/**
 * Serializes the claims of one store's exports until the transaction ends. A graphile-worker named queue cannot: the
 * worker fetches jobs in batches (workers/tuning.ts), and a batch may take two jobs of one queue.
 */
export const lockStoreExports = (storeId: string) => Prisma.sql`select pg_advisory_xact_lock(hashtext(${`export:${storeId}`}))::text`;

/**
 * The store's last event sequence as the snapshot sees it. Events of a store commit in sequence order (drawing a
 * number locks its StoreEventSequence row until commit), so the snapshot holds every event up to it and none after.
 */
export const snapshotSequence = (storeId: string) =>
  Prisma.sql`select coalesce((select "last" from "StoreEventSequence" where "storeId" = ${storeId}::uuid), 0)::text as "last"`;

/**
 * Locks an export that is still to be written (queued or running) until the transaction ends; no row when it is done
 * or another transaction holds it (SKIP LOCKED: an attempt never waits for another attempt of the same export).
 */
export const holdExport = (exportId: string) =>
  Prisma.sql`select id from "Export" where id = ${exportId}::uuid and status in ('queued', 'running') for update skip locked`;
