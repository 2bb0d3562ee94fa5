import type { Tx } from "../db/prisma.js";

/** One event a write committed: its id and its place in the store's sequence. */
export interface Emitted {
  id: string;
  sequence: bigint;
}

/**
 * The events a request's writes committed, which its REST answer reports (`Event-Ids`, `Event-Sequence`) so a
 * partner can find its own change in the feed or match the webhooks it causes.
 */
export class EventReceipt {
  readonly events: Emitted[] = [];

  add(events: readonly Emitted[]): void {
    this.events.push(...events);
  }

  /** The response headers: none when the write emitted nothing. Ids in sequence order; the sequence the highest. */
  headers(): Record<string, string> {
    if (this.events.length === 0) return {};
    const sorted = [...this.events].sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
    return { "event-ids": sorted.map((e) => e.id).join(","), "event-sequence": String(sorted[sorted.length - 1].sequence) };
  }
}

/**
 * Which receipt the events written with a transaction client go to. Keyed by the client so the services that emit
 * (which take a transaction, not a request) need no extra parameter; a transaction nobody collects from (a worker
 * job's, a test's) has none.
 */
const collectors = new WeakMap<Tx, EventReceipt>();

/** The events emitted with `tx` from now on are added to `receipt`. */
export function collectEvents(tx: Tx, receipt: EventReceipt): void {
  collectors.set(tx, receipt);
}

/** Called by the outbox with what it wrote. */
export function recordEmitted(tx: Tx, events: readonly Emitted[]): void {
  collectors.get(tx)?.add(events);
}
