import type { Task } from "graphile-worker";
import type { Services } from "../../src/services.js";
import { fanOutEvent as fanOut } from "../../src/webhooks/fan-out.js";
import { assertFanOutPayload } from "../../src/webhooks/jobs.js";

/** `fan_out_event` {eventId}: one delivery (and its first scheduled job) per subscribed endpoint. Safe to re-run. */
export function fanOutEvent(services: Services): Task {
  return async (payload) => {
    const { eventId } = assertFanOutPayload(payload);
    const created = await fanOut(services.pool, eventId);
    services.log.debug({ eventId, deliveries: created }, "event fanned out");
  };
}
