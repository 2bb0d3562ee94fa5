import { EVENT_TYPES } from "../events/types.js";
import type { JsonSchema } from "./route.js";

/** JSON schemas of response bodies: printed into OpenAPI and checked by the contract tests. */

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });
export const uuid: JsonSchema = { type: "string", format: "uuid" };
export const dateTime: JsonSchema = { type: "string", format: "date-time" };
export const money: JsonSchema = { type: "number", multipleOf: 0.01, description: "Amount with at most two decimals" };

export const AddressSchema: JsonSchema = {
  type: "object",
  required: ["street", "number", "neighborhood", "city", "state", "postalCode"],
  properties: {
    street: { type: "string" },
    number: { type: "string" },
    neighborhood: { type: "string" },
    city: { type: "string" },
    state: { type: "string" },
    postalCode: { type: "string" },
    complement: nullable({ type: "string" }),
  },
};

export const StoreSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "slug", "logo", "phone", "isActive"],
  properties: {
    id: uuid,
    code: { type: "string", description: "Alphanumeric store code; equals the token's tenant_id" },
    name: { type: "string" },
    slug: { type: "string" },
    logo: nullable({ type: "string" }),
    phone: nullable({ type: "string" }),
    isActive: { type: "boolean" },
    status: { type: "string", enum: ["OPEN", "CLOSED", "PAUSED"] },
    address: nullable(AddressSchema),
    openingHours: {
      type: "array",
      items: {
        type: "object",
        required: ["dayOfWeek", "opens", "closes"],
        properties: { dayOfWeek: { type: "integer", minimum: 0, maximum: 6 }, opens: { type: "string" }, closes: { type: "string" } },
      },
    },
    publicSettings: { type: "object", additionalProperties: true },
  },
};

export const WebhookEventTypeSchema: JsonSchema = { type: "string", enum: [...EVENT_TYPES], description: "A subscribable event type (SPEC §2.11)" };

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
    status: { type: "string", enum: ["ACTIVE", "INACTIVE", "FAILED"] },
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
  required: ["id", "eventId", "eventType", "tenantId", "status", "httpStatus", "attempts", "lastAttemptAt", "nextAttemptAt", "lastError", "requestDurationMs", "endpointId"],
  properties: {
    id: uuid,
    eventId: { type: "string", description: "Same on every attempt and replay: deduplicate on it" },
    eventType: { type: "string" },
    tenantId: { type: "string", description: "Store code" },
    status: { type: "string", enum: ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"] },
    httpStatus: nullable({ type: "integer" }),
    attempts: { type: "integer", minimum: 0 },
    lastAttemptAt: nullable(dateTime),
    nextAttemptAt: nullable(dateTime),
    lastError: nullable({ type: "string" }),
    requestDurationMs: nullable({ type: "integer" }),
    endpointId: { ...uuid, description: "Extension to SPEC 2.12" },
  },
};
