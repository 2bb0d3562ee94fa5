import { run, Logger as WorkerLogger, type Runner } from "graphile-worker";
import type { Services } from "../src/services.js";
import { CRONTAB, taskList } from "./task-list.js";
import { startCrashRecovery } from "./crash-recovery.js";

/** Starts graphile-worker in this process; signals are handled by our own shutdown. */
export async function startWorker(services: Services, databaseUrl: string): Promise<Runner> {
  const log = services.log.child({ component: "worker" });
  const recovery = await startCrashRecovery(services, databaseUrl);
  const runner = await run({
    connectionString: databaseUrl,
    concurrency: services.config.WORKER_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: taskList(services),
    crontab: CRONTAB,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === "error" ? log.error : level === "warning" ? log.warn : log.debug;
      fn.call(log, { ...scope, ...meta }, message);
    }),
    events: recovery.events,
  }).catch(async (err: unknown) => {
    await recovery.stop();
    throw err;
  });
  void runner.promise.finally(() => recovery.stop()).catch(() => undefined);
  return runner;
}
