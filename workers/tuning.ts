import pg from "pg";
import { Logger as WorkerLogger, type RunnerOptions } from "graphile-worker";
import { guardPool } from "../src/platform/db/pool.js";
import type { Logger } from "../src/platform/log.js";

/**
 * How our graphile-worker pools fetch and complete jobs, shared with the bench's queue baseline so that the
 * baseline measures the queue the service actually runs. Without batching every job costs its own get_job and
 * complete_job commit, which capped a worker at a few hundred jobs per second here; with it, one statement locks a
 * batch of jobs into a local queue and completions made in the same tick commit together. A crash can then re-run a
 * job whose completion had not committed yet: every task of ours is safe to re-run.
 */
/**
 * graphile-worker's own connections: its local queue fetches with one and completes in batches with another, and a
 * task only borrows one to add a job, so a connection per running job would sit idle (and could exceed
 * max_connections at a high WORKER_CONCURRENCY). Jobs mostly wait on their POSTs and shared statements.
 */
const workerPoolSize = (concurrency: number): number => Math.min(concurrency, 32) + 2;

/**
 * The pool graphile-worker runs on, sized by workerPoolSize and guarded like every pool of ours: a lost
 * connection is logged and replaced (graphile-worker warns on stderr about a pool without error handlers).
 */
export function createWorkerPool(connectionString: string, concurrency: number, log: Logger, connectionTimeoutMs?: number): pg.Pool {
  return guardPool(new pg.Pool({ connectionString, max: workerPoolSize(concurrency), connectionTimeoutMillis: connectionTimeoutMs }), log);
}

/**
 * How often an idle worker looks for jobs whose run_at has come (a new job wakes it at once by NOTIFY, a job added
 * for later does not). Deliveries put off to a slot of their endpoint's pace must start within that slot's second.
 */
const POLL_INTERVAL_MS = 250;

export function workerTuning(concurrency: number): Pick<RunnerOptions, "concurrency" | "pollInterval" | "preset"> {
  return {
    concurrency,
    pollInterval: POLL_INTERVAL_MS,
    preset: {
      worker: {
        localQueue: { size: concurrency * 2 },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
  };
}

/** A job as log lines name it: the whole job would carry its payload. */
function jobFields(job: unknown): unknown {
  if (typeof job !== "object" || job === null) return job;
  return {
    id: "id" in job ? job.id : undefined,
    task: "task_identifier" in job ? job.task_identifier : undefined,
    attempts: "attempts" in job ? job.attempts : undefined,
  };
}

/**
 * graphile-worker's log lines in ours. Its errors arrive as `error` (or `fatalError`) and become `err`, which the
 * log's serializer reduces to type, message and code.
 */
export function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta = {}) => {
    const { error, fatalError, job, ...rest } = meta;
    const fields = { ...scope, ...rest, ...(job === undefined ? {} : { job: jobFields(job) }) };
    const err = error ?? fatalError;
    const line = err === undefined ? fields : { ...fields, err };
    // The local queue lets a few connections serve many concurrent jobs (workerPoolSize): graphile-worker's warning
    // that the pool is smaller than the concurrency describes that choice, not a fault.
    if (level === "warning" && "max" in rest && "concurrency" in rest) return log.debug(line, message);
    if (level === "error") return log.error(line, message);
    if (level === "warning") return log.warn(line, message);
    return log.debug(line, message);
  });
}
