import { run, type Runner } from "graphile-worker";
import type { Services } from "../src/platform/services.js";
import { CRONTAB, taskList } from "./task-list.js";
import { startCrashRecovery } from "./crash-recovery.js";
import { createWorkerPool, workerLogger, workerTuning } from "./tuning.js";
import { startQueueVacuum } from "./queue-vacuum.js";
import { registerWorkerMetrics } from "./metrics.js";

/** Starts graphile-worker in this process; signals are handled by our own shutdown. */
export async function startWorker(services: Services, databaseUrl: string): Promise<Runner> {
  const log = services.log.child({ component: "worker" });
  const { WORKER_CONCURRENCY, DB_CONNECTION_TIMEOUT_MS } = services.config;
  const pgPool = createWorkerPool(databaseUrl, WORKER_CONCURRENCY, log, DB_CONNECTION_TIMEOUT_MS);
  const recovery = await startCrashRecovery(services, databaseUrl);
  const runner = await run({
    pgPool,
    ...workerTuning(WORKER_CONCURRENCY),
    noHandleSignals: true,
    taskList: taskList(services),
    crontab: CRONTAB,
    logger: workerLogger(log),
    events: recovery.events,
  }).catch(async (err: unknown) => {
    await recovery.stop();
    await pgPool.end();
    throw err;
  });
  registerWorkerMetrics(services.metrics, runner);
  const vacuum = startQueueVacuum(runner, pgPool, log);
  void runner.promise
    .finally(() => {
      vacuum.stop();
      return Promise.all([recovery.stop(), pgPool.end()]);
    })
    .catch(() => undefined);
  return runner;
}
