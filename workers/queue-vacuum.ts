import type pg from "pg";
import type { Runner } from "graphile-worker";
import type { Logger } from "../src/platform/log.js";
import { VACUUM_JOBS } from "./sql.js";

/**
 * graphile-worker's jobs table churns: every job is inserted, locked (an update) and deleted, and each leaves a
 * dead row and dead index entries behind until a vacuum. Every batch fetch walks the index over them, so under
 * sustained load the database's CPU per job climbs for as long as no vacuum runs (measured: +50 % within a
 * minute at 1,600 jobs/s; docs/performance.md). Autovacuum looks at a database at most once per
 * autovacuum_naptime (a minute by default) and may be busy with larger tables; so, as que and River advise for
 * their queues, the worker vacuums the table itself once its own completions since the last vacuum reach
 * `jobsPerVacuum`. A vacuum takes no lock that blocks jobs being added, fetched or completed; SKIP_LOCKED lets
 * another worker's vacuum, already running, count for this one. Without ownership of the table PostgreSQL only
 * warns and skips it, and autovacuum is what remains.
 */

export interface QueueVacuumOptions {
  /** Completions in this process that call for a vacuum (5,000: at the bench's 1,600 jobs/s, one at every check). */
  jobsPerVacuum?: number;
  /** How often to look at the count. */
  checkIntervalMs?: number;
}

export interface QueueVacuum {
  stop(): void;
}

export function startQueueVacuum(
  runner: Runner,
  pool: pg.Pool,
  log: Logger,
  { jobsPerVacuum = 5000, checkIntervalMs = 5000 }: QueueVacuumOptions = {},
): QueueVacuum {
  let completed = 0;
  let running = false;
  runner.events.on("job:complete", () => void completed++);
  const check = (): void => {
    if (running || completed < jobsPerVacuum) return;
    running = true;
    const jobs = completed;
    completed = 0;
    const startedAt = performance.now();
    pool
      .query(VACUUM_JOBS)
      .then(() => log.debug({ jobs, ms: Math.round(performance.now() - startedAt) }, "jobs table vacuumed"))
      .catch((err: unknown) => log.warn({ err }, "could not vacuum the jobs table; autovacuum still will"))
      .finally(() => (running = false));
  };
  const timer = setInterval(check, checkIntervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
