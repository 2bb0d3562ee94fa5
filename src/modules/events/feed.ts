import type { Db } from "../../platform/db/prisma.js";
import type { Notifications } from "../../platform/db/notifications.js";

/** The envelope of one event as every reader gets it: the webhook body's fields plus the store's sequence number. */
export interface FeedEnvelope {
  eventId: string;
  eventType: string;
  timestamp: string;
  tenantId: string;
  sequence: number;
  data: unknown;
}

/** The channel the event insert trigger notifies, with the store id as payload (see the event_sequence migration). */
export const STORE_EVENTS_CHANNEL = "store_events";

const PAGE = 100;
/** Readers look again this often even without a notification: a safety net, not the way events arrive. */
const POLL_MS = 15_000;

/** The store's events after `after` (a sequence number), oldest first, only of `types`. */
export async function readEvents(db: Db, storeId: string, opts: { after: bigint; types: readonly string[]; limit: number }): Promise<FeedEnvelope[]> {
  const rows = await db.event.findMany({
    where: { storeId, sequence: { gt: opts.after }, type: { in: [...opts.types] } },
    orderBy: { sequence: "asc" },
    take: opts.limit,
    select: { id: true, type: true, createdAt: true, data: true, sequence: true, store: { select: { code: true } } },
  });
  return rows.map((r) => ({
    eventId: r.id,
    eventType: r.type,
    timestamp: r.createdAt.toISOString(),
    tenantId: r.store.code,
    sequence: Number(r.sequence),
    data: r.data,
  }));
}

/** The last sequence number the store has drawn (0 before its first event). */
export async function lastSequence(db: Db, storeId: string): Promise<bigint> {
  const row = await db.storeEventSequence.findUnique({ where: { storeId }, select: { last: true } });
  return row?.last ?? 0n;
}

/**
 * The store's events as they commit, after `after` (default: from now on), in sequence order and without a gap:
 * sequence numbers follow commit order, so once a number is visible every smaller one is. Ends when `signal`
 * aborts or the process stops listening.
 */
export async function* followEvents(
  db: Db,
  notifications: Notifications,
  storeId: string,
  opts: { after: bigint | null; types: readonly string[]; signal: AbortSignal },
): AsyncGenerator<FeedEnvelope> {
  let cursor = opts.after ?? (await lastSequence(db, storeId));
  while (!opts.signal.aborted && !notifications.isClosed) {
    // Wait for the next notification from before reading, so one that arrives while reading is not missed.
    const turn = new AbortController();
    const stopTurn = () => turn.abort();
    opts.signal.addEventListener("abort", stopTurn, { once: true });
    const notified = notifications.next(storeId, turn.signal);
    try {
      const events = await readEvents(db, storeId, { after: cursor, types: opts.types, limit: PAGE });
      for (const event of events) {
        yield event;
        cursor = BigInt(event.sequence);
      }
      if (events.length < PAGE) {
        const poll = setTimeout(stopTurn, POLL_MS);
        await notified;
        clearTimeout(poll);
      }
    } finally {
      opts.signal.removeEventListener("abort", stopTurn);
      turn.abort();
    }
  }
}
