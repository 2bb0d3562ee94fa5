import type { JsonSchema } from "../../platform/route.js";
import { dateTime, nullable, uuid } from "../../platform/schemas.js";
import { defineBody, definePath, defineQuery } from "../../platform/validate.js";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../events/types.js";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES } from "./statuses.js";

export const WebhookEventTypeSchema: JsonSchema = { type: "string", enum: [...EVENT_TYPES], description: "A subscribable event type" };

export const CreateWebhookEndpointBody: JsonSchema = {
  type: "object",
  required: ["url", "events"],
  additionalProperties: false,
  properties: {
    url: { type: "string", format: "uri", maxLength: 2048, description: "https:// (http:// is accepted in SANDBOX); public hosts only" },
    events: { type: "array", minItems: 1, items: WebhookEventTypeSchema, description: "Each needs its event's read scope in the token" },
  },
};

export const WebhookEndpointSchema: JsonSchema = {
  type: "object",
  required: ["id", "url", "events", "status", "secretPrefix", "lastSuccessAt", "failureCount"],
  properties: {
    id: uuid,
    url: { type: "string", format: "uri" },
    events: { type: "array", items: { type: "string" } },
    status: { type: "string", enum: [...WEBHOOK_ENDPOINT_STATUSES] },
    secretPrefix: { type: "string", description: "First 12 characters of the signing secret" },
    lastSuccessAt: nullable(dateTime),
    failureCount: { type: "integer", minimum: 0, description: "Consecutive failed attempts" },
  },
};

export const WebhookEndpointCreatedSchema: JsonSchema = {
  type: "object",
  required: ["id", "url", "events", "secret", "secretPrefix", "message"],
  properties: {
    id: uuid,
    url: { type: "string" },
    events: { type: "array", items: { type: "string" } },
    secret: { type: "string", description: "whsec_… signing secret; returned only in this response" },
    secretPrefix: { type: "string" },
    message: { type: "string" },
  },
};

export const WebhookSecretRotatedSchema: JsonSchema = {
  type: "object",
  required: ["id", "secret", "secretPrefix", "previousSecretExpiresAt", "message"],
  properties: {
    id: uuid,
    secret: { type: "string", description: "The new signing secret; returned only in this response" },
    secretPrefix: { type: "string" },
    previousSecretExpiresAt: { ...dateTime, description: "Until then deliveries carry a v1 signature for the new and the previous secret" },
    message: { type: "string" },
  },
};

export const WebhookDeliverySchema: JsonSchema = {
  type: "object",
  required: [
    "id",
    "eventId",
    "eventType",
    "tenantId",
    "status",
    "httpStatus",
    "attempts",
    "lastAttemptAt",
    "nextAttemptAt",
    "lastError",
    "requestDurationMs",
    "endpointId",
  ],
  properties: {
    id: uuid,
    eventId: { type: "string", description: "Same on every attempt and replay: deduplicate on it" },
    eventType: { type: "string" },
    tenantId: { type: "string", description: "Store code" },
    status: { type: "string", enum: [...WEBHOOK_DELIVERY_STATUSES] },
    httpStatus: nullable({ type: "integer" }),
    attempts: { type: "integer", minimum: 0 },
    lastAttemptAt: nullable(dateTime),
    nextAttemptAt: nullable(dateTime),
    lastError: nullable({ type: "string" }),
    requestDurationMs: nullable({ type: "integer" }),
    endpointId: { ...uuid, description: "The endpoint the delivery is for (extension to the contract)" },
  },
};

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const createWebhookEndpointInput = defineBody(CreateWebhookEndpointBody);

export const listWebhookDeliveriesInput = defineQuery({
  status: { type: "string", enum: [...WEBHOOK_DELIVERY_STATUSES] },
  endpointId: uuid,
  eventType: { type: "string", enum: [...EVENT_TYPES, TEST_EVENT_TYPE] },
  limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  cursor: { type: "string", description: "X-Next-Cursor of the previous page" },
});

/** A delivery's route parameter, and the `id` argument of its GraphQL fields (reported as `deliveryId`). */
export const deliveryIdPath = definePath({ deliveryId: uuid });

/** What administrators may narrow the webhook lists by (GraphQL only). */
export const adminFilterInput = defineQuery({ storeId: uuid, applicationId: uuid });
