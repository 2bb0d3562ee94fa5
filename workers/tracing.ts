import type { JobHelpers, Task } from "graphile-worker";
import type { Services } from "../src/platform/services.js";
import { tracer } from "../src/platform/tracing/tracer.js";
import { FAN_OUT_TASK } from "../src/platform/events/outbox.js";
import { DELIVER_TASK, assertDeliverPayload, assertFanOutPayload } from "../src/modules/webhooks/jobs.js";

/** A task as graphile-worker runs it, with its payload's type. */
type Run<P> = (payload: P, helpers: JobHelpers) => ReturnType<Task>;

/**
 * Each job in a CONSUMER span (OpenTelemetry's messaging conventions; graphile-worker has no tracing of its own).
 * An event's fan-out job continues the trace of the write that committed the event (its payload carries that
 * span's traceparent), so a partner's write and the deliveries it causes are one trace. A `deliver_webhook` job
 * (a retry, replay, recover or backfill) starts a trace of its own that links to the event's. Tracing off, the
 * tasks run as they are.
 */
export function jobSpans(services: Services): <P>(name: string, task: Run<P>) => Run<P> {
  if (!tracer.enabled) return (_name, task) => task;
  return (name, task) => async (payload, helpers) => {
    const { job } = helpers;
    const parent = name === FAN_OUT_TASK ? (assertFanOutPayload(payload).traceparent ?? null) : null;
    const delivery = name === DELIVER_TASK ? assertDeliverPayload(payload) : null;
    const link = delivery ? await eventTraceOf(services, delivery.deliveryId) : null;
    const attributes = {
      "messaging.system": "graphile_worker",
      "messaging.operation.type": "process",
      "messaging.destination.name": name,
      "messaging.message.id": job.id,
      "messaging.message.delivery_attempt": job.attempts,
      "webhook.trigger": delivery?.trigger,
    };
    await tracer.trace(`${name} process`, { kind: "consumer", root: true, parent, links: [link], attributes }, async () => {
      await task(payload, helpers);
    });
  };
}

/** The traceparent the delivery's event was committed under, while the event is kept. */
async function eventTraceOf(services: Services, deliveryId: string): Promise<string | null> {
  const { rows } = await services.pool.query<{ traceparent: string | null }>(
    `select e.traceparent from "WebhookDelivery" d join "Event" e on e.id = d."eventId" where d.id = $1`,
    [deliveryId],
  );
  return rows[0]?.traceparent ?? null;
}
