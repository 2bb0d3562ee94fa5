import { notFound, PICKUP_ORDER_ID, UNKNOWN_ID, type OperationExamples, type ProblemExample } from "../platform/examples.js";
import { catalogExamples } from "../modules/catalog/examples.js";
import { customerExamples } from "../modules/customers/examples.js";
import { eventExamples } from "../modules/events/examples.js";
import { orderExamples } from "../modules/orders/examples.js";
import { sandboxExamples } from "../modules/sandbox/examples.js";
import { storeExamples } from "../modules/store/examples.js";
import { applicationExamples } from "../modules/versions/examples.js";
import { webhookExamples } from "../modules/webhooks/examples.js";
import { exportExamples } from "../modules/exports/examples.js";
import { platformExamples } from "./platform-examples.js";

/**
 * The examples of every operation in the OpenAPI document, by operationId: each domain's are beside its routes
 * (src/modules/<domain>/examples.ts, typed by its route table's ids so none is missing or misspelled), the
 * platform routes' beside theirs. attachExamples (./openapi-attach.ts) puts them in the document.
 */
export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  ...platformExamples,
  ...storeExamples,
  ...orderExamples,
  ...customerExamples,
  ...catalogExamples,
  ...sandboxExamples,
  ...webhookExamples,
  ...eventExamples,
  ...applicationExamples,
  ...exportExamples,
};

/** One example per shared problem response, so every error status shows a realistic body. */
export const STATUS_PROBLEMS: Record<number, ProblemExample> = {
  400: {
    summary: "A body that fails validation",
    code: "INVALID_REQUEST",
    detail: "The request body failed validation: `items[0].quantity` must be at least 1.",
    instance: "/public/v1/orders",
    errors: [{ field: "items[0].quantity", code: "OUT_OF_RANGE", message: "`items[0].quantity` must be at least 1" }],
  },
  401: {
    summary: "An expired token",
    code: "INVALID_TOKEN",
    detail: "The access token has expired. Request a new one at POST /partner/auth/token.",
    instance: "/public/v1/orders",
  },
  403: {
    summary: "A token without the route's scope",
    code: "INSUFFICIENT_SCOPE",
    detail:
      'This operation needs the scope "orders:write", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
    instance: "/public/v1/orders",
  },
  404: notFound("order", "/public/v1/orders/{id}", UNKNOWN_ID),
  409: {
    summary: "An Idempotency-Key reused with another body",
    code: "IDEMPOTENCY_CONFLICT",
    detail: "This Idempotency-Key was already used with a different request. Use a new key for a new request.",
    instance: "/public/v1/orders",
  },
  413: { summary: "A body over the limit", code: "PAYLOAD_TOO_LARGE", detail: "Request bodies are limited to 1048576 bytes.", instance: "/public/v1/orders" },
  415: {
    summary: "A form body where JSON is expected",
    code: "UNSUPPORTED_MEDIA_TYPE",
    detail:
      "Send the body as JSON with Content-Type: application/json; it came as application/x-www-form-urlencoded (curl -d sends that unless you add -H 'content-type: application/json').",
    instance: "/public/v1/orders",
  },
  422: {
    summary: "A move the lifecycle does not allow",
    code: "UNPROCESSABLE_ENTITY",
    detail: "A PICKUP order cannot go from READY to DISPATCHED; next allowed: DELIVERED, CANCELLED.",
    instance: `/public/v1/orders/${PICKUP_ORDER_ID}/status`,
    errors: [
      {
        field: "status",
        code: "INVALID_TRANSITION",
        message: "A PICKUP order cannot go from READY to DISPATCHED; next allowed: DELIVERED, CANCELLED.",
        from: "READY",
        to: "DISPATCHED",
      },
    ],
  },
  429: {
    summary: "The store's limit reached",
    code: "RATE_LIMIT_EXCEEDED",
    detail: "The limit of 100 requests per minute for this store is reached. Retry after 12 s, backing off with jitter.",
    instance: "/public/v1/orders",
  },
  500: {
    summary: "An unexpected failure",
    code: "INTERNAL_SERVER_ERROR",
    detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
    instance: "/public/v1/orders",
  },
  503: {
    summary: "The database is away",
    code: "SERVICE_UNAVAILABLE",
    detail: "The database is unreachable or not migrated yet.",
    instance: "/public/v1/orders",
  },
};
