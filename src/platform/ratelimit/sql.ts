import { ASYNC_COMMIT } from "../db/async-commit.js";

/**
 * Takes a slot of one or two subjects, in order. $1 the subjects' keys, $2 their limits, $3 the clock (null: the
 * database's), $4 each subject's step (1, or 0 for a probe). One row per subject (`Row` in postgres.ts).
 *
 * One round trip for up to two subjects (store, then Application). Each subject's current-minute row is
 * incremented only when the weighted estimate stays within its limit; the second subject is tried only when the
 * first admitted the request, so a request refused by its store never touches the Application's row. A subject's
 * `step` is 1, or 0 for a probe (refused at its limit like any subject, but counting nothing). The
 * `ON CONFLICT ... WHERE` runs on the locked, latest row version, which is what makes concurrent API processes
 * exact. The clock is the database's (`statement_timestamp()`), shared by every process; tests pass `$3`.
 * The statement commits asynchronously (ASYNC_COMMIT): a counter needs no WAL flush before the answer, and a
 * database crash can at worst forget the last fraction of a second of counts. It is prepared once per
 * connection: planning it cost more than running it (0.9 ms against 0.5 ms, pg_stat_statements).
 * Plain SQL because Prisma can express none of it in one statement: an upsert whose update is conditional on the
 * locked row (ON CONFLICT ... DO UPDATE ... WHERE), for two rows where the second depends on the first.
 */
export const RATE_LIMIT_TAKE = {
  name: "rate_limit_take",
  text: `
WITH clock AS MATERIALIZED (
  SELECT t, to_timestamp(floor(extract(epoch FROM t) / 60) * 60) AS cur
  FROM (SELECT coalesce($3::timestamptz, statement_timestamp()) AS t) x
  CROSS JOIN ${ASYNC_COMMIT}
),
s AS MATERIALIZED (
  SELECT u.ord, u.subject, u.lim, u.step, c.t, c.cur,
    coalesce((SELECT p.count FROM "RateLimitCounter" p
              WHERE p.subject = u.subject AND p."windowStart" = c.cur - interval '1 minute'), 0) AS prev,
    coalesce((SELECT q.count FROM "RateLimitCounter" q
              WHERE q.subject = u.subject AND q."windowStart" = c.cur), 0) AS seen
  FROM unnest($1::text[], $2::int[], $4::int[]) WITH ORDINALITY AS u(subject, lim, step, ord) CROSS JOIN clock c
),
w AS (
  SELECT s.*, s.prev * (1 - extract(epoch FROM s.t - s.cur) / 60) AS carried FROM s
),
first AS (
  INSERT INTO "RateLimitCounter" AS r (subject, "windowStart", count)
  SELECT subject, cur, step FROM w WHERE ord = 1 AND 1 + carried <= lim
  ON CONFLICT (subject, "windowStart") DO UPDATE SET count = r.count + (SELECT step FROM w WHERE ord = 1)
  WHERE r.count + 1 + (SELECT carried FROM w WHERE ord = 1) <= (SELECT lim FROM w WHERE ord = 1)
  RETURNING r.count
),
second AS (
  INSERT INTO "RateLimitCounter" AS r (subject, "windowStart", count)
  SELECT subject, cur, step FROM w WHERE ord = 2 AND 1 + carried <= lim AND EXISTS (SELECT 1 FROM first)
  ON CONFLICT (subject, "windowStart") DO UPDATE SET count = r.count + (SELECT step FROM w WHERE ord = 2)
  WHERE r.count + 1 + (SELECT carried FROM w WHERE ord = 2) <= (SELECT lim FROM w WHERE ord = 2)
  RETURNING r.count
)
SELECT s.ord::int AS ord, s.prev, s.seen,
  extract(epoch FROM s.t)::float8 AS now, extract(epoch FROM s.cur)::float8 AS window_start,
  CASE s.ord WHEN 1 THEN (SELECT count FROM first) ELSE (SELECT count FROM second) END AS counted
FROM s ORDER BY s.ord`,
} as const;

/**
 * Undoes the first subject's increment when the second refused (rare: the Application's limit is reached).
 * $1 the subject's key, $2 the window's start (Unix seconds, as the take returned it). Plain SQL like the take it
 * undoes (a decrement that stops at zero, on the raw pool).
 */
export const RATE_LIMIT_UNDO = `UPDATE "RateLimitCounter" SET count = count - 1
  WHERE subject = $1 AND "windowStart" = to_timestamp($2) AND count > 0`;

/**
 * Removes the minute buckets the sliding window no longer reads (only the current and the previous minute are).
 * No parameters. Plain SQL: the cutoff is the database's clock, which every process shares; Prisma's deleteMany
 * takes it from the process's own.
 */
export const DELETE_OLD_BUCKETS = `DELETE FROM "RateLimitCounter" WHERE "windowStart" < now() - interval '2 minutes'`;
