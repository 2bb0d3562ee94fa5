import { defineRoute } from "../../platform/route.js";
import {
  createWebhookEndpointInput,
  deliveryIdPath,
  listWebhookDeliveriesInput,
  WebhookDeliverySchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointSchema,
  WebhookSecretRotatedSchema,
} from "./schemas.js";
import { idPath } from "../../platform/schemas.js";

/** The published webhook operations and two extensions (rotate-secret, get one delivery); all need `webhooks:manage`. */

const ENDPOINT_FIELDS = "id url events status secretPrefix lastSuccessAt failureCount";
const DELIVERY_FIELDS = "id eventId eventType tenantId status httpStatus attempts lastAttemptAt nextAttemptAt lastError requestDurationMs endpointId";
const DELIVERIES_PATH = "/public/v1/webhooks/deliveries";

type Row = Record<string, unknown>;

const endpointResponse = { description: "The webhook endpoint", schema: WebhookEndpointSchema };
const deliveryResponse = { description: "The webhook delivery", schema: WebhookDeliverySchema };

/** Page links carry the same filters; relative references (RFC 8288 §3.2) resolve against the request URL. */
function nextPageHeaders(query: Record<string, unknown>, nextCursor: string | null): Record<string, string> {
  if (!nextCursor) return {};
  const params = new URLSearchParams();
  for (const name of ["status", "endpointId", "eventType", "limit"]) {
    if (query[name] !== undefined) params.set(name, String(query[name]));
  }
  params.set("cursor", nextCursor);
  return { "x-next-cursor": nextCursor, link: `<${DELIVERIES_PATH}?${params}>; rel="next"` };
}

