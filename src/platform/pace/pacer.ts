import { batchStatements } from "../db/batch.js";

/**
 * Pacing: at most `limit` things per second per key (a webhook endpoint receives at most its rateLimit deliveries per
 * second), for every process sharing a PaceStore. Seconds are whole seconds of the store's clock. Each key has a
 * cursor, its next free slot: slot `used` of `second`, where `second` may lie ahead when slots were handed out for
 * later. What is over the pace is not refused: it gets a slot ahead, in order, and waits for it (the caller
 * reschedules it). A slot is never handed out twice, so the pace holds across processes however they interleave.
 *
 * Cheap under the pace: a reservation also takes spare slots of the current second, as many as this process used
 * of the key in the last second (its demand), and later takes in that second use them without asking the store.
 * So a key a process sends steadily costs it about one store round trip per second, batched with other keys.
 */

export interface PaceRequest {
  key: string;
  limit: number;
  /** Slots wanted in order from the cursor, now or ahead. */
  want: number;
  /** More slots wanted only if they fall in the current second (a lease for later takes). */
  spare: number;
}

export interface PaceGrant {
  /** The store's clock (Unix ms) when it reserved. */
  nowMs: number;
  /** Where the wanted slots start: slot `startUsed` of `startSecond`. */
  startSecond: number;
  startUsed: number;
  /** Spare slots of the current second granted. */
  extra: number;
}

/** Where the cursors live: this process, PostgreSQL or Redis (./stores.ts). Answers in request order. */
export interface PaceStore {
  reserve(requests: readonly PaceRequest[]): Promise<PaceGrant[]>;
}

/**
 * The one rule every store applies, atomically per key: from the cursor (reset to the current second when it lies
 * behind), `want` slots in order, `limit` per second, then up to `spare` more if the cursor is still in the current
 * second. Returns the grant and the new cursor. (PostgreSQL's pace_reserve() and the Redis script state it again in
 * their languages.)
 */
export function advance(
  cursor: { second: number; used: number } | null,
  nowMs: number,
  r: PaceRequest,
): { grant: PaceGrant; cursor: { second: number; used: number } } {
  const nowSecond = Math.floor(nowMs / 1000);
  const behind = cursor === null || cursor.second < nowSecond;
  const startSecond = behind ? nowSecond : cursor.second;
  const startUsed = behind ? 0 : Math.min(cursor.used, r.limit);
  const total = startUsed + r.want;
  const endSecond = startSecond + Math.floor(total / r.limit);
  const endUsed = total % r.limit;
  const extra = endSecond === nowSecond ? Math.min(r.spare, r.limit - endUsed) : 0;
  return { grant: { nowMs, startSecond, startUsed, extra }, cursor: { second: endSecond, used: endUsed + extra } };
}

/**
 * Slots ahead are spread over the first half of their second (slot i of n at i/n of 500 ms), so a backlog reaches its
 * receiver evenly rather than in one burst per second, and a job that starts a little late is still inside its second.
 */
const SPREAD_MS = 500;
/** A slot ahead is used only while its second has this much left by this process's estimate of the store's clock. */
const HOLD_MARGIN_MS = 50;

/** Leases kept before the stale ones are dropped (one per key a process sends to). */
const MAX_LEASES = 10_000;

/** This process's share of a key's current second: spare slots it reserved, and how many it used lately. */
interface Lease {
  second: number;
  left: number;
  /** Local time (ms) until which the store's clock is surely still in `second`. */
  untilMs: number;
  usedThis: number;
  usedPrev: number;
}

type Want = { key: string; limit: number; kind: "take" | "now" };

export interface PaceStats {
  /** Store round trips. */
  reservations: number;
  /** Slots handed out ahead (what was over the pace waits for them). */
  deferred: number;
  /** Asks for a slot now that found none. */
  refused: number;
}

export class Pacer {
  private readonly leases = new Map<string, Lease>();
  /** Keys with a reservation on its way: later takes wait for its spare slots before asking again. */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  /** The store's clock minus this process's, as last seen (ms). */
  private offsetMs = 0;
  private readonly batch = batchStatements<Want, Date | null>((wants) => this.reserve(wants));
  readonly stats: PaceStats = { reservations: 0, deferred: 0, refused: 0 };

  constructor(private readonly store: PaceStore) {}

  /**
   * A slot for one more thing of `key`: null to go now, or the time (the store's clock) of the slot reserved for it
   * ahead, which it must wait for (see holds()).
   */
  async take(key: string, limit: number): Promise<Date | null> {
    for (;;) {
      if (this.fromLease(key)) return null;
      const pending = this.inFlight.get(key);
      if (!pending) break;
      await pending;
    }
    return this.ask({ key, limit, kind: "take" });
  }

