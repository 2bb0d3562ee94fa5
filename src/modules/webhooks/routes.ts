import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";

/**
 * The published webhook operations and the extensions, marked "(extension to the contract)": get one delivery and its
 * attempts, change an endpoint, recover its deliveries, rotate its secret. All need `webhooks:manage`.
 */

const WebhookEndpointFragment = graphql(
  `fragment WebhookEndpoint on WebhookEndpoint { id url events status secretPrefix lastSuccessAt failureCount disabledReason rateLimit apiVersion
    type ordering destination
    deliveriesLast24h { delivered failed pending successRate }
    drill { duplicateRate reorderWindowSeconds maxDelaySeconds } }`,
);

const WebhookAttemptFragment = graphql(`fragment WebhookAttempt on WebhookAttempt {
  attempt: number trigger startedAt durationMs httpStatus error requestHeaders responseBody: responseExcerpt
  drill }`);

const WebhookDeliveryFragment = graphql(`fragment WebhookDelivery on WebhookDelivery {
  id eventId eventType tenantId status httpStatus attempts lastAttemptAt nextAttemptAt lastError requestDurationMs endpointId }`);

const WebhookEndpointCreatedFragment = graphql(
  `fragment WebhookEndpointCreated on CreatedWebhookEndpoint { id url events rateLimit apiVersion type ordering destination secret secretPrefix message }`,
);

const WebhookSecretRotatedFragment = graphql(
  `fragment WebhookSecretRotated on RotatedWebhookSecret { id secret secretPrefix previousSecretExpiresAt message }`,
);

const DELIVERIES_PATH = "/public/v1/webhooks/deliveries";

