import type { Prisma, Tx } from "../../platform/db/prisma.js";
import type { EventType } from "./types.js";
import { enqueueFanOut } from "./sql.js";

export const FAN_OUT_TASK = "fan_out_event";

export interface FanOutPayload {
  eventId: string;
}

/**
 * The transactional outbox: writes the event row and enqueues its fan-out job with the
 * caller's transaction client, so the change, the event and the job commit or roll back together.
 * Call it only inside `db.$transaction(async (tx) => ...)` together with the change it reports.
 */
export async function emitEvent(tx: Tx, storeId: string, type: EventType, data: Prisma.InputJsonObject): Promise<{ id: string }> {
  const event = await tx.event.create({ data: { storeId, type, data }, select: { id: true } });
  await tx.$executeRaw(enqueueFanOut(FAN_OUT_TASK, event.id));
  return event;
}
