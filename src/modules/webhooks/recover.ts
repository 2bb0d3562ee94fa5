import { ApiError, invalidRequest, notFound } from "../../platform/errors.js";
import type { Tx, WebhookDeliveryStatus } from "../../platform/db/prisma.js";
import type { Config } from "../../platform/config.js";
import { inactiveEndpoint, ownerWhere, type Owner } from "./endpoints.js";
import { DELIVER_TASK, RECOVER_JOB_KEY_PREFIX } from "./jobs.js";
import { RECOVER_WALK_TTL_MS } from "./policy.js";
import { dropStaleWalks, queueRecovered, takeWalk, waitingDeliveries, walkStep } from "./sql/recover.js";

/** The walk takes FAILED deliveries, then DEAD_LETTER ones, each in (createdAt, id) order: one index range each. */
const WALK_STATUSES: readonly WebhookDeliveryStatus[] = ["FAILED", "DEAD_LETTER"];

export interface RecoverResult {
  /** Deliveries this call queued for a RECOVER attempt. */
  count: number;
  /** The window holds more FAILED or DEAD_LETTER deliveries past this call's: call again with the same window. */
  hasMore: boolean;
  /** Deliveries this call passed over because their event is past retention (they can never be sent again). */
  expired: number;
}

type Cursor = { createdAt: Date; id: string } | null;

interface Walk {
  id: string;
  since: Date;
  until: Date;
  status: WebhookDeliveryStatus;
  afterCreatedAt: Date | null;
  afterId: string | null;
}

/**
 * Re-sends the endpoint's FAILED and DEAD_LETTER deliveries created in [since, until) (until: now by default), at most
 * WEBHOOK_RECOVER_MAX per call, as RECOVER attempts, and only while the endpoint has fewer than that many deliveries
 * waiting to be sent (else 429 with the seconds its pace needs for them). Calls with the same window (as given: since, and until or none)
 * walk it together: each continues after the last delivery the previous one examined, so calling again makes progress
 * even when the re-sent deliveries fail again (they are behind the cursor), and a walk that reached the window's end
 * starts over on the next call. Deliveries whose event is past retention are passed over and counted (`expired`); when
 * all that is left of the window is such deliveries, the call is 422 EVENT_EXPIRED and changes nothing. An INACTIVE
 * endpoint receives nothing: 422. Call in a transaction (the walk's row is locked for the call).
 */
export async function requestRecovery(
  tx: Tx,
  config: Pick<Config, "WEBHOOK_RECOVER_MAX" | "EVENT_RETENTION_DAYS">,
  owner: Owner,
  endpointId: string,
  given: { since: Date; until?: Date | null },
): Promise<RecoverResult> {
  const now = new Date();
  if (given.since.getTime() >= (given.until ?? now).getTime()) {
    throw invalidRequest("since must be before until (or before now when until is omitted).", [
      { field: "since", code: "OUT_OF_RANGE", message: "`since` must be before `until`" },
    ]);
  }
  const endpoint = await tx.webhookEndpoint.findFirst({
    where: { id: endpointId, ...ownerWhere(owner) },
    select: { id: true, status: true, disabledByAdmin: true, rateLimit: true },
  });
  if (!endpoint) throw notFound("webhook endpoint", endpointId);
  if (endpoint.status === "INACTIVE") throw inactiveEndpoint(endpoint);
  const max = await roomToQueue(tx, config.WEBHOOK_RECOVER_MAX, endpoint, "recover");

  const walk = await takeWalkOf(tx, endpointId, given, now);
  const step = (status: WebhookDeliveryStatus, after: Cursor, limit: number) =>
    tx.$queryRaw<{ id: string; createdAt: Date; kept: boolean }[]>(walkStep({ endpointId, status, since: walk.since, until: walk.until, after, limit }));

  const live: string[] = [];
  let expired = 0;
  let status = walk.status;
  let after: Cursor = walk.afterCreatedAt && walk.afterId ? { createdAt: walk.afterCreatedAt, id: walk.afterId } : null;
  for (;;) {
    const rows = await step(status, after, max - live.length - expired);
    for (const row of rows) {
      if (row.kept) live.push(row.id);
      else expired++;
      after = { createdAt: row.createdAt, id: row.id };
    }
    if (live.length + expired === max) break;
    const next = WALK_STATUSES[WALK_STATUSES.indexOf(status) + 1];
    if (!next) break;
    status = next;
    after = null;
  }
  const hasMore = live.length + expired === max && (await anyLeft(step, status, after));
  if (live.length === 0 && expired > 0 && !hasMore) {
    throw new ApiError(
      "EVENT_EXPIRED",
      `The ${expired} FAILED or DEAD_LETTER ${expired === 1 ? "delivery" : "deliveries"} left in this window ${expired === 1 ? "has its event" : "have their events"} past retention ` +
        `(${config.EVENT_RETENTION_DAYS} days): ${expired === 1 ? "it" : "they"} can no longer be sent. Recover a more recent window.`,
    );
  }
  const [{ queued }] = live.length > 0 ? await tx.$queryRaw<{ queued: number }[]>(queueRecovered(DELIVER_TASK, RECOVER_JOB_KEY_PREFIX, live)) : [{ queued: 0 }];
  if (hasMore) {
    await tx.webhookRecovery.update({ where: { id: walk.id }, data: { status, afterCreatedAt: after?.createdAt ?? null, afterId: after?.id ?? null } });
  } else {
    await tx.webhookRecovery.delete({ where: { id: walk.id } });
  }
  return { count: queued, hasMore, expired };
}

