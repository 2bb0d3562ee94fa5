import { API_VERSIONS } from "../../platform/versions.js";
import type { JsonSchema } from "../../platform/json.js";
import { dateTime, nullable, uuid } from "../../platform/schemas.js";
import { defineQuery } from "../../platform/validate.js";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../events/types.js";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_SWITCHES } from "./statuses.js";
import { MAX_DRILL_SECONDS } from "./drill.js";
import { DESTINATION_TYPES } from "./destinations/types.js";

/** Subscribing to "*" (alone) is every type the Application's scopes allow when an event is delivered. */
export const ALL_EVENTS = "*";

export const WebhookEventTypeSchema: JsonSchema = {
  type: "string",
  enum: [...EVENT_TYPES, ALL_EVENTS],
  description:
    'A subscribable event type. Extension to the contract: "*", alone, subscribes to every event type the Application\'s scopes allow ' +
    "when the event is delivered, the operational webhook.* events included, webhook.test excepted.",
};

const webhookUrl: JsonSchema = {
  type: "string",
  format: "uri",
  maxLength: 2048,
  description:
    "https:// (http:// is accepted in SANDBOX); public hosts only. Required for an http endpoint. Extension to the contract: for rabbitmq the " +
    "broker's amqp:// or amqps:// URL, for mqtt its mqtt:// or mqtts:// URL, credentials included (user:password@; stored encrypted, shown masked)",
};

const brokerTemplate = (what: string): JsonSchema => ({
  type: "string",
  minLength: 1,
  maxLength: 255,
  description: `Extension to the contract: ${what}; {storeCode} and {eventType} are replaced by the event's store code and type`,
});

/**
 * The destination of an endpoint beside its url (extension to the contract): its type and each broker type's fields.
 * Which fields a type takes, and which it needs, the type's own check says (400 naming the field): see
 * src/modules/webhooks/destinations/.
 */
const destinationFields = {
  type: {
    type: "string",
    enum: [...DESTINATION_TYPES],
    description:
      "Extension to the contract: where deliveries go: http (the default: a POST to url), rabbitmq (url, exchange, routingKey), nats (JetStream: " +
      "servers, subject), mqtt (url, topic; MQTT 5, QoS 1), gcp_pubsub (projectId, topic, apiEndpoint or credentials) or aws_sqs (queueUrl, " +
      "region, credentials, endpoint). A broker receives the same body with the signature headers as message headers (MQTT user properties, " +
      "Pub/Sub and SQS attributes); an attempt succeeds when the broker confirms it",
  },
  ordering: nullable({
    type: "string",
    enum: ["store"],
    description:
      "Extension to the contract: store: the store's events reach the endpoint one at a time in sequence order, each waiting until the one " +
      "before it was delivered or dead-lettered; null (the default): in any order",
  }),
  exchange: { type: "string", maxLength: 255, description: 'Extension to the contract: rabbitmq: the exchange published to ("" is the default exchange)' },
  routingKey: brokerTemplate("rabbitmq: the routing key"),
  servers: {
    type: "array",
    minItems: 1,
    maxItems: 10,
    items: { type: "string", format: "uri", maxLength: 2048 },
    description: "Extension to the contract: nats: the servers' nats:// URLs, credentials included (user:password@ or token@; stored encrypted, shown masked)",
  },
  subject: brokerTemplate("nats: the subject published to (a JetStream stream must capture it)"),
  topic: brokerTemplate("mqtt: the topic published to; gcp_pubsub: the topic's name"),
  projectId: { type: "string", maxLength: 100, description: "Extension to the contract: gcp_pubsub: the Google Cloud project of the topic" },
  apiEndpoint: {
    type: "string",
    maxLength: 300,
    description: "Extension to the contract: gcp_pubsub: host:port of a Pub/Sub emulator (then no credentials are needed)",
  },
  queueUrl: {
    type: "string",
    format: "uri",
    maxLength: 2048,
    description: "Extension to the contract: aws_sqs: the queue's URL (a .fifo queue is sent in order per store)",
  },
  region: { type: "string", maxLength: 50, description: "Extension to the contract: aws_sqs: the queue's AWS region" },
  endpoint: { type: "string", format: "uri", maxLength: 2048, description: "Extension to the contract: aws_sqs: another SQS-compatible service's URL" },
  credentials: {
    type: "object",
    additionalProperties: false,
    description:
      "Extension to the contract: aws_sqs: { accessKeyId, secretAccessKey }; gcp_pubsub: a service account's { clientEmail, privateKey }. Stored encrypted, shown masked",
    properties: {
      accessKeyId: { type: "string", maxLength: 128 },
      secretAccessKey: { type: "string", maxLength: 256 },
      clientEmail: { type: "string", maxLength: 320 },
      privateKey: { type: "string", maxLength: 16384 },
    },
  },
} satisfies Record<string, JsonSchema>;

const webhookEvents: JsonSchema = { type: "array", minItems: 1, items: WebhookEventTypeSchema, description: "Each needs its event's read scope in the token" };

