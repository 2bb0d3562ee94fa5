import type { WebhookAttemptTrigger, WebhookDeliveryStatus, WebhookEndpointStatus } from "../../platform/db/prisma.js";

export const WEBHOOK_ENDPOINT_STATUSES = ["ACTIVE", "INACTIVE", "FAILED"] as const satisfies readonly WebhookEndpointStatus[];
/** The statuses an administrator may set: FAILED is only ever set by deliveries. */
export const WEBHOOK_ENDPOINT_SWITCHES = ["ACTIVE", "INACTIVE"] as const satisfies readonly WebhookEndpointStatus[];
export const WEBHOOK_DELIVERY_STATUSES = ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"] as const satisfies readonly WebhookDeliveryStatus[];
export const WEBHOOK_ATTEMPT_TRIGGERS = ["SCHEDULED", "REPLAY", "RECOVER", "TEST", "BACKFILL"] as const satisfies readonly WebhookAttemptTrigger[];
