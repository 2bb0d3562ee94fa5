import { ASYNC_COMMIT } from "./async-commit.js";

/**
 * The statements that route reads between the primary and its streaming replicas (replicas.ts). Plain SQL because
 * they read WAL positions, which Prisma cannot. Positions travel as text of a number of bytes (pg_lsn - '0/0'), so
 * they compare as bigints in JavaScript.
 */

/**
 * How far the primary has inserted WAL (lsn). No parameters. Taken after a write committed, it is at or past that
 * write's commit record, so a replica that has replayed up to it sees the write.
 */
export const PRIMARY_WAL_POSITION = `select (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint::text as lsn`;

/** How far a replica has replayed (lsn; null on a server that is not in recovery: a primary, or a promoted replica). No parameters. */
export const REPLAY_POSITION = `select (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint::text as lsn`;

/**
 * Records a writer's latest write at the primary's WAL position now, which is past the write's commit (it committed
 * before this runs); a concurrent mark of the same writer never moves it back. It commits without waiting for its WAL
 * flush: a mark lost in a crash matters to no one, and it is visible to every process at once all the same.
 * $1 the writer.
 */
export const MARK_WRITE = `insert into "WriteMark" (writer, lsn)
  select $1, (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint from ${ASYNC_COMMIT}
  on conflict (writer) do update set lsn = greatest("WriteMark".lsn, excluded.lsn)`;

/** The WAL positions of the writers' latest writes (writer, lsn), of those that have one. $1 the writers. */
export const WRITE_MARKS = `select writer, lsn::text as lsn from "WriteMark" where writer = any($1::text[])`;
