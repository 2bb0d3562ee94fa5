import type { Runner } from "graphile-worker";
import type { Pacer } from "./pace/pacer.js";
import type { Services } from "./services.js";

/**
 * What a worker reports to the process's metrics: its jobs' outcomes, its webhook attempts and its endpoints'
 * pace. The metrics registry (src/http/metrics.ts) implements it; the worker asks for no more, so it does not
 * depend on the HTTP adapter.
 */
export interface WorkerMetrics {
  watchWorker(runner: Runner): void;
  watchAttempts(services: Services): void;
  watchPace(pacer: Pacer): void;
}
