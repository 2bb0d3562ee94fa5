import { TEST_EVENT_TYPE } from "../events/types.js";
import type { TestEventData } from "../events/operational.js";
import { ApiError, invalidRequest, notFound } from "../../platform/errors.js";
import type { Prisma, Tx, WebhookDeliveryStatus } from "../../platform/db/prisma.js";
import type { Services } from "../../platform/services.js";
import type { WaitOutside } from "../../platform/outside.js";
import { runAttempt } from "./attempt.js";
import { inactiveEndpoint, ownerWhere, type Owner } from "./endpoints.js";
import { isUuid } from "../../platform/uuid.js";
import { paginate } from "../../platform/schema/pagination.js";
import { DELIVER_TASK, paceKey, REPLAY_JOB_KEY_PREFIX } from "./jobs.js";
import { enqueueReplays, markReplaysPending } from "./sql/replay.js";

const MAX_REPLAY_BATCH = 100;

/** What a delivery read loads beside its columns (GraphQL passes the selection it was asked for). */
export type DeliveryQuery = { include?: Prisma.WebhookDeliveryInclude; select?: Prisma.WebhookDeliverySelect };

export interface DeliveryFilter {
  /** The caller's rows: a partner's own (Application, Store), or what an administrator narrows to. */
  scope: { storeId?: string; applicationId?: string };
  status?: WebhookDeliveryStatus | null;
  endpointId?: string | null;
  eventType?: string | null;
}

/** One page of deliveries, newest first, for the GraphQL list (and so REST) and the admin CLI, whose input they checked. */
export function listDeliveries(db: Tx, filter: DeliveryFilter, page: { limit?: number | null; cursor?: string | null }, query: DeliveryQuery = {}) {
  const { scope } = filter;
  const where: Prisma.WebhookDeliveryWhereInput = {
    ...scope,
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.endpointId ? { endpointId: filter.endpointId } : {}),
    ...(filter.eventType ? { eventType: filter.eventType } : {}),
  };
  return paginate({
    limit: page.limit,
    cursor: page.cursor,
    sort: [
      { field: "createdAt", direction: "desc" },
      { field: "id", direction: "desc" },
    ],
    findCursor: (id) => db.webhookDelivery.findFirst({ where: { id, ...scope }, select: { id: true, createdAt: true } }),
    findMany: ({ after, orderBy, take }) =>
      db.webhookDelivery.findMany({ ...query, where: { AND: [where, (after ?? {}) as Prisma.WebhookDeliveryWhereInput] }, orderBy, take }),
  });
}

/** One delivery the owner may see, or NOT_FOUND. */
export async function findDelivery(db: Tx, owner: Owner, id: string, query: DeliveryQuery = {}) {
  const found = isUuid(id) ? await db.webhookDelivery.findFirst({ ...query, where: { id, ...ownerWhere(owner) } }) : null;
  if (!found) throw notFound("webhook delivery", id);
  return found;
}

/** A delivery's attempts, oldest first. */
export function deliveryAttempts(db: Tx, deliveryId: string) {
  return db.webhookAttempt.findMany({ where: { deliveryId }, orderBy: [{ number: "asc" }] });
}

const TEST_EVENT_MESSAGE = "This is a test event from PartnerWebhooks: your endpoint is reachable and can verify our signature.";

/**
 * Queues one extra attempt (trigger REPLAY) for each delivery, whatever its status, and marks them PENDING
 * until that attempt ends (all or none: an unknown delivery is 404, one of an INACTIVE endpoint 422, one whose event
 * is past retention 422 EVENT_EXPIRED; the retention sweep keeps the event of a PENDING delivery). The replay job has a key of its own, so the delivery's scheduled
 * retries stay queued; the same event (and eventId) is sent again. Call it in a transaction: it answers what
 * `readBack` reads in it, i.e. the deliveries as PENDING.
 */