export const webhookRoutes = [
  defineRoute<{ createWebhookEndpoint: Row }>({
    operationId: "createWebhookEndpoint",
    method: "POST",
    path: "/public/v1/webhooks",
    tag: "Webhooks",
    summary: "Register a webhook endpoint",
    description:
      "The signing secret is returned only here. At most 20 endpoints per application and store; each event type needs its read scope; " +
      "the URL must be https (http is accepted in SANDBOX) and reach a public host.",
    scope: "webhooks:manage",
    body: createWebhookEndpointInput,
    document: `mutation createWebhookEndpoint($input: CreateWebhookEndpointInput!) {
      createWebhookEndpoint(input: $input) { id url events secret secretPrefix message } }`,
    variables: ({ body }) => ({ input: body }),
    respond: (data) => ({ body: data.createWebhookEndpoint }),
    status: 201,
    response: { description: "The endpoint, with its secret (shown once)", schema: WebhookEndpointCreatedSchema },
    errors: [422],
  }),
  defineRoute<{ webhookEndpoints: Row[] }>({
    operationId: "listWebhookEndpoints",
    method: "GET",
    path: "/public/v1/webhooks",
    tag: "Webhooks",
    summary: "List webhook endpoints",
    scope: "webhooks:manage",
    document: `query listWebhookEndpoints { webhookEndpoints { ${ENDPOINT_FIELDS} } }`,
    variables: () => ({}),
    respond: (data) => ({ body: data.webhookEndpoints }),
    status: 200,
    response: { description: "Every endpoint of this application and store, oldest first", schema: { type: "array", items: WebhookEndpointSchema } },
  }),
  defineRoute<{ webhookDeliveries: { data: Row[]; nextCursor: string | null } }>({
    operationId: "listWebhookDeliveries",
    method: "GET",
    path: DELIVERIES_PATH,
    tag: "Webhooks",
    summary: "List recent webhook deliveries",
    description: 'Newest first. The next page\'s cursor is in the X-Next-Cursor and Link (rel="next") headers, both absent on the last page.',
    scope: "webhooks:manage",
    query: listWebhookDeliveriesInput,
    document: `query listWebhookDeliveries($status: WebhookDeliveryStatus, $endpointId: ID, $eventType: String, $limit: Int, $cursor: String) {
      webhookDeliveries(status: $status, endpointId: $endpointId, eventType: $eventType, limit: $limit, cursor: $cursor) {
        data { ${DELIVERY_FIELDS} } nextCursor } }`,
    variables: ({ query }) => ({
      status: query.status ?? null,
      endpointId: query.endpointId ?? null,
      eventType: query.eventType ?? null,
      limit: query.limit ?? null,
      cursor: query.cursor ?? null,
    }),
    respond: (data, { query }) => ({ body: data.webhookDeliveries.data, headers: nextPageHeaders(query, data.webhookDeliveries.nextCursor) }),
    status: 200,
    response: {
      description: "A page of deliveries of this application and store",
      schema: { type: "array", items: WebhookDeliverySchema },
      headers: {
        "X-Next-Cursor": { description: "Cursor of the next page; absent on the last page", schema: { type: "string" } },
        Link: { description: 'RFC 8288 link to the next page with rel="next"; absent on the last page', schema: { type: "string" } },
      },
    },
  }),
  defineRoute<{ webhookDelivery: Row }>({
    operationId: "getWebhookDeliveryById",
    method: "GET",
    path: `${DELIVERIES_PATH}/{deliveryId}`,
    tag: "Webhooks",
    summary: "Get one webhook delivery (extension to the contract)",
    scope: "webhooks:manage",
    pathParams: deliveryIdPath,
    document: `query getWebhookDeliveryById($id: ID!) { webhookDelivery(id: $id) { ${DELIVERY_FIELDS} } }`,
    variables: ({ path }) => ({ id: path.deliveryId }),
    respond: (data) => ({ body: data.webhookDelivery }),
    status: 200,
    response: deliveryResponse,
    errors: [404],
  }),
  defineRoute<{ replayWebhookDelivery: Row }>({
    operationId: "replayWebhookDelivery",
    method: "POST",
    path: `${DELIVERIES_PATH}/{deliveryId}/replay`,
    tag: "Webhooks",
    summary: "Replay a delivery",
    description:
      "Allowed in any status (for example from the dead-letter queue). Queues one attempt now with the same eventId and answers with the delivery in status PENDING; " +
      "success makes it DELIVERED, failure returns a dead letter to DEAD_LETTER and anything else to FAILED, keeping any scheduled retries.",
    scope: "webhooks:manage",
    pathParams: deliveryIdPath,
    document: `mutation replayWebhookDelivery($id: ID!) { replayWebhookDelivery(id: $id) { ${DELIVERY_FIELDS} } }`,
    variables: ({ path }) => ({ id: path.deliveryId }),
    respond: (data) => ({ body: data.replayWebhookDelivery }),
    status: 200,
    response: deliveryResponse,
    errors: [404, 422],
  }),
  defineRoute<{ webhookEndpoint: Row }>({
    operationId: "getWebhookEndpointById",
    method: "GET",
    path: "/public/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Get a webhook endpoint",
    scope: "webhooks:manage",
    pathParams: idPath,
    document: `query getWebhookEndpointById($id: ID!) { webhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.webhookEndpoint }),
    status: 200,
    response: endpointResponse,
    errors: [404],
  }),
  defineRoute<{ deleteWebhookEndpoint: boolean }>({
    operationId: "deleteWebhookEndpoint",
    method: "DELETE",
    path: "/public/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Delete a webhook endpoint",
    description: "Also deletes its delivery history; queued attempts are dropped.",
    scope: "webhooks:manage",
    pathParams: idPath,
    document: `mutation deleteWebhookEndpoint($id: ID!) { deleteWebhookEndpoint(id: $id) }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: () => ({ status: 204 }),
    status: 204,
    response: { description: "Deleted" },
    errors: [404],
  }),
  defineRoute<{ testWebhookEndpoint: Row }>({
    operationId: "testWebhookEndpoint",
    method: "POST",
    path: "/public/v1/webhooks/{id}/test",
    tag: "Webhooks",
    summary: "Send a test event",
    description:
      "Sends a synthetic webhook.test event (data { message }) now and answers once the attempt has ended (bounded by the 5 s receiver timeout) with the resulting delivery.",
    scope: "webhooks:manage",
    pathParams: idPath,
    document: `mutation testWebhookEndpoint($id: ID!) { testWebhookEndpoint(id: $id) { ${DELIVERY_FIELDS} } }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.testWebhookEndpoint }),
    status: 200,
    response: deliveryResponse,
    errors: [404, 422],
  }),
  defineRoute<{ rotateWebhookEndpointSecret: Row }>({
    operationId: "rotateWebhookEndpointSecret",
    method: "POST",
    path: "/public/v1/webhooks/{id}/rotate-secret",
    tag: "Webhooks",
    summary: "Rotate the signing secret (extension to the contract)",
    description:
      "Returns a new secret, shown once. For 24 hours every delivery carries two signatures, t=…,v1=<new>,v1=<old>, so receivers can switch without missing one.",
    scope: "webhooks:manage",
    pathParams: idPath,
    document: `mutation rotateWebhookEndpointSecret($id: ID!) {
      rotateWebhookEndpointSecret(id: $id) { id secret secretPrefix previousSecretExpiresAt message } }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.rotateWebhookEndpointSecret }),
    status: 200,
    response: { description: "The new secret (shown once)", schema: WebhookSecretRotatedSchema },
    errors: [404],
  }),
];