const endpointResponse = { description: "The webhook endpoint" };
const deliveryResponse = { description: "The webhook delivery" };

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
  defineRoute({
    operationId: "createWebhookEndpoint",
    method: "POST",
    path: "/public/v1/webhooks",
    tag: "Webhooks",
    summary: "Register a webhook endpoint",
    description:
      "The signing secret is returned only here. At most 20 endpoints per application and store; each event type needs its read scope; " +
      "the URL must be https (http is accepted in SANDBOX) and reach a public host. Extension to the contract: type rabbitmq, nats, mqtt, " +
      "gcp_pubsub or aws_sqs (with that type's fields) publishes each delivery to a message broker instead, the signature headers as message " +
      "headers or attributes, an attempt succeeding when the broker confirms it; broker credentials are stored encrypted and shown masked; " +
      'ordering "store" sends the store\'s events one at a time in sequence order.',
    document: graphql(
      `mutation createWebhookEndpoint($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ...WebhookEndpointCreated } }`,
      [WebhookEndpointCreatedFragment],
    ),
    respond: (data) => ({ body: data.createWebhookEndpoint }),
    status: 201,
    response: { description: "The endpoint, with its secret (shown once)" },
    errors: [422],
  }),
  defineRoute({
    operationId: "listWebhookEndpoints",
    method: "GET",
    path: "/public/v1/webhooks",
    tag: "Webhooks",
    summary: "List webhook endpoints",
    document: graphql(
      `query listWebhookEndpoints($limit: Int, $cursor: String) {
        webhookEndpointPage(limit: $limit, cursor: $cursor) { data { ...WebhookEndpoint } pagination { ...Pagination } } }`,
      [WebhookEndpointFragment, PaginationFragment],
    ),
    respond: (data) => ({ body: data.webhookEndpointPage }),
    status: 200,
    response: { description: "A page of the endpoints of this application and store, oldest first", component: "WebhookEndpointList" },
  }),
  defineRoute({
    operationId: "listWebhookDeliveries",
    method: "GET",
    path: DELIVERIES_PATH,
    tag: "Webhooks",
    summary: "List recent webhook deliveries",
    description: 'Newest first. The next page\'s cursor is in the X-Next-Cursor and Link (rel="next") headers, both absent on the last page.',
    document: graphql(
      `query listWebhookDeliveries($status: WebhookDeliveryStatus, $endpointId: ID, $eventType: String, $limit: Int, $cursor: String) {
        webhookDeliveries(status: $status, endpointId: $endpointId, eventType: $eventType, limit: $limit, cursor: $cursor) {
          data { ...WebhookDelivery } pagination { ...Pagination } } }`,
      [WebhookDeliveryFragment, PaginationFragment],
    ),
    respond: (data, { query }) => ({ body: data.webhookDeliveries, headers: nextPageHeaders(query, data.webhookDeliveries.pagination.nextCursor) }),
    status: 200,
    response: {
      description: "A page of deliveries of this application and store",
      component: "WebhookDeliveryPage",
      headers: {
        "X-Next-Cursor": { description: "Cursor of the next page; absent on the last page", schema: { type: "string" } },
        Link: { description: 'RFC 8288 link to the next page with rel="next"; absent on the last page', schema: { type: "string" } },
      },
    },
  }),
  defineRoute({
    operationId: "getWebhookDeliveryById",
    method: "GET",
    path: `${DELIVERIES_PATH}/{deliveryId}`,
    tag: "Webhooks",
    summary: "Get one webhook delivery (extension to the contract)",
    description: "With `payload`, the envelope sent (the same on every attempt).",
    document: graphql(`query getWebhookDeliveryById($id: ID!) { webhookDelivery(id: $id) { ...WebhookDelivery payload } }`, [WebhookDeliveryFragment]),
    bind: { rename: { deliveryId: "id" } },
    respond: (data) => ({ body: data.webhookDelivery }),
    status: 200,
    response: { ...deliveryResponse, component: "WebhookDeliveryDetail" },
    errors: [404],
  }),
  defineRoute({
    operationId: "listWebhookDeliveryAttempts",
    method: "GET",
    path: `${DELIVERIES_PATH}/{deliveryId}/attempts`,
    tag: "Webhooks",
    summary: "List a delivery's attempts (extension to the contract)",
    description:
      "Oldest first: each attempt's number, trigger (SCHEDULED, REPLAY, RECOVER, TEST or BACKFILL), start, duration, HTTP status, error, the headers sent " +
      "and up to 4 KiB of the receiver's response body; drill (extension to the contract): duplicate, delayed or reordered when the endpoint's " +
      "fault drill sent or held it, otherwise null.",
    document: graphql(`query listWebhookDeliveryAttempts($id: ID!) { webhookDelivery(id: $id) { attemptLog { ...WebhookAttempt } } }`, [
      WebhookAttemptFragment,
    ]),
    bind: { rename: { deliveryId: "id" } },
    respond: (data) => ({ body: { data: data.webhookDelivery.attemptLog } }),
    status: 200,
    response: {
      description: "The delivery's attempts, oldest first",
      component: "WebhookAttemptList",
      body: (at) => ({ type: "object", required: ["data"], properties: { data: at("webhookDelivery", "attemptLog") } }),
    },
    errors: [404],
  }),
  defineRoute({
    operationId: "replayWebhookDelivery",
    method: "POST",
    path: `${DELIVERIES_PATH}/{deliveryId}/replay`,
    tag: "Webhooks",
    summary: "Replay a delivery",
    description:
      "Allowed in any status (for example from the dead-letter queue). Queues one attempt now with the same eventId and answers with the delivery in status PENDING; " +
      "success makes it DELIVERED, failure returns a dead letter to DEAD_LETTER and anything else to FAILED, keeping any scheduled retries.",
    document: graphql(`mutation replayWebhookDelivery($id: ID!) { replayWebhookDelivery(id: $id) { ...WebhookDelivery } }`, [WebhookDeliveryFragment]),
    bind: { rename: { deliveryId: "id" } },
    respond: (data) => ({ body: data.replayWebhookDelivery }),
    status: 200,
    response: deliveryResponse,
    errors: [404, 422],
  }),
  defineRoute({
    operationId: "getWebhookEndpointById",
    method: "GET",
    path: "/public/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Get a webhook endpoint",
    document: graphql(`query getWebhookEndpointById($id: ID!) { webhookEndpoint(id: $id) { ...WebhookEndpoint } }`, [WebhookEndpointFragment]),
    respond: (data) => ({ body: data.webhookEndpoint }),
    status: 200,
    response: endpointResponse,
    errors: [404],
  }),
  defineRoute({
    operationId: "updateWebhookEndpoint",
    method: "PATCH",
    path: "/public/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Change a webhook endpoint (extension to the contract)",
    description:
      'Any of url (checked as on registration), events (or ["*"]: every type the Application\'s scopes allow when an event is delivered, ' +
      "webhook.test excepted) and status: INACTIVE stops deliveries, ACTIVE resumes an INACTIVE endpoint (then recover what it missed), " +
      "unless an administrator set it INACTIVE: then ACTIVE is 403 FORBIDDEN until an administrator re-enables it (url and events still change). " +
      "The secret, the history and the delivery log are kept. Extension to the contract: drill { duplicateRate, reorderWindowSeconds, " +
      "maxDelaySeconds } starts a fault drill on a SANDBOX endpoint (each field optional, 0 when left out, at least one above 0; a PRODUCTION " +
      "endpoint is 422 and nothing changes): new events' deliveries are held and released out of order within the window, delayed up to the " +
      "maximum, and sent twice at the rate (same eventId and webhook-id, each signed), every such attempt marked in the attempt log; drill: null ends it.",
    document: graphql(
      `mutation updateWebhookEndpoint($id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { ...WebhookEndpoint } }`,
      [WebhookEndpointFragment],
    ),
    respond: (data) => ({ body: data.updateWebhookEndpoint }),
    status: 200,
    response: endpointResponse,
    errors: [404, 422],
  }),
  defineRoute({
    operationId: "recoverWebhookDeliveries",
    method: "POST",
    path: "/public/v1/webhooks/{id}/recover",
    tag: "Webhooks",
    summary: "Recover failed deliveries (extension to the contract)",
    description:
      "Sends again the FAILED and DEAD_LETTER deliveries of the endpoint created from since (inclusive) to until (exclusive; default now), as RECOVER " +
      "attempts with the same eventId; scheduled retries of a FAILED delivery stay, and a success ends them. One call queues at most 100 " +
      "(WEBHOOK_RECOVER_MAX) and answers how many (count) and whether more are left (hasMore, extension to the contract): call again with the " +
      "same body for the next ones (each call continues after the previous one's, so calling again always makes progress; once the window is done " +
      "the next call starts over). Deliveries whose event is past retention are passed over and counted (expired, extension to the contract); " +
      "when nothing else is left in the window it is 422 EVENT_EXPIRED. They are sent at the endpoint's pace; while the endpoint has 100 " +
      "(WEBHOOK_RECOVER_MAX) deliveries waiting to be sent, a call queues nothing and is 429 with Retry-After, the seconds its pace needs for " +
      "them (a call queues only what room is left). 422 when the endpoint is INACTIVE.",
    document: graphql(
      `mutation recoverWebhookDeliveries($id: ID!, $since: DateTime!, $until: DateTime) { recoverWebhookDeliveries(id: $id, since: $since, until: $until) { count hasMore expired } }`,
    ),
    respond: (data) => ({ status: 202, body: data.recoverWebhookDeliveries }),
    status: 202,
    response: { description: "How many deliveries this call queued, and whether more are left", component: "WebhookRecovery" },
    errors: [404, 422],
  }),
  defineRoute({
    operationId: "backfillWebhookEndpoint",
    method: "POST",
    path: "/public/v1/webhooks/{id}/backfill",
    tag: "Webhooks",
    summary: "Backfill an endpoint with past events (extension to the contract)",
    description:
      "Sends the endpoint the store's events after afterSequence that it subscribes to (its event types, as its Application's scopes allow), " +
      "delivered to it before or not, as long as they are within retention (EVENT_RETENTION_DAYS), in sequence order, as BACKFILL attempts " +
      "with the events' own eventIds: a new endpoint gets the history it missed. One call queues at most 100 (WEBHOOK_RECOVER_MAX) and " +
      "answers how many (count), whether more follow (hasMore) and where the next call starts (nextAfterSequence). They are sent at the " +
      "endpoint's pace; while the endpoint has 100 (WEBHOOK_RECOVER_MAX) deliveries waiting to be sent, a call queues nothing and is 429 " +
      "with Retry-After (a call queues only what room is left). 400 when afterSequence is past the store's latest event; 422 when the " +
      "endpoint is INACTIVE.",
    document: graphql(
      `mutation backfillWebhookEndpoint($id: ID!, $afterSequence: SafeInt!) { backfillWebhookEndpoint(id: $id, afterSequence: $afterSequence) { count hasMore nextAfterSequence } }`,
    ),
    respond: (data) => ({ status: 202, body: data.backfillWebhookEndpoint }),
    status: 202,
    response: { description: "How many events this call queued, whether more follow and where the next call starts", component: "WebhookBackfill" },
    errors: [404, 422],
  }),
  defineRoute({
    operationId: "deleteWebhookEndpoint",
    method: "DELETE",
    path: "/public/v1/webhooks/{id}",
    tag: "Webhooks",
    summary: "Delete a webhook endpoint",
    description: "Also deletes its delivery history; queued attempts are dropped.",
    document: graphql(`mutation deleteWebhookEndpoint($id: ID!) { deleteWebhookEndpoint(id: $id) }`),
    respond: () => ({ status: 204 }),
    status: 204,
    response: { description: "Deleted" },
    errors: [404],
  }),
  defineRoute({
    operationId: "testWebhookEndpoint",
    method: "POST",
    path: "/public/v1/webhooks/{id}/test",
    tag: "Webhooks",
    summary: "Send a test event",
    description:
      "Sends a synthetic webhook.test event (data { message }) now and answers once the attempt has ended (bounded by the 5 s receiver timeout) with the resulting delivery. " +
      "An Application has at most 2 tests (WEBHOOK_TEST_CONCURRENCY) in flight; one more is 429 RATE_LIMIT_EXCEEDED with Retry-After and sends nothing.",
    document: graphql(`mutation testWebhookEndpoint($id: ID!) { testWebhookEndpoint(id: $id) { ...WebhookDelivery } }`, [WebhookDeliveryFragment]),
    respond: (data) => ({ body: data.testWebhookEndpoint }),
    status: 200,
    response: deliveryResponse,
    errors: [404, 422],
  }),
  defineRoute({
    operationId: "rotateWebhookEndpointSecret",
    method: "POST",
    path: "/public/v1/webhooks/{id}/rotate-secret",
    tag: "Webhooks",
    summary: "Rotate the signing secret (extension to the contract)",
    description:
      "Returns a new secret, shown once. For 24 hours every delivery carries two signatures, t=…,v1=<new>,v1=<old>, so receivers can switch without missing one.",
    document: graphql(`mutation rotateWebhookEndpointSecret($id: ID!) { rotateWebhookEndpointSecret(id: $id) { ...WebhookSecretRotated } }`, [
      WebhookSecretRotatedFragment,
    ]),
    respond: (data) => ({ body: data.rotateWebhookEndpointSecret }),
    status: 200,
    response: { description: "The new secret (shown once)" },
    errors: [404],
  }),
];
