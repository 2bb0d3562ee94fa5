import type { Task } from "graphile-worker";
import type { Services } from "../../src/platform/services.js";
import { assertSimulatePayload, runSimulationStep } from "../../src/modules/sandbox/simulate.js";

/**
 * `simulate_order` {storeId, orderId, until, stepSeconds, version}: one step of a simulated sandbox order, which
 * schedules the next. Safe to re-run: a step whose order no longer has the version it carries does nothing.
 */
export function simulateOrder(services: Services): Task {
  return async (payload) => {
    const step = assertSimulatePayload(payload);
    const moved = await runSimulationStep(services.db, step);
    services.log.debug({ orderId: step.orderId, moved }, "simulated order step");
  };
}
