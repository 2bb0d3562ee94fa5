import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { assertRunExportPayload, runExport } from "../../src/modules/exports/run.js";

/**
 * `run_export` {exportId}: writes a bulk export's file, or, while another export of its store runs, queues itself
 * again shortly; a thrown error means "retry" until the job's last attempt, which fails the export instead.
 */
export function runExportTask(services: Services): Task {
  return async (payload, helpers) => {
    const { exportId } = assertRunExportPayload(payload);
    await runExport(services, exportId, { last: helpers.job.attempts >= helpers.job.max_attempts });
  };
}