/**
 * How many deliveries one call (recover, backfill) may queue for the endpoint: what an endpoint has waiting to be sent
 * stays within one call's worth (`atMost`, WEBHOOK_RECOVER_MAX), so a partner calling faster than its endpoint's pace
 * sends them only queued work (and the database its churn); a call queues what room is left, and none left is 429 with
 * the seconds the endpoint's pace needs for what waits.
 */
export async function roomToQueue(tx: Tx, atMost: number, endpoint: { id: string; rateLimit: number }, call: string): Promise<number> {
  const [{ waiting }] = await tx.$queryRaw<{ waiting: number }[]>(waitingDeliveries(endpoint.id, atMost));
  if (waiting < atMost) return atMost - waiting;
  const seconds = Math.max(1, Math.ceil(waiting / endpoint.rateLimit));
  throw new ApiError(
    "RATE_LIMIT_EXCEEDED",
    `This endpoint already has ${waiting} deliveries waiting to be sent (at most ${atMost}); at its rateLimit of ${endpoint.rateLimit} a second they are sent in about ${seconds} s: ${call} again then.`,
    undefined,
    { "retry-after": String(seconds) },
  );
}

/** The walk of this window, new or where the last call left it, locked for this call. */
async function takeWalkOf(tx: Tx, endpointId: string, given: { since: Date; until?: Date | null }, now: Date): Promise<Walk> {
  const window = `${given.since.toISOString()}|${given.until?.toISOString() ?? ""}`;
  const expiresAt = new Date(now.getTime() + RECOVER_WALK_TTL_MS);
  await tx.$executeRaw(dropStaleWalks(endpointId));
  await tx.webhookRecovery.createMany({
    data: [{ endpointId, window, since: given.since, until: given.until ?? now, status: WALK_STATUSES[0], expiresAt }],
    skipDuplicates: true,
  });
  const [walk] = await tx.$queryRaw<Walk[]>(takeWalk(endpointId, window, expiresAt));
  return walk;
}

/** Whether the window holds another FAILED or DEAD_LETTER delivery after `after` in the walk's order. */
async function anyLeft(
  step: (status: WebhookDeliveryStatus, after: Cursor, limit: number) => Promise<unknown[]>,
  status: WebhookDeliveryStatus,
  after: Cursor,
): Promise<boolean> {
  if ((await step(status, after, 1)).length > 0) return true;
  const later = WALK_STATUSES.slice(WALK_STATUSES.indexOf(status) + 1);
  for (const next of later) if ((await step(next, null, 1)).length > 0) return true;
  return false;
}
