import {
  DELIVERY_ID,
  ENDPOINT_ID,
  EVENT_ID,
  notFound,
  one,
  page,
  STORE_CODE,
  T,
  UNKNOWN_ID,
  WEBHOOK_URL,
  type OperationExamples,
} from "../../platform/examples.js";
import { FIRST_API_VERSION } from "../../platform/versions.js";
import { CREATED_EVENT } from "../events/examples.js";
import type { webhookRoutes } from "./routes.js";
import { LOCAL_RECEIVER_ADVICE } from "./url-safety.js";

type WebhookOperationId = (typeof webhookRoutes)[number]["operationId"];

const SECRET_PREFIX = "whsec_5oaG0P";

const ENDPOINT = {
  id: ENDPOINT_ID,
  url: WEBHOOK_URL,
  events: ["order.created", "order.cancelled"],
  status: "ACTIVE",
  secretPrefix: SECRET_PREFIX,
  lastSuccessAt: "2025-03-01T18:30:01.152Z",
  failureCount: 0,
  disabledReason: null,
  rateLimit: 50,
  apiVersion: "2026-12-01",
  type: "http",
  ordering: null,
  destination: null,
  deliveriesLast24h: { delivered: 41, failed: 1, pending: 0, successRate: 0.9762 },
  drill: null,
};

/** A fault drill a SANDBOX endpoint runs (extension to the contract). */
const DRILL = { duplicateRate: 0.2, reorderWindowSeconds: 10, maxDelaySeconds: 30 };

const DELIVERY = {
  id: DELIVERY_ID,
  eventId: EVENT_ID,
  eventType: "order.created",
  tenantId: STORE_CODE,
  status: "DELIVERED",
  httpStatus: 200,
  attempts: 1,
  lastAttemptAt: T.delivered,
  nextAttemptAt: null,
  lastError: null,
  requestDurationMs: 84,
  endpointId: ENDPOINT_ID,
};

const DEAD_DELIVERY = {
  ...DELIVERY,
  status: "DEAD_LETTER",
  httpStatus: 503,
  attempts: 10,
  lastAttemptAt: "2025-03-02T22:31:07.905Z",
  lastError: "HTTP 503 from the receiver",
  requestDurationMs: 212,
};

const PRIVATE_HOST = `"erp.internal.example" resolves to 10.0.0.12, which is a private address. ${LOCAL_RECEIVER_ADVICE}`;

