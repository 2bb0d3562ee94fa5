import { ApiError } from "../platform/errors.js";
import { migrationsApplied } from "../platform/db/migrate.js";
import type { Services } from "../platform/services.js";

const notReady = (detail: string) => new ApiError("SERVICE_UNAVAILABLE", detail, undefined, { "retry-after": "5" });

/**
 * GET /readyz of every role: the pool that serves requests and jobs gets a connection and every migration is
 * applied, the rate-limit counters are reachable, and, where this process runs the worker and says so, it runs.
 * Throws the 503 to answer otherwise.
 */
export async function assertReady(services: Services, workerRunning?: () => boolean): Promise<void> {
  const migrated = await migrationsApplied((sql) => services.pool.query(sql)).catch(() => false);
  if (!migrated) throw notReady("The database is unreachable or not migrated yet.");
  if (!(await services.rateLimiter.ready())) throw notReady("The rate-limit counters (Redis) are unreachable.");
  if (workerRunning && !workerRunning()) throw notReady("The worker has stopped.");
}
