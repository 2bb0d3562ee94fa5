import pg from "pg";
import { run, Logger as WorkerLogger, type Runner } from "graphile-worker";
import type { Services } from "../src/platform/services.js";
import type { Metrics } from "../src/http/metrics.js";
import { CRONTAB, taskList } from "./task-list.js";
import { startCrashRecovery } from "./crash-recovery.js";
import { workerPoolSize, workerTuning } from "./tuning.js";
import { startQueueVacuum } from "./queue-vacuum.js";
import { guardPool } from "../src/platform/db/pool.js";

/** Starts graphile-worker in this process; signals are handled by our own shutdown. */
export async function startWorker(services: Services, databaseUrl: string, metrics?: Metrics): Promise<Runner> {
  const log = services.log.child({ component: "worker" });
  const pgPool = guardPool(
    new pg.Pool({
      connectionString: databaseUrl,
      max: workerPoolSize(services.config.WORKER_CONCURRENCY),
      connectionTimeoutMillis: services.config.DB_CONNECTION_TIMEOUT_MS,
    }),
    log,
  );
  const recovery = await startCrashRecovery(services, databaseUrl);
  const runner = await run({
    pgPool,
    ...workerTuning(services.config.WORKER_CONCURRENCY),
    noHandleSignals: true,
    taskList: taskList(services),
    crontab: CRONTAB,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === "error" ? log.error : level === "warning" ? log.warn : log.debug;
      fn.call(log, { ...scope, ...meta }, message);
    }),
    events: recovery.events,
  }).catch(async (err: unknown) => {
    await recovery.stop();
    await pgPool.end();
    throw err;
  });
  metrics?.watchWorker(runner);
  metrics?.watchAttempts(services);
  metrics?.watchPace(services.pacer);
  const vacuum = startQueueVacuum(runner, pgPool, log);
  void runner.promise
    .finally(() => {
      vacuum.stop();
      return Promise.all([recovery.stop(), pgPool.end()]);
    })
    .catch(() => undefined);
  return runner;
}
