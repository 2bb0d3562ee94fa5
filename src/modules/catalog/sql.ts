import { Prisma } from "../../platform/db/prisma.js";

/**
 * Enqueues the store's catalog flush job (`task`) to run `windowMs` after the first change: its job key is per
 * store and keeps its first run_at (job_key_mode preserve_run_at), so later changes join the same window. Plain
 * SQL because graphile_worker.add_job is a function, which Prisma can only call in raw SQL, and it must run in the
 * caller's transaction so the job commits with the change.
 */
export const enqueueCatalogFlush = (
  task: string,
  storeId: string,
  windowMs: number,
) => Prisma.sql`select graphile_worker.add_job(${task}, json_build_object('storeId', ${storeId}::text),
    run_at := now() + ${windowMs} * interval '1 millisecond', job_key := ${`catalog:${storeId}`}, job_key_mode := 'preserve_run_at')`;