  /**
   * A slot of the current second or none: nothing is reserved ahead for a thing that cannot wait (a webhook test).
   * Null when granted, else when to try again.
   */
  async takeNow(key: string, limit: number): Promise<Date | null> {
    if (this.fromLease(key)) return null;
    return this.ask({ key, limit, kind: "now" });
  }

  /** Whether a slot reserved ahead at `at` may still be used: its second has not ended yet, as far as this process can tell. */
  holds(at: Date): boolean {
    const secondEnd = (Math.floor(at.getTime() / 1000) + 1) * 1000;
    return Date.now() + this.offsetMs < secondEnd - HOLD_MARGIN_MS;
  }

  private fromLease(key: string): boolean {
    const lease = this.leases.get(key);
    if (!lease || lease.left === 0 || Date.now() >= lease.untilMs) return false;
    lease.left--;
    lease.usedThis++;
    return true;
  }

  private ask(want: Want): Promise<Date | null> {
    const answer = this.batch.load(want);
    if (!this.inFlight.has(want.key)) {
      const settled = answer.then(
        () => undefined,
        () => undefined,
      );
      this.inFlight.set(want.key, settled);
      void settled.then(() => this.inFlight.delete(want.key));
    }
    return answer;
  }

  /** One store round trip for every key asked about in the same tick; answers each ask in order. */
  private async reserve(wants: readonly Want[]): Promise<(Date | null)[]> {
    const byKey = new Map<string, number[]>();
    for (const [i, w] of wants.entries()) byKey.set(w.key, [...(byKey.get(w.key) ?? []), i]);
    const groups = [...byKey.entries()].map(([key, asks]) => {
      const takes = asks.filter((i) => wants[i].kind === "take");
      const lease = this.leases.get(key);
      const demand = lease ? Math.max(lease.usedThis, lease.usedPrev) : 0;
      const request: PaceRequest = { key, limit: wants[asks[0]].limit, want: takes.length, spare: asks.length - takes.length + demand };
      return { request, asks };
    });
    const sentAt = Date.now();
    this.stats.reservations++;
    const grants = await this.store.reserve(groups.map((g) => g.request));
    const receivedAt = Date.now();
    const answers: (Date | null)[] = wants.map(() => null);
    for (const [g, { request, asks }] of groups.entries()) {
      const { limit } = request;
      const grant = grants[g];
      this.offsetMs = grant.nowMs - (sentAt + receivedAt) / 2;
      const nowSecond = Math.floor(grant.nowMs / 1000);
      // The store read its clock after sentAt, so until this local time its second is surely not over.
      const lease = this.renew(request.key, nowSecond, sentAt + (nowSecond + 1) * 1000 - grant.nowMs);
      let extra = grant.extra;
      let slot = 0;
      for (const i of asks) {
        if (wants[i].kind === "now") {
          if (extra > 0) {
            extra--;
            lease.usedThis++;
          } else {
            this.stats.refused++;
            const next = grant.startSecond + Math.floor((grant.startUsed + request.want) / limit);
            answers[i] = new Date(Math.max(nowSecond + 1, next) * 1000);
          }
          continue;
        }
        const index = grant.startUsed + slot++;
        const second = grant.startSecond + Math.floor(index / limit);
        if (second === nowSecond) {
          lease.usedThis++;
          continue;
        }
        this.stats.deferred++;
        answers[i] = new Date(second * 1000 + Math.floor(((index % limit) * SPREAD_MS) / limit));
      }
      lease.left += extra;
    }
    return answers;
  }

  /** The key's lease for `second` (a new one keeps the last second's use as its demand), valid until `untilMs`. */
  private renew(key: string, second: number, untilMs: number): Lease {
    const old = this.leases.get(key);
    if (old && old.second === second) {
      old.untilMs = Math.max(old.untilMs, untilMs);
      return old;
    }
    if (!old && this.leases.size >= MAX_LEASES) {
      // Keys no longer sent to: their leases ran out over a second ago and carry no demand worth keeping.
      const stale = Date.now() - 1000;
      for (const [k, l] of this.leases) if (l.untilMs < stale) this.leases.delete(k);
    }
    const lease: Lease = { second, left: 0, untilMs, usedThis: 0, usedPrev: old && old.second === second - 1 ? old.usedThis : 0 };
    this.leases.set(key, lease);
    return lease;
  }
}
