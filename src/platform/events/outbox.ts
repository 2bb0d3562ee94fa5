import type { Prisma, Tx } from "../db/prisma.js";
import type { EventData, EventType } from "./declaration.js";
import { insertEvents } from "./sql.js";
import { recordEmitted, type Emitted } from "./receipt.js";
import { tracer } from "../tracing/tracer.js";

export const FAN_OUT_TASK = "fan_out_event";

export interface FanOutPayload {
  eventId: string;
  /** The W3C traceparent of the span that committed the event (tracing on only): the job's span is its child. */
  traceparent?: string;
}

/** One event to emit: the union ties each type to the `data` declared for it (see ./declaration.ts). */
export type NewEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

/**
 * The transactional outbox: writes the events' rows, in order, and enqueues each one's fan-out job with the
 * caller's transaction client, in one statement, so the change, its events and their jobs commit or roll back
 * together. Call it only inside `db.$transaction(async (tx) => ...)` together with the change it reports.
 * `change`, when given, is that change as CTEs (the last named `changed`, see insertEvents in ./sql.ts), sent in
 * the same statement: the events are written only if it changed something, and no id comes back otherwise.
 * What it wrote goes to the receipt collecting `tx`'s events, if any (./receipt.ts).
 */
export async function emitEvents(tx: Tx, storeId: string, events: readonly NewEvent[], change?: Prisma.Sql): Promise<Emitted[]> {
  if (events.length === 0 && !change) return [];
  const emitted = await tx.$queryRaw<Emitted[]>(insertEvents(FAN_OUT_TASK, storeId, events, new Date(), change, tracer.traceparent()));
  recordEmitted(tx, emitted);
  return emitted;
}

/** One event of `type`; `data` must be the payload declared for it. */
export async function emitEvent<T extends EventType>(tx: Tx, storeId: string, type: T, data: EventData<T>): Promise<Emitted> {
  const emitted = await tx.$queryRaw<Emitted[]>(insertEvents(FAN_OUT_TASK, storeId, [{ type, data }], new Date(), undefined, tracer.traceparent()));
  recordEmitted(tx, emitted);
  return emitted[0];
}
