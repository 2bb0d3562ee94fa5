/**
 * The worker's own statements on graphile-worker's tables and on advisory locks (crash recovery, queue vacuum).
 * Plain SQL because Prisma has no model for graphile-worker's tables and cannot call functions, take advisory
 * locks or vacuum. Each is sent as text with its values.
 */

/** A new pool may lock its first jobs a moment before its liveness lock is granted; never judge it that early. */
const GRACE = "2 seconds";

/** The worker pools that hold jobs locked for longer than the grace period (lockedBy). No parameters. */
export const POOLS_HOLDING_JOBS = `select distinct locked_by as "lockedBy" from graphile_worker.jobs where locked_by is not null and locked_at < now() - interval '${GRACE}'`;

/**
 * Whether a pool's liveness lock is free: free means the pool is dead. $1 the lock class, $2 the pool id. The probe
 * takes the lock for its own transaction only, so it is gone when the statement ends: a session lock taken and
 * released by two statements could, behind PgBouncer in transaction mode, be taken on one server connection and
 * "released" on another, and stay held forever.
 */
export const TRY_LIVENESS_LOCK = "select pg_try_advisory_xact_lock($1, hashtext($2)) as free";

/** Hands the jobs of dead pools to whoever is alive (graphile-worker's own function). $1 the pool ids. */
export const FORCE_UNLOCK_WORKERS = "select graphile_worker.force_unlock_workers($1::text[])";

/** Takes a pool's liveness lock for the life of the session, waiting if needed. $1 the lock class, $2 the pool id. */
export const HOLD_LIVENESS_LOCK = "select pg_advisory_lock($1, hashtext($2))";

/** Vacuums graphile-worker's jobs table, skipping it if another vacuum holds it. No parameters. */
export const VACUUM_JOBS = "vacuum (skip_locked) graphile_worker._private_jobs";
