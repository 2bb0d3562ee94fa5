import { MAX_AMOUNT, MAX_YEAR, MIN_YEAR } from "../platform/input.js";

/**
 * The prose of the OpenAPI document: what a partner reads first in the reference page. Every product choice
 * that shapes the wire contract (docs/decisions.md) is stated here, so the published document carries them.
 */

export const API_TITLE = "Partner Platform API";

/** Who partners write to; the document adds the reference page's address (\`<base_url>/docs\`) as its url. */
export const API_CONTACT = { name: "Partner support (quote the X-Request-Id or traceId of the call)" };

export const API_SUMMARY = "Read a store's orders, customers and catalog, move orders through their lifecycle and receive signed webhooks.";

export const API_DESCRIPTION = `
The partner-facing API of a multi-tenant food-service platform. Approved partners (ERPs, point-of-sale,
CRM and logistics systems) exchange client credentials for a short-lived token and call the
\`/public/v1\` routes below. This document is generated from the service's route table; the service
validates requests with the same JSON schemas, so a request this document calls invalid is answered
400 \`INVALID_REQUEST\`.

## Access tokens

OAuth 2.0 client credentials: \`POST /partner/auth/token\` with \`grant_type=client_credentials\`, the
\`client_id\` and the \`client_secret\` (JSON body, form body, or HTTP Basic client authentication), then
\`Authorization: Bearer <access_token>\` on every other call. Tokens live 3600 s; cache a token and renew it
about 5 minutes before it expires. The token alone decides which store (tenant) a request sees: a store
id is never sent in a URL. Tokens are EdDSA JWTs with a \`kid\`; the public keys are at
\`GET /.well-known/jwks.json\`.

## Environments

SANDBOX and PRODUCTION are isolated by credentials, not by address: both servers below are the same
service, and sandbox credentials only ever reach SANDBOX stores (the store's own environment is checked,
not only the token claim). \`/public/v1/sandbox/*\` answers PRODUCTION tokens with 403 \`FORBIDDEN\`.

## Versions

Versions are dates. Each Application is pinned to one (\`GET /public/v1/application\`; new Applications get the
latest), and every response once the token is admitted, errors and 429s included, names the version it was answered
in with \`Api-Version\`. Send \`Api-Version: <version>\` on a request to have it answered in another version (an
unknown one is 400 \`INVALID_API_VERSION\`); pin the Application to it with \`PATCH /public/v1/application\` once your
code reads it. Webhook endpoints deliver in their own \`apiVersion\`. \`GET /public/v1/versions\` lists the versions
and what each changed; a deprecated version's responses carry \`Deprecation\`, \`Sunset\` once one is set, and
\`Link: <…/public/v1/versions>; rel="deprecation"\`. This document describes the version in \`info.version\`, and its
\`Api-Version\` parameter takes that version alone; \`GET /public/v1/openapi.json?version=<version>\` serves any other.

## Errors

Every error is \`application/problem+json\` (RFC 9457, schema \`ProblemDetails\`) with a machine
\`code\` from the \`ErrorCode\` list, \`retryable\`, the \`requestId\` and \`traceId\` to quote to support,
and \`errors[]\` listing each violation as \`{ field, code, message }\`: the field named as it was sent
(\`items[3].quantity\`), the message stating the rule in words ("\`items[3].quantity\` must be at most 999"), and,
for a value outside an enumeration, \`allowed\` listing the values it takes (extension to the contract). Every 401
carries \`WWW-Authenticate\`: \`Bearer\` when no token was sent, \`Bearer error="invalid_token"\` when the token was
refused, \`Basic realm="partner-api"\` at the token endpoint, whose errors also carry OAuth 2.0's \`error\`
(extension to the contract).

## Decisions

The rules below are part of this contract. Where it was published in more than one form, the service serves
one name per concept (\`orderNumber\` and \`total\` for orders, \`nextCursor\` for pages); where it left a point open, these rules settle it.

- **Order fields.** An order carries \`id\` (uuid), \`orderNumber\` (integer 1042, a per-store sequence) and
  \`total\`; plus \`type\`, \`subtotal\`, \`deliveryFee\`, \`discount\`,
  \`customer\`, \`deliveryAddress\`, \`items[]\`, \`payments[]\`, \`createdAt\`, \`updatedAt\`. The detail adds
  \`statusHistory[]\` (\`status\`, \`at\`, \`reason\`), \`scheduledFor\`, \`notes\` and \`cancellationReason\`.
- **Pagination.** \`pagination\` has \`hasMore\` and \`nextCursor\`:
  the id of the last returned item, and null when \`hasMore\` is false. Pass it back as \`cursor\`.
- **Default \`limit\` is 20.** \`limit\` must be an integer in 1..100; anything else is 400
  \`INVALID_REQUEST\` (never silently clamped).
- **\`token_type\` is \`Bearer\`.** The Authorization scheme is matched case-insensitively (RFC 6750).
- **401 and 403 codes.** 401 \`UNAUTHORIZED\` when no token is sent; 401 \`INVALID_TOKEN\` when it is
  malformed, expired, wrongly signed or has an unknown \`kid\`; 403 \`INSUFFICIENT_SCOPE\` when the route's
  scope is missing (the detail names it); 403 \`FORBIDDEN\` when the Grant is revoked (visible within
  seconds, before the token expires), the Application is disabled, or the environment does not allow
  the route. The token endpoint answers bad credentials with 401 \`INVALID_CLIENT\`.
- **PREPARING is part of the lifecycle.** PENDING → CONFIRMED → (PREPARING) → READY → DISPATCHED →
  DELIVERED for DELIVERY orders; PICKUP orders go READY → DELIVERED. Any non-terminal status → CANCELLED
  with a required \`reason\`. DELIVERED and CANCELLED are terminal. Any other move, including setting the
  current status again, is 422 with \`errors: [{ "field": "status", "code": "INVALID_TRANSITION", "from",
  "to" }]\`. The list filter accepts all seven statuses; \`order.preparing\` is emitted on CONFIRMED →
  PREPARING, and reaching DELIVERED emits \`order.delivered\` then \`order.completed\`.
- **Error shapes.** Problem \`type\` is \`<base_url>/errors/<CODE>\`. Unknown routes are 404 \`NOT_FOUND\`,
  wrong methods 405 with \`Allow\`. A malformed uuid in a path is 400; a well-formed id that does not
  exist, or belongs to another store, is 404. Bodies over 1 MiB are 413 \`PAYLOAD_TOO_LARGE\`; a body that
  is not \`application/json\` (curl's default form type included) is 415 \`UNSUPPORTED_MEDIA_TYPE\`; invalid
  JSON, and JSON nesting arrays and objects deeper than 32 levels (\`JSON_MAX_DEPTH\`), is 400. \`X-Request-Id\` is accepted when it is a uuid, generated otherwise, and echoed on every
  response. Money is a JSON number with at most two decimals; times are ISO 8601 UTC with milliseconds.
- **Input the service cannot store.** Every query parameter is single-valued (a list is one
  comma-separated value): a parameter given twice is 400 naming it. Strings may not contain NUL characters
  or unpaired UTF-16 surrogates, and times must fall in years ${MIN_YEAR} to ${MAX_YEAR} (400 naming the field). An amount
  is at most ${MAX_AMOUNT} (400); an order whose total would exceed it is 422 naming the quantity of the item
  that crossed it. A malformed percent-escape in HTTP Basic credentials is 401 \`INVALID_CLIENT\`.
- **Token requests.** JSON and \`application/x-www-form-urlencoded\` bodies and HTTP Basic client
  authentication are accepted. An Application granted on several stores must add \`tenant_id\` (the store
  code; otherwise 400); a \`tenant_id\` without an active Grant, or no Grant at all, is 403 \`FORBIDDEN\`.
  \`scope\` (space-separated) narrows the token to those of the Application's scopes; one it is not granted is
  400 with \`error\` \`invalid_scope\`. Errors carry OAuth 2.0's \`error\` (\`invalid_request\`,
  \`invalid_client\`, \`unsupported_grant_type\`, \`invalid_scope\`, …) beside \`code\` (extensions to the contract).
- **Idempotency.** Every POST, PUT and PATCH accepts \`Idempotency-Key\` (1..255 visible ASCII characters,
  a UUID v4 recommended; otherwise 400). Keys are scoped to (Application, store); the fingerprint is
  method + path + canonical JSON body. The same key with the same request returns the recorded status,
  headers and body with \`Idempotent-Replayed: true\` and runs nothing again; the same key with another
  request is 409 \`IDEMPOTENCY_CONFLICT\`. A duplicate arriving while the first still runs waits for it and
  then replays. Responses of requests that never ran (401, 403, 429, 5xx) are not recorded. Keys expire
  after 24 hours.
- **Write receipts** (extension to the contract). A write that committed events answers \`Event-Ids\` (their
  ids, comma-separated in \`sequence\` order) and \`Event-Sequence\` (the highest): read the feed with
  \`after\` = \`Event-Sequence\` − 1 to see the change, or match the webhooks it causes by \`eventId\`. A
  write that emitted nothing sends neither; a replay answers the recorded ones.
- **Webhooks.** Endpoints belong to (Application, store), at most 20 per pair. Subscribing to an event needs
  the event's scope (\`x-required-scope\` on each webhook below). URLs must be \`https\` for PRODUCTION
  (\`http\` is allowed in SANDBOX) and may not resolve to loopback, private, link-local or metadata
  addresses. The secret (\`whsec_…\`) is returned only at creation. Each delivery is a POST of the event
  envelope signed with \`X-Service-Signature: t=<unix>,v1=<hex>\`, the HMAC-SHA256 of \`<t>.<raw body>\`
  with the endpoint secret; reject timestamps more than 300 s away and compare in constant time. Any 2xx
  within 5 s is success; redirects are not followed. Failed attempts are retried after 1m, 2m, 5m, 15m,
  30m, 1h, 2h, 4h, 8h and 16h (10 attempts), then the delivery is DEAD_LETTER and the endpoint FAILED
  until its next success. Delivery is at-least-once: deduplicate on \`eventId\`, which stays the same on
  every attempt and replay. *(Extension to the contract)* An endpoint receives at most its \`rateLimit\`
  deliveries per second (default 50, 1 to 10000, set on registration or PATCH); deliveries over it wait for
  their turn and never fail for it. \`GET /public/v1/webhooks\` and \`GET /public/v1/webhooks/deliveries\` answer
  \`{ data, pagination }\` like every other list; the deliveries' next cursor also travels in \`X-Next-Cursor\` and \`Link: <…>; rel="next"\`.
  \`catalog.updated\` is aggregated over a 5 s window into one event per item and action.
- **Rate limits.** Per store and per Application, by environment, over a sliding one-minute window:
  SANDBOX 100/min per store and 500/min per Application; PRODUCTION 600/min per store and 3000/min per
  Application. Every authenticated response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` (of the
  tighter limit) and \`X-RateLimit-Reset\` (Unix seconds when a slot frees); 429 \`RATE_LIMIT_EXCEEDED\`
  adds \`Retry-After\` (seconds). The token endpoint has its own limits, per \`client_id\` and source address
  and on failed requests per source address, and does not count toward the API limits. *(Extension to the
  contract)* Requests may be sent in parallel: within the limits, a server with room answers them all. When
  requests must wait for one, the next turn goes to the Application with the fewest requests running; an
  Application with as many requests waiting on one server as it may (\`HTTP_MAX_QUEUED_PER_APPLICATION\`) gets
  429 \`CONCURRENCY_LIMIT_EXCEEDED\` with \`Retry-After\`, which counts against no limit.
- **Overload.** Past capacity, or while the database or the rate-limit counters cannot serve, a request is answered 503
  \`SERVICE_UNAVAILABLE\` with \`Retry-After\` (seconds): retry after it, a write with the same
  \`Idempotency-Key\`, so one that completed after all is replayed rather than repeated. On \`/graphql\` such a
  failure inside an operation is an error with \`extensions.code\` \`SERVICE_UNAVAILABLE\`, and the response
  carries \`Retry-After\`.
- **Bulk export** (extension to the contract). \`POST /public/v1/exports\` \`{ resource, updatedSince? }\` writes
  the store's orders, customers or products as gzip-compressed JSON Lines, each line as its GET-by-id route answers
  it in the request's version, from one snapshot whose event sequence is \`sequence\`: load the file, then read the
  feed with \`after\` = \`sequence\`, and nothing is missed or repeated.
- **Sandbox.** \`POST /public/v1/sandbox/seed\` fills the token's own sandbox store with a deterministic
  fake catalog and customers (calling it again duplicates nothing). \`POST /public/v1/sandbox/orders\`
  with \`{ "scenario" }\` (\`delivery\`, \`pickup\`, \`scheduled\`, \`cash\`, \`online_payment\`,
  \`with_discount\`, \`cancelled\`) creates an order through the real order code path, so registered
  webhooks fire; \`overrides\` (extension to the contract) replaces the scenario's items, customer, notes,
  scheduledFor, delivery fee or discount; \`simulate: { until, stepSeconds }\` (extension to the contract) then moves
  the order on its own, a status every \`stepSeconds\`, through the real status change and its webhooks. Sandbox routes need no scope beyond a valid SANDBOX token
  (\`x-sandbox-only\`), except that firing an event (\`POST /public/v1/sandbox/events\`, an extension) needs the
  read scope of its type, as receiving it does.
`.trim();

export const TAG_DESCRIPTIONS: Record<string, string> = {
  Authentication: "Client credentials for an access token, and the keys that verify it.",
  Store: "The profile of the token's own store.",
  Orders: "Orders of the token's store: list, detail, creation and status changes.",
  Customers: "Customers of the token's store.",
  Catalog: "Categories and products of the token's store.",
  Webhooks: "Webhook endpoints of the calling Application on this store, and their deliveries.",
  Events: "The store's event feed (extension to the contract): the envelopes webhooks carry, read back in sequence order.",
  Sandbox: "Fake data for SANDBOX stores. SANDBOX tokens only.",
  Application: "The token's own Application and the API version it is pinned to (extension to the contract).",
  Exports:
    "Bulk exports (extension to the contract): a store's orders, customers or products as one gzip-compressed JSON Lines file read from " +
    "one snapshot, then the event feed after its `sequence`. The file downloads from `GET /public/v1/exports/{id}/file` " +
    "(`application/gzip`, `Content-Length`, single byte ranges) with the token, or without one from the signed `url` until `expiresAt`; " +
    "an altered or expired link is 403, an export not completed 409.",
  Contract: "This document and the API versions, machine-readable.",
  "Webhook events": "What the service POSTs to your webhook endpoints.",
};
