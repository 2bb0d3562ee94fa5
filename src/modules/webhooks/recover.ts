import { invalidRequest, notFound } from "../../platform/errors.js";
import type { Tx } from "../../platform/db/prisma.js";
import type { Services } from "../../platform/services.js";
import { inactiveEndpoint, ownerWhere, type Owner } from "./endpoints.js";
import { DELIVER_TASK, RECOVER_JOB_KEY_PREFIX, RECOVER_STATUSES, RECOVER_TASK, type RecoverPayload } from "./jobs.js";
import { enqueueRecovery, RECOVER_BATCH } from "./sql/recover.js";

/** Deliveries one recover job marks and enqueues before handing the rest of the window to the next job. */
export const RECOVER_BATCH_SIZE = 500;

/**
 * Records a recover request: counts the endpoint's FAILED and DEAD_LETTER deliveries created in [since, until) with
 * one indexed count, and enqueues one job that walks the window in batches (recoverBatch), so the request's work is
 * bounded however many there are. An INACTIVE endpoint receives nothing: 422.
 */
export async function requestRecovery(tx: Tx, owner: Owner, endpointId: string, window: { since: Date; until?: Date | null }): Promise<{ count: number }> {
  const until = window.until ?? new Date();
  if (window.since.getTime() >= until.getTime()) {
    throw invalidRequest("since must be before until (or before now when until is omitted).", [
      { field: "since", code: "OUT_OF_RANGE", message: "must be before until" },
    ]);
  }
  const endpoint = await tx.webhookEndpoint.findFirst({
    where: { id: endpointId, ...ownerWhere(owner) },
    select: { id: true, status: true, disabledByAdmin: true },
  });
  if (!endpoint) throw notFound("webhook endpoint", endpointId);
  if (endpoint.status === "INACTIVE") throw inactiveEndpoint(endpoint);
  const count = await tx.webhookDelivery.count({
    where: { endpointId, status: { in: [...RECOVER_STATUSES] }, createdAt: { gte: window.since, lt: until } },
  });
  if (count > 0) {
    const payload: RecoverPayload = { endpointId, since: window.since.toISOString(), until: until.toISOString(), status: RECOVER_STATUSES[0], after: null };
    await tx.$executeRaw(enqueueRecovery(RECOVER_TASK, payload));
  }
  return { count };
}

/** One batch of a recovery; the payload of the next job, or null when the window is done. */
export async function recoverBatch(services: Services, payload: RecoverPayload): Promise<RecoverPayload | null> {
  const { rows } = await services.pool.query<{ size: number; queued: number; createdAt: Date | null; id: string | null }>(RECOVER_BATCH, [
    payload.endpointId,
    payload.status,
    payload.since,
    payload.until,
    payload.after?.createdAt ?? null,
    payload.after?.id ?? null,
    RECOVER_BATCH_SIZE,
    DELIVER_TASK,
    RECOVER_JOB_KEY_PREFIX,
  ]);
  const [batch] = rows;
  services.log.debug({ endpointId: payload.endpointId, status: payload.status, queued: batch.queued }, "webhook recovery batch");
  if (batch.size === RECOVER_BATCH_SIZE && batch.createdAt && batch.id) {
    return { ...payload, after: { createdAt: batch.createdAt.toISOString(), id: batch.id } };
  }
  const next = RECOVER_STATUSES[RECOVER_STATUSES.indexOf(payload.status) + 1];
  return next ? { ...payload, status: next, after: null } : null;
}
