import type { TaskList } from "graphile-worker";
import type { Services } from "../src/platform/services.js";
import { cleanupIdempotencyKeys } from "./tasks/cleanup-idempotency-keys.js";
import { flushCatalogChanges } from "./tasks/flush-catalog-changes.js";
import { cleanupRateLimits } from "./tasks/cleanup-rate-limits.js";
import { fanOutEvent } from "./tasks/fan-out-event.js";
import { deliverWebhook } from "./tasks/deliver-webhook.js";
import { cleanupEvents } from "./tasks/cleanup-events.js";
import { simulateOrder } from "./tasks/simulate-order.js";
import { jobSpans } from "./tracing.js";

/** Every graphile-worker task of the service, by snake_case identifier. */
export function taskList(services: Services): TaskList {
  const traced = jobSpans(services);
  return {
    cleanup_idempotency_keys: traced("cleanup_idempotency_keys", cleanupIdempotencyKeys(services)),
    flush_catalog_changes: traced("flush_catalog_changes", flushCatalogChanges(services)),
    cleanup_rate_limits: traced("cleanup_rate_limits", cleanupRateLimits(services)),
    fan_out_event: traced("fan_out_event", fanOutEvent(services)),
    deliver_webhook: traced("deliver_webhook", deliverWebhook(services)),
    cleanup_events: traced("cleanup_events", cleanupEvents(services)),
    simulate_order: traced("simulate_order", simulateOrder(services)),
  };
}

export const CRONTAB = ["0 * * * * cleanup_idempotency_keys ?max=1", "*/5 * * * * cleanup_rate_limits ?max=1", "30 * * * * cleanup_events ?max=1"].join("\n");
