import type pg from "pg";
import { EVENT_SCOPES } from "../events/types.js";
import { OPERATIONAL_EVENT_TYPES } from "../events/operational.js";
import type { FirstAttempt } from "./jobs.js";
import type { Claimed } from "./delivery/prepare.js";
import { FAN_OUT_EVENT, WEBHOOK_FAN_OUT_TARGETS } from "./sql/fan-out.js";

const scopes = JSON.stringify(EVENT_SCOPES);

/**
 * Creates an event's deliveries without attempting any, and returns the first scheduled attempt of every
 * delivery of the event that has none recorded yet: the new ones, and on a re-run (a retried or recovered
 * job) those a previous run created but never recorded an attempt for. One round trip.
 */
export async function fanOutEvent(pool: pg.Pool, eventId: string): Promise<FirstAttempt[]> {
  const { rows } = await pool.query<{ id: string; nextAttemptAt: Date }>(FAN_OUT_EVENT, [[eventId], scopes, OPERATIONAL_EVENT_TYPES]);
  return rows.map((r) => ({ deliveryId: r.id, trigger: "SCHEDULED", step: 1, dueAt: r.nextAttemptAt.toISOString() }));
}

export interface PlannedFirstAttempt {
  request: FirstAttempt;
  /** What to send; the delivery itself is created when the attempt is recorded (attemptFirst in attempt.ts). */
  planned: Claimed;
}

/**
 * The worker's fast path for events fanned out for the first time: reads what the first attempts of several
 * events' deliveries send, in one statement that writes nothing (each delivery is created once, by the statement
 * recording its first attempt), and returns it per event in the order given. Prepared once per connection.
 */
export async function planFirstAttempts(pool: pg.Pool, eventIds: readonly string[]): Promise<PlannedFirstAttempt[][]> {
  const { rows } = await pool.query<Claimed & { deliveryId: string; nextAttemptAt: Date }>({
    ...WEBHOOK_FAN_OUT_TARGETS,
    values: [eventIds, scopes, OPERATIONAL_EVENT_TYPES],
  });
  const byEvent = new Map<string, PlannedFirstAttempt[]>(eventIds.map((id) => [id, []]));
  for (const { deliveryId, ...planned } of rows) {
    const request: FirstAttempt = { deliveryId, trigger: "SCHEDULED", step: 1, dueAt: planned.nextAttemptAt.toISOString() };
    byEvent.get(planned.eventId)?.push({ request, planned });
  }
  return eventIds.map((id) => byEvent.get(id) ?? []);
}
