import type { RunnerOptions } from "graphile-worker";

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
export const workerPoolSize = (concurrency: number): number => Math.min(concurrency, 32) + 2;

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
