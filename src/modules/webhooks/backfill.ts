import { invalidRequest, notFound } from "../../platform/errors.js";
import type { Tx } from "../../platform/db/prisma.js";
import type { Config } from "../../platform/config.js";
import { EVENT_SCOPES } from "../events/types.js";
import { OPERATIONAL_EVENT_TYPES } from "../events/operational.js";
import { lastSequence } from "../events/feed.js";
import { inactiveEndpoint, ownerWhere, type Owner } from "./endpoints.js";
import { BACKFILL_JOB_KEY_PREFIX, DELIVER_TASK } from "./jobs.js";
import { roomToQueue } from "./recover.js";
import { backfillPage } from "./sql/backfill.js";

export interface BackfillResult {
  /** Events this call queued for a BACKFILL attempt to the endpoint. */
  count: number;
  /** More subscribed events follow: call again with `afterSequence` = `nextAfterSequence`. */
  hasMore: boolean;
  /** The sequence of the last event this call queued (the given `afterSequence` when it queued none). */
  nextAfterSequence: number;
}

const scopes = JSON.stringify(EVENT_SCOPES);

/**
 * Sends the endpoint the store's events after `afterSequence` that it subscribes to (delivered before or not, those
 * still within retention), in sequence order, as BACKFILL attempts: at most WEBHOOK_RECOVER_MAX per call, less what
 * the endpoint already has waiting to be sent (none left is 429, as for recover), at the endpoint's pace. The cursor is
 * the caller's: each call answers where the next one starts. An INACTIVE endpoint receives nothing: 422. A sequence
 * past the store's latest (another store's, or made up) is 400, as on the feed. Call in a transaction.
 */
export async function requestBackfill(
  tx: Tx,
  config: Pick<Config, "WEBHOOK_RECOVER_MAX">,
  owner: Owner,
  endpointId: string,
  afterSequence: number,
): Promise<BackfillResult> {
  const checkAfter = async (storeId: string) => {
    const latest = await lastSequence(tx, storeId);
    if (BigInt(afterSequence) > latest) {
      throw invalidRequest(`afterSequence is ${afterSequence}, past this store's latest event (sequence ${latest}).`, [
        { field: "afterSequence", code: "OUT_OF_RANGE", message: `\`afterSequence\` is past this store's latest event (sequence ${latest})` },
      ]);
    }
  };
  // A partner's store is known before its endpoint is: bad input is 400 whether or not the endpoint exists.
  if (owner) await checkAfter(owner.storeId);
  const endpoint = await tx.webhookEndpoint.findFirst({
    where: { id: endpointId, ...ownerWhere(owner) },
    select: { id: true, storeId: true, status: true, disabledByAdmin: true, rateLimit: true },
  });
  if (!endpoint) throw notFound("webhook endpoint", endpointId);
  if (!owner) await checkAfter(endpoint.storeId);
  if (endpoint.status === "INACTIVE") throw inactiveEndpoint(endpoint);
  const limit = await roomToQueue(tx, config.WEBHOOK_RECOVER_MAX, endpoint, "backfill");
  const [page] = await tx.$queryRaw<{ count: number; lastSequence: string | null; hasMore: boolean }[]>(
    backfillPage({
      endpointId,
      afterSequence: BigInt(afterSequence),
      limit,
      scopes,
      operational: OPERATIONAL_EVENT_TYPES,
      task: DELIVER_TASK,
      jobKeyPrefix: BACKFILL_JOB_KEY_PREFIX,
    }),
  );
  return { count: page.count, hasMore: page.hasMore, nextAfterSequence: page.lastSequence === null ? afterSequence : Number(page.lastSequence) };
}