export async function requestReplays<T>(tx: Tx, owner: Owner, ids: readonly string[], readBack: (ids: string[]) => Promise<T>): Promise<T> {
  const unique = [...new Set(ids)];
  if (unique.length === 0 || unique.length > MAX_REPLAY_BATCH) {
    throw invalidRequest(`Replay 1 to ${MAX_REPLAY_BATCH} deliveries at a time.`, [
      { field: "ids", code: "OUT_OF_RANGE", message: `\`ids\` must hold 1 to ${MAX_REPLAY_BATCH} ids` },
    ]);
  }
  const found = await tx.webhookDelivery.findMany({
    where: { id: { in: unique.filter(isUuid) }, ...ownerWhere(owner) },
    select: { id: true, eventId: true, endpoint: { select: { id: true, status: true, disabledByAdmin: true } } },
  });
  const missing = unique.find((id) => !found.some((d) => d.id === id));
  if (missing) throw notFound("webhook delivery", missing);
  const off = found.find((d) => d.endpoint.status === "INACTIVE");
  if (off) throw inactiveEndpoint(off.endpoint);
  const kept = await tx.event.findMany({ where: { id: { in: found.map((d) => d.eventId) } }, select: { id: true } });
  const expired = found.find((d) => !kept.some((e) => e.id === d.eventId));
  if (expired) {
    throw new ApiError(
      "EVENT_EXPIRED",
      `The event of webhook delivery ${expired.id} is past retention and was removed: the delivery can no longer be sent. Read what was sent in its attempts.`,
      [{ field: "deliveryId", code: "EVENT_EXPIRED", message: "the delivery's event is past retention" }],
    );
  }

  await tx.$executeRaw(markReplaysPending(unique));
  await tx.$executeRaw(enqueueReplays(DELIVER_TASK, REPLAY_JOB_KEY_PREFIX, unique));
  // Read before commit: once the jobs are visible a worker may finish an attempt before the caller looks.
  return readBack(unique);
}

/**
 * Sends a synthetic `webhook.test` event to one endpoint now and returns its delivery id once the attempt
 * has ended (bounded by WEBHOOK_TIMEOUT_MS). A test gets no scheduled retries; it can be replayed. It counts as one of
 * the endpoint's Application's calls out (WEBHOOK_TEST_CONCURRENCY: 429 past it, before anything is written), and
 * the wait for the receiver runs through `waitOutside`, without the request's admission slot.
 */
export async function sendTestEvent(services: Services, owner: Owner, endpointId: string, waitOutside: WaitOutside): Promise<string> {
  const endpoint = await services.db.webhookEndpoint.findFirst({
    where: { id: endpointId, ...ownerWhere(owner) },
    select: { id: true, status: true, disabledByAdmin: true, applicationId: true, storeId: true, rateLimit: true },
  });
  if (!endpoint) throw notFound("webhook endpoint", endpointId);
  if (endpoint.status === "INACTIVE") throw inactiveEndpoint(endpoint);
  const leave = services.outsideCalls.admit(endpoint.applicationId);
  try {
    // A test counts toward the endpoint's pace but cannot wait for a later slot: none free this second is 429.
    const later = await services.pacer.takeNow(paceKey(endpoint.id), endpoint.rateLimit);
    if (later) {
      const seconds = Math.max(1, Math.ceil((later.getTime() - Date.now()) / 1000));
      throw new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `Webhook endpoint ${endpoint.id} is receiving its rateLimit of ${endpoint.rateLimit} deliveries per second already; test it again in ${seconds} s.`,
        undefined,
        { "retry-after": String(seconds) },
      );
    }
    return await sendTest(services, endpoint, waitOutside);
  } finally {
    leave();
  }
}

async function sendTest(services: Services, endpoint: { id: string; applicationId: string; storeId: string }, waitOutside: WaitOutside): Promise<string> {
  const deliveryId = await services.db.$transaction(async (tx) => {
    const event = await tx.event.create({
      data: { storeId: endpoint.storeId, type: TEST_EVENT_TYPE, data: { message: TEST_EVENT_MESSAGE } satisfies TestEventData },
      select: { id: true },
    });
    const delivery = await tx.webhookDelivery.create({
      data: { eventId: event.id, endpointId: endpoint.id, applicationId: endpoint.applicationId, storeId: endpoint.storeId, eventType: TEST_EVENT_TYPE },
      select: { id: true },
    });
    return delivery.id;
  });
  await runAttempt(services, { deliveryId, trigger: "TEST" }, waitOutside);
  return deliveryId;
}
