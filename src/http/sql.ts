/**
 * The statements behind the metrics that are read from the database at scrape time (src/http/metrics.ts), so any
 * process reports the whole cluster's. Plain SQL because Prisma has no model for graphile-worker's tables and its
 * groupBy cannot count by several conditions in one pass (FILTER); metrics hold only the pool, so the delivery
 * count (which Prisma's groupBy could express) is plain SQL too.
 */

/** Webhook deliveries by status (status, n), for the webhook_deliveries gauge. No parameters. */
export const DELIVERIES_BY_STATUS = `SELECT status::text AS status, count(*)::int AS n FROM "WebhookDelivery" GROUP BY status`;

/**
 * graphile-worker jobs still to run (permanently failed ones excluded) by task and state (task, ready, scheduled,
 * running), for the job_queue_jobs gauge. No parameters.
 */
export const JOBS_BY_TASK_AND_STATE = `
SELECT task_identifier AS task,
  count(*) FILTER (WHERE locked_at IS NULL AND run_at <= now())::int AS ready,
  count(*) FILTER (WHERE locked_at IS NULL AND run_at > now())::int AS scheduled,
  count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running
FROM graphile_worker.jobs WHERE attempts < max_attempts GROUP BY task_identifier`;

/** How long the oldest due job has waited for a worker, in seconds (lag; 0 when none waits). No parameters. */
export const QUEUE_LAG = `
SELECT coalesce(extract(epoch FROM now() - min(run_at)), 0)::float8 AS lag
FROM graphile_worker.jobs WHERE locked_at IS NULL AND run_at <= now() AND attempts < max_attempts`;
