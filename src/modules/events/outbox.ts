import type { Tx } from "../../platform/db/prisma.js";
import type { EventData, EventType } from "./types.js";
import { enqueueFanOut } from "./sql.js";

export const FAN_OUT_TASK = "fan_out_event";

export interface FanOutPayload {
  eventId: string;
}

/**
 * The transactional outbox: writes the event row and enqueues its fan-out job with the
 * caller's transaction client, so the change, the event and the job commit or roll back together.
 * Call it only inside `db.$transaction(async (tx) => ...)` together with the change it reports.
 * `data` must be the payload declared for `type` (see ./types.ts).
 */
export async function emitEvent<T extends EventType>(tx: Tx, storeId: string, type: T, data: EventData<T>): Promise<{ id: string }> {
  const event = await tx.event.create({ data: { storeId, type, data }, select: { id: true } });
  await tx.$executeRaw(enqueueFanOut(FAN_OUT_TASK, event.id));
  return event;
}
