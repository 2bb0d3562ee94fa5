import type { Db, Tx } from "../../platform/db/prisma.js";
import type { Notifications } from "../../platform/db/notifications.js";
import type { Envelope } from "./envelope.js";
import { invalidRequest } from "../../platform/errors.js";

/** One event as every reader gets it: exactly the webhook body (the feed, storeEvents and deliveries share it). */
export type FeedEnvelope = Envelope;

/** The channel the event insert trigger notifies, with the store id as payload (see the event_sequence migration). */
export const STORE_EVENTS_CHANNEL = "store_events";

const PAGE = 100;
/** Readers look again this often even without a notification: a safety net, not the way events arrive. */
const POLL_MS = 15_000;

/** The store's events after `after` (a sequence number), oldest first, only of `types`. */
export async function readEvents(db: Tx, storeId: string, opts: { after: bigint; types: readonly string[]; limit: number }): Promise<FeedEnvelope[]> {
  const rows = await db.event.findMany({
    where: { storeId, sequence: { gt: opts.after }, type: { in: [...opts.types] } },
    orderBy: { sequence: "asc" },
    take: opts.limit,
    select: { id: true, type: true, createdAt: true, data: true, sequence: true, store: { select: { code: true } } },
  });
  return rows.map(envelopeOf);
}

export interface FeedPage {
  data: FeedEnvelope[];
  pagination: { hasMore: boolean; cursor: string; nextCursor: string };
}

/**
 * Refuses a cursor past the store's latest sequence (another store's, or made up): its reader would see nothing
 * until the store caught up, then miss the events in between. The latest is the committed `StoreEventSequence`
 * row, which an event's transaction advances and commits with it: every sequence a reader was ever handed, the
 * latest included, is at most that, even while other writes are committing, so no valid cursor is refused.
 */
export async function checkCursor(db: Tx, storeId: string, after: bigint): Promise<void> {
  if (after === 0n) return;
  const latest = await lastSequence(db, storeId);
  if (after <= latest) return;
  throw invalidRequest(
    `after is ${after}, past this store's latest event (sequence ${latest}). Pass pagination.nextCursor as it came, or the sequence of an event read.`,
    [{ field: "after", code: "INVALID_CURSOR", message: `\`after\` is past this store's latest event (sequence ${latest})` }],
  );
}

/**
 * One page of the feed. Unlike the other lists the cursor is never null: on the last page it is the last event's
 * sequence (or `after` when the page is empty), so a reader tails the feed by passing it back.
 */
export async function feedPage(db: Tx, storeId: string, opts: { after: bigint; types: readonly string[]; limit: number }): Promise<FeedPage> {
  await checkCursor(db, storeId, opts.after);
  const rows = await readEvents(db, storeId, { ...opts, limit: opts.limit + 1 });
  const hasMore = rows.length > opts.limit;
  const data = hasMore ? rows.slice(0, opts.limit) : rows;
  const cursor = String(data.length > 0 ? data[data.length - 1].sequence : opts.after);
  return { data, pagination: { hasMore, cursor, nextCursor: cursor } };
}

/** One event of the store, if its type is among `types`. */
export async function readEvent(db: Tx, storeId: string, eventId: string, types: readonly string[]): Promise<FeedEnvelope | null> {
  const row = await db.event.findFirst({
    where: { id: eventId, storeId, type: { in: [...types] } },
    select: { id: true, type: true, createdAt: true, data: true, sequence: true, store: { select: { code: true } } },
  });
  return row ? envelopeOf(row) : null;
}

const envelopeOf = (r: { id: string; type: string; createdAt: Date; data: unknown; sequence: bigint; store: { code: string } }): FeedEnvelope => ({
  eventId: r.id,
  eventType: r.type,
  timestamp: r.createdAt.toISOString(),
  tenantId: r.store.code,
  sequence: Number(r.sequence),
  data: r.data,
});

/** The last sequence number the store has drawn (0 before its first event). */
export async function lastSequence(db: Tx, storeId: string): Promise<bigint> {
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