export const webhookExamples = {
  createWebhookEndpoint: {
    request: one("Orders created and cancelled, to the ERP", { url: WEBHOOK_URL, events: ["order.created", "order.cancelled"] }),
    response: one("The endpoint, with its secret (shown only here)", {
      id: ENDPOINT_ID,
      url: WEBHOOK_URL,
      events: ["order.created", "order.cancelled"],
      rateLimit: 50,
      apiVersion: "2026-12-01",
      type: "http",
      ordering: null,
      destination: null,
      secret: "whsec_5oaG0P2uqqa0W7Hibi/wMVhXNjVkHMYveywSVc1zFio=",
      secretPrefix: SECRET_PREFIX,
      message: "Store the secret now: it is shown only once. Verify the X-Service-Signature header of every delivery with it.",
    }),
    problem: {
      summary: "A receiver on a private network",
      code: "UNPROCESSABLE_ENTITY",
      detail: PRIVATE_HOST,
      instance: "/public/v1/webhooks",
      errors: [{ field: "url", code: "PRIVATE_NETWORK", message: PRIVATE_HOST }],
    },
  },
  listWebhookEndpoints: {
    response: one("The Application's one endpoint", page([ENDPOINT], null)),
    problem: {
      summary: "A token without webhooks:manage",
      code: "INSUFFICIENT_SCOPE",
      detail:
        'This operation needs the scope "webhooks:manage", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
      instance: "/public/v1/webhooks",
    },
  },
  getWebhookEndpointById: {
    response: one("A healthy endpoint", ENDPOINT),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  updateWebhookEndpoint: {
    request: {
      pause: { summary: "Stop deliveries for a while", value: { status: "INACTIVE" } },
      pace: { summary: "At most 10 deliveries a second (extension to the contract)", value: { rateLimit: 10 } },
      drill: {
        summary: "Rehearse duplicates, reordering and delays on a SANDBOX endpoint (extension to the contract)",
        value: { drill: DRILL },
      },
      endDrill: { summary: "End the fault drill (extension to the contract)", value: { drill: null } },
      events: {
        summary: "Subscribe to the whole order lifecycle",
        value: { events: ["order.created", "order.confirmed", "order.ready", "order.dispatched", "order.delivered", "order.cancelled"] },
      },
    },
    response: one("The endpoint, paused", { ...ENDPOINT, status: "INACTIVE", disabledReason: "Set INACTIVE on request." }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  deleteWebhookEndpoint: {
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  testWebhookEndpoint: {
    response: one("The webhook.test delivery, acknowledged", {
      ...DELIVERY,
      id: "e3f1a7c9-5b2d-4e8f-a6c0-9d4b2f8e1a37",
      eventId: "d1fecada-c4e8-4052-9070-a253a2acc87f",
      eventType: "webhook.test",
      requestDurationMs: 13,
    }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}/test", UNKNOWN_ID),
  },
  rotateWebhookEndpointSecret: {
    response: one("The new secret (shown only here)", {
      id: ENDPOINT_ID,
      secret: "whsec_QFyqSeqcRg6Z8N4aKqhMBEzDS78j1NlbS+Y6v4wO+6g=",
      secretPrefix: "whsec_QFyqSe",
      previousSecretExpiresAt: "2025-03-02T18:45:00.000Z",
      message:
        "Store the new secret now: it is shown only once. Until 2025-03-02T18:45:00.000Z deliveries carry a v1 signature for the new and for the previous secret.",
    }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}/rotate-secret", UNKNOWN_ID),
  },
  recoverWebhookDeliveries: {
    request: one("What failed during last night's outage", { since: "2025-03-01T23:00:00.000Z", until: "2025-03-02T07:00:00.000Z" }),
    response: one("The first 100 deliveries of a long outage queued again (two past retention passed over): call again for the rest", {
      count: 100,
      hasMore: true,
      expired: 2,
    }),
    problem: {
      summary: "A window that ends before it starts",
      code: "INVALID_REQUEST",
      detail: "since must be before until (or before now when until is omitted).",
      instance: `/public/v1/webhooks/${ENDPOINT_ID}/recover`,
      errors: [{ field: "since", code: "OUT_OF_RANGE", message: "`since` must be before `until`" }],
    },
  },
  backfillWebhookEndpoint: {
    request: one("Everything after the last event the receiver applied", { afterSequence: 1040 }),
    response: one("The first 100 subscribed events queued: call again with afterSequence 1187 for the rest", {
      count: 100,
      hasMore: true,
      nextAfterSequence: 1187,
    }),
    problem: {
      summary: "A sequence past the store's latest event",
      code: "INVALID_REQUEST",
      detail: "afterSequence is 99999, past this store's latest event (sequence 1187).",
      instance: `/public/v1/webhooks/${ENDPOINT_ID}/backfill`,
      errors: [{ field: "afterSequence", code: "OUT_OF_RANGE", message: "`afterSequence` is past this store's latest event (sequence 1187)" }],
    },
  },
  listWebhookDeliveries: {
    response: one("The newest delivery", page([DELIVERY], null)),
    problem: {
      summary: "A status that is not a delivery status",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `status` must be one of: PENDING, DELIVERED, FAILED, DEAD_LETTER.",
      instance: "/public/v1/webhooks/deliveries",
      errors: [
        {
          field: "status",
          code: "INVALID_VALUE",
          message: "`status` must be one of: PENDING, DELIVERED, FAILED, DEAD_LETTER",
          allowed: ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"],
        },
      ],
    },
  },
  getWebhookDeliveryById: {
    response: one("A delivered order.created, with the body it sent", { ...DELIVERY, payload: CREATED_EVENT }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}", UNKNOWN_ID),
  },
  listWebhookDeliveryAttempts: {
    response: one("One scheduled attempt, acknowledged", {
      data: [
        {
          attempt: 1,
          trigger: "SCHEDULED",
          startedAt: "2025-03-01T18:30:01.068Z",
          durationMs: 84,
          httpStatus: 200,
          error: null,
          requestHeaders: {
            "Content-Type": "application/json",
            "User-Agent": "PartnerWebhooks/1.0",
            "X-Service-Signature": "t=1740853801,v1=fdcc6ba8b6d4375ab98a47c2a0790c9670f8354815f9b22607cc26751dcb5934",
            "X-Service-Event-Id": EVENT_ID,
            "X-Service-Event-Type": "order.created",
            "X-Service-Delivery-Id": DELIVERY_ID,
            "Api-Version": FIRST_API_VERSION,
            "webhook-id": EVENT_ID,
            "webhook-timestamp": "1740853801",
            "webhook-signature": "v1,bssJpIc7a0tSikhstjbBRZOovcHNVt0v/RryV8+mDLI=",
          },
          responseBody: '{"received":true}',
          drill: null,
        },
      ],
    }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}/attempts", UNKNOWN_ID),
  },
  replayWebhookDelivery: {
    response: one("A dead-lettered delivery, queued again", { ...DEAD_DELIVERY, status: "PENDING", nextAttemptAt: "2025-03-03T09:12:00.000Z" }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}/replay", UNKNOWN_ID),
  },
} satisfies Record<WebhookOperationId, OperationExamples>;
