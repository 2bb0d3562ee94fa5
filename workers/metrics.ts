import type { Runner } from "graphile-worker";
import { Counter } from "prom-client";
import type { MetricsRegistry } from "../src/platform/metrics.js";

const JOBS = "worker_jobs_total";

/** The worker's own series: the outcomes of the jobs it runs in this process (every runner of the process counts into one). */
export function registerWorkerMetrics(registry: MetricsRegistry, runner: Runner): void {
  const known = registry.getSingleMetric(JOBS);
  const jobs =
    known instanceof Counter
      ? known
      : new Counter({ name: JOBS, help: "Jobs run by this process's worker, by task and outcome.", labelNames: ["task", "outcome"], registers: [registry] });
  runner.events.on("job:success", ({ job }) => jobs.inc({ task: job.task_identifier, outcome: "success" }));
  runner.events.on("job:error", ({ job }) => jobs.inc({ task: job.task_identifier, outcome: "error" }));
}
