import type { TaskList } from "graphile-worker";
import type { Services } from "../src/services.js";
import { cleanupIdempotencyKeys } from "./tasks/cleanup-idempotency-keys.js";
import { fanOutEvent } from "./tasks/fan-out-event.js";
import { deliverWebhook } from "./tasks/deliver-webhook.js";

/** Every graphile-worker task of the service, by snake_case identifier. */
export function taskList(services: Services): TaskList {
  return {
    cleanup_idempotency_keys: cleanupIdempotencyKeys(services),
    fan_out_event: fanOutEvent(services),
    deliver_webhook: deliverWebhook(services),
  };
}

export const CRONTAB = ["0 * * * * cleanup_idempotency_keys ?max=1"].join("\n");
