import type { Db, OrderStatus, OrderType, Tx } from "../../platform/db/prisma.js";
import { unprocessable } from "../../platform/errors.js";
import { isUuid } from "../../platform/uuid.js";
import { isRecord } from "../../platform/json.js";
import { fullPath, ORDER_STATUSES } from "../orders/lifecycle.js";
import { changeOrderStatus } from "../orders/service.js";
import { enqueueSimulationStep, lockOrder, type LockedOrder } from "./sql.js";

/**
 * Simulated sandbox orders: the order moves along its full path on its own, one status per step, through the same
 * status change a partner's PATCH makes (its events, version and webhooks), as a store's kitchen and courier would.
 * Each step is a graphile-worker job scheduled in the transaction of the change before it (the first one in the
 * order's own), so a step is never lost, and a worker that dies runs its due steps when it, or another, comes back.
 */

export const SIMULATE_TASK = "simulate_order";
/** The slowest pace a simulation may ask for, and the pace it gets when it names none. */
export const MAX_STEP_SECONDS = 600;
export const DEFAULT_STEP_SECONDS = 5;

/** What `simulate` asks for: the status to stop at and the seconds between steps. */
export interface Simulation {
  until: OrderStatus;
  stepSeconds: number;
}

/**
 * One step's job: the order, where it stops, its pace, and the version the order must still have for the step to
 * run. A step that finds another version does nothing and schedules nothing: the order was changed by someone
 * else (the partner moved or cancelled it, which ends the simulation), or this step already ran (a worker that
 * committed the move but died before completing the job).
 */
export interface SimulatePayload extends Simulation {
  storeId: string;
  orderId: string;
  version: number;
}

declare global {
  namespace GraphileWorker {
    interface Tasks {
      [SIMULATE_TASK]: SimulatePayload;
    }
  }
}

/** The statuses of its full path an order of `type` has ahead of `from`, in order: none from a final status. */
function ahead(type: OrderType, from: OrderStatus): OrderStatus[] {
  const path = fullPath(type);
  const at = path.indexOf(from);
  return at < 0 ? [] : path.slice(at + 1);
}

/** The statuses a simulation moves an order of `type` through from `from` to `until`, in order; none when `until` is not ahead. */
function stepsTo(type: OrderType, from: OrderStatus, until: OrderStatus): OrderStatus[] {
  const next = ahead(type, from);
  return next.slice(0, next.indexOf(until) + 1);
}

/** 422 unless an order of `type` starting at `from` reaches `until` by simulation. */
export function checkSimulation(type: OrderType, from: OrderStatus, simulation: Simulation): void {
  const allowed = ahead(type, from);
  if (allowed.includes(simulation.until)) return;
  const message =
    allowed.length === 0
      ? `\`simulate.until\`: this scenario's order is ${from}, which is final, so it cannot be simulated`
      : `\`simulate.until\` must be a status a ${type} order reaches after ${from}: ${allowed.join(", ")}`;
  throw unprocessable(`${message}.`, [{ field: "simulate.until", code: "UNREACHABLE_STATUS", message, allowed }]);
}

/** Schedules the order's next step `stepSeconds` from now, in the caller's transaction. */
export async function scheduleSimulationStep(tx: Tx, step: SimulatePayload): Promise<void> {
  await tx.$executeRaw(enqueueSimulationStep(SIMULATE_TASK, step, new Date(Date.now() + step.stepSeconds * 1000)));
}

/**
 * Runs one step: moves the order one status along its full path and schedules the next step, in one transaction,
 * holding the order's row so that no concurrent change slips between the version check and the move. Answers the
 * status it moved to, or null when it did nothing (see SimulatePayload).
 */
export async function runSimulationStep(db: Db, step: SimulatePayload): Promise<OrderStatus | null> {
  return db.$transaction(async (tx) => {
    const [order] = await tx.$queryRaw<LockedOrder[]>(lockOrder(step.storeId, step.orderId));
    if (order?.version !== step.version) return null;
    const [next] = stepsTo(order.type, order.status, step.until);
    if (!next) return null;
    await changeOrderStatus(tx, step.storeId, step.orderId, next, null);
    if (next !== step.until) await scheduleSimulationStep(tx, { ...step, version: step.version + 1 });
    return next;
  });
}

const isStatus = (value: unknown): value is OrderStatus => ORDER_STATUSES.some((s) => s === value);

export function assertSimulatePayload(payload: unknown): SimulatePayload {
  if (isRecord(payload)) {
    const { storeId, orderId, until, stepSeconds, version } = payload;
    if (
      typeof storeId === "string" &&
      isUuid(storeId) &&
      typeof orderId === "string" &&
      isUuid(orderId) &&
      isStatus(until) &&
      typeof stepSeconds === "number" &&
      Number.isInteger(stepSeconds) &&
      typeof version === "number" &&
      Number.isInteger(version)
    ) {
      return { storeId, orderId, until, stepSeconds, version };
    }
  }
  throw new Error(`${SIMULATE_TASK}: unrecognised payload ${JSON.stringify(payload)}`);
}
