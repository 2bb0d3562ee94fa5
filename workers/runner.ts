import pg from "pg";
import { run, Logger as WorkerLogger, type Runner } from "graphile-worker";
import type { Services } from "../src/services.js";
import type { Metrics } from "../src/http/metrics.js";
import { CRONTAB, taskList } from "./task-list.js";

/** Starts graphile-worker in this process; signals are handled by our own shutdown. */
export async function startWorker(services: Services, databaseUrl: string, metrics?: Metrics): Promise<Runner> {
  const log = services.log.child({ component: "worker" });
  const pgPool = new pg.Pool({ connectionString: databaseUrl, max: services.config.WORKER_CONCURRENCY + 2 });
  pgPool.on("error", (err) => log.warn({ err }, "idle worker database connection lost"));
  pgPool.on("connect", (client) => client.on("error", (err) => log.warn({ err }, "worker database connection error")));
  const runner = await run({
    pgPool,
    concurrency: services.config.WORKER_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: taskList(services),
    crontab: CRONTAB,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === "error" ? log.error : level === "warning" ? log.warn : log.debug;
      fn.call(log, { ...scope, ...meta }, message);
    }),
  });
  runner.promise.finally(() => pgPool.end()).catch(() => undefined);
  metrics?.watchWorker(runner);
  return runner;
}
