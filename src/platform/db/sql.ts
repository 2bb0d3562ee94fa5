/**
 * The migrator's bookkeeping (src/platform/db/migrate.ts) and the readiness check that reads it. Plain SQL because the
 * migrator runs before (and beneath) Prisma: on a connection of its own, with an advisory lock, over a table
 * (_migrations) that is no Prisma model.
 */

/** Takes the migration lock for the session, waiting for another process's migration to end. $1 the lock id. */
export const LOCK_MIGRATIONS = "select pg_advisory_lock($1)";

/** Releases the migration lock. $1 the lock id. */
export const UNLOCK_MIGRATIONS = "select pg_advisory_unlock($1)";

/** The migrations applied so far, with the checksum of the file each was applied from (name, checksum). No parameters. */
export const APPLIED_MIGRATIONS = "select name, checksum from _migrations";

/** Records one applied migration, in the transaction that applied it. $1 its name, $2 its file's checksum. */
export const RECORD_MIGRATION = "insert into _migrations (name, checksum) values ($1, $2)";

/** The names of the migrations applied so far, for /readyz. No parameters. */
export const APPLIED_MIGRATION_NAMES = "select name from _migrations";