/** The most deliveries per second an endpoint may ask for (and WEBHOOK_ENDPOINT_RATE may default to). */
export const MAX_ENDPOINT_RATE = 10_000;

const endpointRateLimit: JsonSchema = {
  type: "integer",
  minimum: 1,
  maximum: MAX_ENDPOINT_RATE,
  description:
    "Extension to the contract: deliveries per second the endpoint receives at most (default 50). Deliveries over it wait for their turn: they never fail for it.",
};

/** Checked against the known versions by the operation (400 INVALID_API_VERSION), like the Api-Version header. */
const endpointApiVersion: JsonSchema = {
  type: "string",
  minLength: 1,
  description: `Extension to the contract: the API version deliveries are rendered in (${API_VERSIONS.join(", ")}); default the Application's.`,
};

export const CreateWebhookEndpointBody: JsonSchema = {
  type: "object",
  required: ["events"],
  additionalProperties: false,
  properties: { url: webhookUrl, events: webhookEvents, rateLimit: endpointRateLimit, apiVersion: endpointApiVersion, ...destinationFields },
};

const drillSeconds = (what: string): JsonSchema => ({ type: "integer", minimum: 0, maximum: MAX_DRILL_SECONDS, default: 0, description: what });

/** A fault drill as PATCH takes it: each field optional (0 when left out), at least one above 0. */
export const WebhookDrillBody: JsonSchema = {
  type: "object",
  minProperties: 1,
  additionalProperties: false,
  description:
    "Extension to the contract: a fault drill, for SANDBOX endpoints only (a PRODUCTION endpoint answers 422). Each field is optional " +
    "(0 when left out) and at least one must be above 0. While it runs, every new event's delivery to the endpoint is held a random time " +
    "within reorderWindowSeconds (so later events overtake earlier ones; its first attempt is marked reordered) plus up to maxDelaySeconds " +
    "(marked delayed when there is no reorder window), and at duplicateRate sent a second time with the same eventId and webhook-id, signed " +
    "again (marked duplicate). Deliveries stay at least once and at the endpoint's pace; a drilled attempt never counts against the " +
    "endpoint's health. null ends the drill.",
  example: { duplicateRate: 0.2, reorderWindowSeconds: 10, maxDelaySeconds: 30 },
  properties: {
    duplicateRate: {
      type: "number",
      minimum: 0,
      maximum: 1,
      default: 0,
      description: "Share of deliveries sent twice, from 0 to 1 (1: every one)",
    },
    reorderWindowSeconds: drillSeconds("Seconds within which deliveries are released out of order, 0 to 300"),
    maxDelaySeconds: drillSeconds("Seconds a delivery may be held back at most, 0 to 300"),
  },
};

export const UpdateWebhookEndpointBody: JsonSchema = {
  type: "object",
  minProperties: 1,
  additionalProperties: false,
  description:
    "Extension to the contract. Any of url, events, status, rateLimit, apiVersion, drill, ordering, and the destination's type and fields (a new " +
    "type needs all of its fields; fields alone change the current type's, credentials replaced when given); the secret, the history and the delivery log are kept.",
  properties: {
    ...destinationFields,
    url: webhookUrl,
    events: webhookEvents,
    rateLimit: endpointRateLimit,
    apiVersion: endpointApiVersion,
    status: {
      type: "string",
      enum: [...WEBHOOK_ENDPOINT_SWITCHES],
      description:
        "INACTIVE stops deliveries (pending retries end); ACTIVE resumes an INACTIVE endpoint (a FAILED one stays FAILED until a success), " +
        "except one an administrator set INACTIVE: that is 403 FORBIDDEN until an administrator sets it ACTIVE",
    },
    drill: nullable(WebhookDrillBody),
  },
};

export const RecoverWebhookDeliveriesBody: JsonSchema = {
  type: "object",
  required: ["since"],
  additionalProperties: false,
  description: "Extension to the contract. The window of delivery creation times: since inclusive, until exclusive (default now).",
  properties: { since: dateTime, until: dateTime },
};

export const BackfillWebhookEndpointBody: JsonSchema = {
  type: "object",
  required: ["afterSequence"],
  additionalProperties: false,
  description: "Extension to the contract. Where the backfill starts: the events after this sequence.",
  properties: {
    afterSequence: {
      type: "integer",
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Send the subscribed events whose sequence is above this one (0: from the first event kept); at most the store's latest sequence",
    },
  },
};

/** The deliveries list's arguments, by name: the GraphQL fields check them, GET .../deliveries takes them as its query, the admin CLI its flags. */
export const DELIVERY_LIST_ARGS = {
  status: { type: "string", enum: [...WEBHOOK_DELIVERY_STATUSES] },
  endpointId: uuid,
  eventType: { type: "string", enum: [...EVENT_TYPES, TEST_EVENT_TYPE] },
  limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  cursor: { type: "string", description: "X-Next-Cursor of the previous page" },
} satisfies Record<string, JsonSchema>;

/** What administrators may narrow the webhook lists by (GraphQL only). */
export const adminFilterInput = defineQuery({ storeId: uuid, applicationId: uuid });
