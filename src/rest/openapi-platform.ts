import { API_VERSIONS, LATEST_API_VERSION, type ApiVersion } from "../platform/versions.js";
import { ERROR_CATALOG, type ErrorCode } from "../platform/errors.js";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../platform/auth/scopes.js";
import { DELIVERED_EVENTS } from "../modules/events/types.js";
import { WEBHOOK_EVENT_COMPONENT } from "../platform/events/declaration.js";
import { ENVIRONMENTS } from "../modules/store/status.js";
import { USER_AGENT } from "../modules/webhooks/message.js";
import { exchangePortalLinkInput } from "../modules/admin/schemas.js";
import type { JsonSchema } from "../platform/json.js";
import { STATUS_CODES } from "node:http";
import { OAUTH_ERRORS } from "../platform/auth/oauth-errors.js";
import { PLATFORM_ROUTES, type PlatformRoute } from "./platform-routes.js";

/**
 * The parts of the OpenAPI document that are not rows of the route table: problem details, shared headers,
 * the security schemes, the platform routes' operations (rendered from their rows, ./platform-routes.ts), and the
 * webhook events the service sends.
 */

export const ref = (kind: "schemas" | "parameters" | "headers" | "responses", name: string): JsonSchema => ({
  $ref: `#/components/${kind}/${name}`,
});

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function codesWithStatus(status: number): ErrorCode[] {
  return ERROR_CODES.filter((c) => ERROR_CATALOG[c].status === status);
}

export const PLATFORM_SCHEMAS: Record<string, JsonSchema> = {
  ErrorCode: {
    type: "string",
    description: "Machine-readable error code. Each code has one HTTP status and one retryable flag.",
    enum: ERROR_CODES,
    "x-enumDescriptions": Object.fromEntries(
      ERROR_CODES.map((c) => [c, `HTTP ${ERROR_CATALOG[c].status}: ${ERROR_CATALOG[c].title}${ERROR_CATALOG[c].retryable ? " (retryable)" : ""}`]),
    ),
  },
  Violation: {
    type: "object",
    description: "One invalid field. Some codes add context, e.g. INVALID_TRANSITION adds `from` and `to`.",
    required: ["field", "code", "message"],
    properties: {
      field: { type: "string", description: "Dotted path of the field as it was sent, e.g. `items[0].quantity`, or `body`" },
      code: {
        type: "string",
        description: "e.g. REQUIRED, INVALID_TYPE, INVALID_VALUE, INVALID_FORMAT, OUT_OF_RANGE, TOO_LONG, TOO_DEEP, UNKNOWN_FIELD, INVALID_TRANSITION",
      },
      message: { type: "string", description: 'The rule in words, naming the field: "`name` is required", "`items[3].quantity` must be at most 999"' },
      allowed: {
        type: "array",
        items: { type: "string" },
        description: "Extension to the contract: the values the field takes, when it is an enumeration (INVALID_VALUE) or a scope",
      },
    },
    additionalProperties: true,
  },
  ProblemDetails: {
    type: "object",
    description:
      "Every error body (RFC 9457), served as application/problem+json; at the token endpoints (token, revocation, portal link) an OAuth 2.0 error response (RFC 6749 §5.2), served as application/json so that OAuth client libraries read it, with `error` and `error_description` beside these fields.",
    required: ["type", "title", "status", "detail", "code", "instance", "requestId", "traceId", "retryable"],
    properties: {
      type: { type: "string", format: "uri", description: "`<base_url>/errors/<CODE>`" },
      title: { type: "string" },
      status: { type: "integer", description: "The HTTP status" },
      detail: { type: "string", description: "What went wrong and what to do about it" },
      code: ref("schemas", "ErrorCode"),
      instance: { type: "string", description: "The request path" },
      requestId: { type: "string", format: "uuid", description: "Equals the X-Request-Id response header" },
      traceId: { type: "string", description: "Quote it to support" },
      retryable: { type: "boolean", description: "Whether the same request may succeed later (with backoff)" },
      errors: { type: "array", description: "Each violation, when there are any", items: ref("schemas", "Violation") },
      error: {
        type: "string",
        enum: [...OAUTH_ERRORS],
        description:
          "Extension to the contract, on every token endpoint error and only there: OAuth 2.0's error code (RFC 6749 §5.2), what an off-the-shelf OAuth client reads: invalid_request (a cross-site browser post included), invalid_client, invalid_scope, unsupported_grant_type; invalid_grant for a refused portal link; unauthorized_client for a disabled or ungranted Application; temporarily_unavailable (429, 503) and server_error (500)",
      },
      error_description: { type: "string", description: "Extension to the contract, with `error`: the same text as `detail`" },
    },
  },
  TokenRequest: {
    type: "object",
    description: "`client_id` and `client_secret` travel here or in HTTP Basic client authentication (RFC 6749 §2.3.1); one of the two is required.",
    required: ["grant_type"],
    properties: {
      grant_type: { type: "string", enum: ["client_credentials"] },
      client_id: { type: "string", description: "Public id of the Application" },
      client_secret: { type: "string", description: "Shown once when the Application is created" },
      tenant_id: {
        type: "string",
        description:
          "Extension to the contract: the store code. Required when the Application is granted on several stores (400 without it); 403 FORBIDDEN when the Application holds no active Grant for it.",
      },
      scope: {
        type: "string",
        description:
          "Extension to the contract: the scopes the token is for, space-separated (RFC 6749 §3.3), among those the Application holds; without it (or blank), all of them. One the Application is not granted is 400 INVALID_REQUEST with `error` invalid_scope.",
        examples: ["orders:read customers:read"],
      },
    },
  },
  TokenRevocationRequest: {
    type: "object",
    description:
      "Extension to the contract (RFC 7009). The client authenticates here (`client_id` and `client_secret`), with HTTP Basic, or with `Authorization: Bearer` carrying `token` itself.",
    required: ["token"],
    properties: {
      token: { type: "string", description: "The access token to revoke" },
      token_type_hint: { type: "string", description: "Accepted and ignored: every token here is an access token", examples: ["access_token"] },
      client_id: { type: "string", description: "Public id of the Application whose token it is" },
      client_secret: { type: "string" },
    },
  },
  TokenRevocationResponse: {
    type: "object",
    description: "Empty: the answer is the same whatever the token was.",
    additionalProperties: false,
  },
  AuthorizationServerMetadata: {
    type: "object",
    description: "OAuth 2.0 authorization server metadata (RFC 8414).",
    required: [
      "issuer",
      "token_endpoint",
      "jwks_uri",
      "revocation_endpoint",
      "grant_types_supported",
      "response_types_supported",
      "token_endpoint_auth_methods_supported",
      "revocation_endpoint_auth_methods_supported",
      "scopes_supported",
      "service_documentation",
    ],
    properties: {
      issuer: { type: "string", format: "uri", description: "The base URL: the `iss` of access tokens" },
      token_endpoint: { type: "string", format: "uri" },
      jwks_uri: { type: "string", format: "uri" },
      revocation_endpoint: { type: "string", format: "uri" },
      grant_types_supported: { type: "array", items: { type: "string", enum: ["client_credentials"] } },
      response_types_supported: { type: "array", items: { type: "string" }, maxItems: 0, description: "None: there is no authorization endpoint" },
      token_endpoint_auth_methods_supported: { type: "array", items: { type: "string", enum: ["client_secret_basic", "client_secret_post"] } },
      revocation_endpoint_auth_methods_supported: { type: "array", items: { type: "string", enum: ["client_secret_basic", "client_secret_post"] } },
      scopes_supported: { type: "array", items: { type: "string", enum: [...SCOPES] } },
      service_documentation: { type: "string", format: "uri", description: "The API reference" },
    },
  },
  PortalLinkExchange: {
    type: "object",
    description:
      "Extension to the contract: the secret of a one-time portal link an administrator made (createPortalLink), from the link's fragment `/portal#link_secret=…`.",
    ...exchangePortalLinkInput.schema,
  },
  TokenResponse: {
    type: "object",
    required: ["access_token", "token_type", "expires_in", "scope", "tenant_id", "environment"],
    properties: {
      access_token: { type: "string", description: "EdDSA-signed JWT with a `kid` (claims iss, aud, sub, tenant_id, environment, scope, jti, iat, exp)" },
      token_type: { type: "string", enum: ["Bearer"], description: "Always `Bearer`; the Authorization scheme is matched case-insensitively" },
      expires_in: { type: "integer", description: "Seconds (default 3600)" },
      scope: { type: "string", description: "Space-separated scopes the token carries: those the request's `scope` named, else all the Application holds" },
      tenant_id: { type: "string", description: "The store code the token is for" },
      environment: { type: "string", enum: [...ENVIRONMENTS] },
    },
  },
  JsonWebKeySet: {
    type: "object",
    required: ["keys"],
    properties: {
      keys: {
        type: "array",
        description: "Every active public key; the newest signs, all verify (rotation).",
        items: {
          type: "object",
          required: ["kty", "kid"],
          properties: {
            kty: { type: "string", examples: ["OKP"] },
            crv: { type: "string", examples: ["Ed25519"] },
            x: { type: "string" },
            kid: { type: "string" },
            alg: { type: "string", examples: ["EdDSA"] },
            use: { type: "string", examples: ["sig"] },
          },
        },
      },
    },
  },
  OpenApiDocument: { type: "object", description: "An OpenAPI 3.1 document", additionalProperties: true },
  ApiVersionList: {
    type: "object",
    description: "The API versions, newest first.",
    required: ["data", "latest"],
    properties: {
      data: {
        type: "array",
        items: {
          type: "object",
          required: ["version", "status", "releasedAt", "changes"],
          properties: {
            version: { type: "string", enum: [...API_VERSIONS] },
            status: { type: "string", enum: ["latest", "supported", "deprecated"], description: "deprecated: move off it before its sunsetAt" },
            releasedAt: {
              type: "string",
              format: "date",
              description: "When the service began serving it; never in the future. The version's name is the date it was announced for, which may be later",
            },
            deprecatedAt: { type: "string", format: "date", description: "When it was deprecated; absent unless it is" },
            sunsetAt: { type: "string", format: "date", description: "When it may stop being served; absent until the operator sets one" },
            changes: { type: "array", items: { type: "string" }, description: "What this version changed from the one before it" },
          },
        },
      },
      latest: { type: "string", enum: [...API_VERSIONS] },
    },
  },
};

/** Headers every response or some responses carry. */
export const HEADERS: Record<string, JsonSchema> = {
  ApiVersion: {
    description: "The API version the response was answered in: the request's Api-Version, else the Application's pin.",
    schema: { type: "string", enum: [...API_VERSIONS] },
  },
  Deprecation: {
    description:
      'Only when the version is deprecated: when it was (RFC 9745, `@<unix seconds>`); the response then also carries `Link: <…/public/v1/versions>; rel="deprecation"`.',
    schema: { type: "string", pattern: "^@\\d+$" },
  },
  Sunset: {
    description: "Only when the deprecated version has a sunset date: when it may stop being served (RFC 8594, an HTTP-date).",
    schema: { type: "string" },
  },
  XRequestId: {
    description: "The request's id: the caller's X-Request-Id when it is a uuid, generated otherwise. Logged; quote it to support.",
    required: true,
    schema: { type: "string", format: "uuid" },
  },
  XRateLimitLimit: {
    description: "Requests per minute allowed by the tighter of the store and Application limits (authenticated requests).",
    schema: { type: "integer" },
  },
  XRateLimitRemaining: { description: "Requests left in the current sliding minute, of the tighter limit.", schema: { type: "integer" } },
  XRateLimitReset: { description: "Unix time (seconds) when a request slot frees.", schema: { type: "integer" } },
  RetryAfter: { description: "Seconds to wait before retrying.", required: true, schema: { type: "integer" } },
  WwwAuthenticateBearer: {
    description:
      'How to authenticate (RFC 6750 §3): `Bearer` when no token was sent, `Bearer error="invalid_token"` when the one sent was refused. Extension to the contract.',
    required: true,
    schema: { type: "string", enum: ["Bearer", 'Bearer error="invalid_token"'] },
  },
  WwwAuthenticateBasic: {
    description:
      "Only when the client sent HTTP Basic credentials: authenticate again with client credentials (RFC 6749 §5.2). A client that sent them in the body gets no challenge. Extension to the contract.",
    schema: { type: "string", enum: [`Basic realm="partner-api"`] },
  },
  WwwAuthenticateInsufficientScope: {
    description:
      'With INSUFFICIENT_SCOPE: `Bearer error="insufficient_scope", scope="<the scope the operation needs>"` (RFC 6750 §3.1), space-separated when any of several would do. Extension to the contract.',
    schema: { type: "string", pattern: '^Bearer error="insufficient_scope", scope="[^"]*"$' },
  },
  IdempotentReplayed: {
    description: "`true` when this is the recorded response of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
  EventIds: {
    description:
      "The ids of the events this write committed, comma-separated in `sequence` order: the `eventId` of each webhook and feed item it causes. Absent when the write emitted nothing (a product's `catalog.updated` follows after its aggregation window and is not listed). A replay with the same Idempotency-Key answers the recorded ones. Extension to the contract.",
    schema: { type: "string", pattern: "^[0-9a-f-]{36}(,[0-9a-f-]{36})*$" },
    example: "0b7e3c1a-5f2d-4c8e-9a61-2d4f8b3e7c10,6f1d2e3c-4b5a-4978-8e6f-5a4b3c2d1e0f",
  },
  EventSequence: {
    description:
      "The highest `sequence` among the events this write committed: read the feed with `after` = Event-Sequence − 1 to get its last event, or wait until the feed reaches it. Absent when the write emitted nothing. Extension to the contract.",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1043",
  },
};

/** What every write answers about the events it committed (write receipts). */
export const RECEIPT_HEADERS = {
  "Event-Ids": ref("headers", "EventIds"),
  "Event-Sequence": ref("headers", "EventSequence"),
};

export const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": ref("headers", "XRateLimitLimit"),
  "X-RateLimit-Remaining": ref("headers", "XRateLimitRemaining"),
  "X-RateLimit-Reset": ref("headers", "XRateLimitReset"),
};

/**
 * The Api-Version parameter of the document of `version`. The document describes that version's requests and
 * answers only, so the parameter takes that version alone, as its default too: a tool that fills requests in from
 * the document (Postman, with or without examples) sends it, never another version's name or a placeholder.
 */
export function apiVersionParameter(version: ApiVersion): JsonSchema {
  return {
    name: "Api-Version",
    in: "header",
    required: false,
    description: `Answer this request in ${version}, the version this document describes, whatever the Application's pin (without the header, the pin decides). Each version's document is at GET /public/v1/openapi.json?version=<version>; an unknown version is 400 INVALID_API_VERSION.`,
    schema: { type: "string", enum: [version], default: version },
  };
}

/** The shared parameters of the document of the code's shape, the latest version's (buildOpenApi sets each version's Api-Version). */
export const PARAMETERS: Record<string, JsonSchema> = {
  ApiVersion: apiVersionParameter(LATEST_API_VERSION),
  XRequestId: {
    name: "X-Request-Id",
    in: "header",
    required: false,
    description: "Request tracing id (a uuid). Echoed in the X-Request-Id response header and in error bodies; a value that is not a uuid is replaced.",
    schema: { type: "string", format: "uuid" },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a retry safe: the same key with the same request returns the recorded response (with `Idempotent-Replayed: true`) without running again; with another request it is 409 IDEMPOTENCY_CONFLICT. 1..255 visible ASCII characters (a UUID v4 recommended), kept 24 hours, scoped to the Application and store.",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  },
};

/** Codes only some operations answer, so a reader of a shared response knows where each applies. */
const CODE_NOTES: Partial<Record<ErrorCode, string>> = {
  INVALID_CLIENT: "token endpoints",
  IDEMPOTENCY_CONFLICT: "with Idempotency-Key",
  EVENT_EXPIRED: "extension to the contract: replaying or recovering a delivery whose event is past EVENT_RETENTION_DAYS",
  CONCURRENCY_LIMIT_EXCEEDED:
    "extension to the contract: too many of the Application's requests wait at once on one server (HTTP_MAX_QUEUED_PER_APPLICATION); counts against no per-minute limit, carries no X-RateLimit-* headers",
};

/** A problem+json response for one status; its description lists the codes that status can carry. */
export function problemResponse(status: number, reason: string, codes = codesWithStatus(status)): JsonSchema {
  const listed = codes.map((c) => `\`${c}\`${CODE_NOTES[c] ? ` (${CODE_NOTES[c]})` : ""}`);
  const headers: Record<string, JsonSchema> = { "X-Request-Id": ref("headers", "XRequestId"), ...RATE_LIMIT_HEADERS };
  if (status === 401) headers["WWW-Authenticate"] = ref("headers", "WwwAuthenticateBearer");
  if (codes.includes("INSUFFICIENT_SCOPE")) headers["WWW-Authenticate"] = ref("headers", "WwwAuthenticateInsufficientScope");
  if (status === 429 || status === 503) headers["Retry-After"] = ref("headers", "RetryAfter");
  // Business errors of a write are recorded under its Idempotency-Key and replayed.
  if ([400, 404, 409, 422].includes(status)) headers["Idempotent-Replayed"] = ref("headers", "IdempotentReplayed");
  return {
    description: `${reason}${listed.length ? `: ${listed.join(", ")}` : ""}`,
    headers,
    content: { "application/problem+json": { schema: ref("schemas", "ProblemDetails") } },
    "x-error-codes": codes,
  };
}

function platformPath(operationId: string): string {
  const route = PLATFORM_ROUTES.find((row) => row.operationId === operationId);
  if (!route) throw new Error(`the platform routes have no ${operationId} row`);
  return route.path;
}

const TOKEN_PATH = platformPath("createToken");

/**
 * The security schemes of a document served at `baseUrl`. The token URL is absolute: OAuth clients (Postman's
 * among them) fetch it as it is written, and a relative one resolves against nothing they know.
 */
export function securitySchemes(baseUrl: string): Record<string, JsonSchema> {
  return {
    oauth2: {
      type: "oauth2",
      description: `OAuth 2.0 client credentials, exchanged at \`${TOKEN_PATH}\`. Send \`Authorization: Bearer <access_token>\`; each operation lists the scope it needs. A missing scope is 403 INSUFFICIENT_SCOPE.`,
      flows: { clientCredentials: { tokenUrl: `${baseUrl}${TOKEN_PATH}`, scopes: SCOPE_DESCRIPTIONS } },
    },
    clientBasic: {
      type: "http",
      scheme: "basic",
      description: "HTTP Basic client authentication at the token endpoint: client_id and client_secret, each form-urlencoded (RFC 6749 §2.3.1).",
    },
  };
}

export const problems = (statuses: number[]) => Object.fromEntries(statuses.map((s) => [String(s), ref("responses", `Problem${s}`)]));

/** Codes of bearer tokens, which the endpoints a client authenticates at never answer with. */
const BEARER_CODES: ErrorCode[] = ["UNAUTHORIZED", "INVALID_TOKEN", "INSUFFICIENT_SCOPE"];

/**
 * The problems of a route that answers as an OAuth 2.0 token endpoint: application/json with `error` and
 * `error_description`; where a client authenticates, no bearer code, and a 401 challenging for HTTP Basic.
 */
function oauthProblems(route: PlatformRoute): Record<string, JsonSchema> {
  const client = route.caller === "client";
  return Object.fromEntries(
    route.errors.map((status) => {
      const codes = codesWithStatus(status).filter((c) => !client || !BEARER_CODES.includes(c));
      const response = problemResponse(status, STATUS_CODES[status] ?? `HTTP ${status}`, codes);
      response.content = { "application/json": { schema: ref("schemas", "ProblemDetails") } };
      const headers = response.headers as Record<string, JsonSchema>;
      if (status === 401 && client) headers["WWW-Authenticate"] = ref("headers", "WwwAuthenticateBasic");
      return [String(status), response];
    }),
  );
}

/** A row's parameters of one place (path, query, header) as OpenAPI parameters; a path parameter is required. */
function parametersIn(place: "path" | "query" | "header", schemas: Record<string, JsonSchema> = {}): JsonSchema[] {
  return Object.entries(schemas).map(([name, { description, ...schema }]) => ({
    name,
    in: place,
    required: place === "path",
    ...(description ? { description } : {}),
    schema,
  }));
}

/** Who may call a route, as OpenAPI security requirements (any one of them suffices). */
function securityOf(route: PlatformRoute): JsonSchema[] {
  if (route.caller === "client") return [{}, { clientBasic: [] }];
  // A token with any one of the scopes, or none (`{}`) with the signed link.
  if (route.caller === "partnerOrLink") return [...(route.scopes ?? []).map((scope) => ({ oauth2: [scope] })), {}];
  return [];
}

/** A platform route's success answers: its JSON body, or its file whole (200) and in part (206). */
function successes(route: PlatformRoute): Record<string, JsonSchema> {
  const headers: JsonSchema = { "X-Request-Id": ref("headers", "XRequestId") };
  const { response } = route;
  if ("component" in response) {
    if (response.noStore) headers["Cache-Control"] = { description: "`no-store`: never cache a token response", schema: { type: "string" } };
    return { "200": { description: response.description, headers, content: { "application/json": { schema: ref("schemas", response.component) } } } };
  }
  if (route.caller === "partnerOrLink") Object.assign(headers, RATE_LIMIT_HEADERS);
  Object.assign(headers, {
    "Content-Length": { description: "The bytes of this answer (the range's, in a 206)", required: true, schema: { type: "string", pattern: "^[0-9]+$" } },
    "Accept-Ranges": { description: "`bytes`: a `Range` resumes the download", required: true, schema: { type: "string", enum: ["bytes"] } },
    "Content-Disposition": { description: "`attachment` with the file's name", schema: { type: "string" } },
    "Cache-Control": { description: "`private, no-store`", schema: { type: "string" } },
  });
  const content = { [response.media]: { schema: { type: "string", format: "binary", contentMediaType: response.media } } };
  const range = {
    description: "`bytes <first>-<last>/<size>`: the part answered, and the file's size",
    required: true,
    schema: { type: "string", pattern: "^bytes [0-9]+-[0-9]+/[0-9]+$" },
  };
  return {
    "200": { description: response.description, headers, content },
    "206": { description: response.partial, headers: { ...headers, "Content-Range": range }, content },
  };
}

/** A platform route's OpenAPI operation, from its row. */
function platformOperation(route: PlatformRoute): JsonSchema {
  const parameters = [...parametersIn("path", route.params), ...parametersIn("query", route.query), ...parametersIn("header", route.headers)];
  parameters.push(ref("parameters", "XRequestId"));
  const operation: JsonSchema = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    security: securityOf(route),
    parameters,
  };
  const { body } = route;
  if (body) {
    const media = body.form ? ["application/json", "application/x-www-form-urlencoded"] : ["application/json"];
    operation.requestBody = { required: true, content: Object.fromEntries(media.map((type) => [type, { schema: ref("schemas", body.component) }])) };
  }
  operation.responses = { ...successes(route), ...(route.oauth ? oauthProblems(route) : problems(route.errors)) };
  return operation;
}

/** Operations served outside the route table, from their rows; `first` ones precede the route table in the document. */
export const PLATFORM_OPERATIONS: { path: string; method: "get" | "post"; first: boolean; operation: JsonSchema }[] = PLATFORM_ROUTES.map((route) => ({
  path: route.path,
  method: route.method === "GET" ? "get" : "post",
  first: route.first,
  operation: platformOperation(route),
}));

const pascal = (s: string) => s.replace(/(^|[._-])(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase());

export const eventSchemaName = (type: string) => `${pascal(type)}Event`;

/**
 * One envelope schema per event type, spelled out rather than composed with allOf so that
 * readers and tools see the single eventType and the payload of that event; and WebhookEvent, any of them,
 * told apart by `eventType` (the feed's items, a delivery's payload).
 */
export function eventSchemas(): Record<string, JsonSchema> {
  const types = Object.keys(DELIVERED_EVENTS);
  const schemas: Record<string, JsonSchema> = {
    [WEBHOOK_EVENT_COMPONENT]: {
      description: "Any event's envelope, as webhooks deliver it and the event feed returns it; `eventType` says which.",
      oneOf: types.map((type) => ref("schemas", eventSchemaName(type))),
      discriminator: { propertyName: "eventType", mapping: Object.fromEntries(types.map((type) => [type, `#/components/schemas/${eventSchemaName(type)}`])) },
    },
  };
  for (const [type, event] of Object.entries(DELIVERED_EVENTS)) {
    schemas[eventSchemaName(type)] = {
      type: "object",
      description: `The \`${type}\` webhook body. \`eventId\` is the deduplication key and stays the same on every attempt and replay.`,
      required: ["eventId", "eventType", "timestamp", "tenantId", "sequence", "data"],
      properties: {
        eventId: { type: "string", format: "uuid" },
        eventType: { type: "string", enum: [type] },
        timestamp: { type: "string", format: "date-time", description: "When the event happened (ISO 8601 UTC)" },
        tenantId: { type: "string", description: "The store code (the token's tenant_id)" },
        sequence: {
          type: "integer",
          minimum: 1,
          description:
            "Extension to the contract: the event's place in the store's sequence, strictly increasing in commit order (the same number GET /public/v1/events shows). Drop an event whose sequence is below one you already applied for the same resource.",
        },
        data: event.data,
      },
    };
  }
  return schemas;
}

const DELIVERY_HEADERS: JsonSchema[] = [
  {
    name: "X-Service-Signature",
    in: "header",
    required: true,
    description:
      "`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the endpoint secret over `<t>.<raw body>`. During a secret rotation it carries one `v1` per secret (`t=…,v1=<new>,v1=<old>`): accept the delivery when any of them matches. Verify on the raw body before parsing, compare in constant time, reject when |now - t| > 300 s.",
    schema: { type: "string", pattern: "^t=\\d+(,v1=[0-9a-f]{64})+$" },
  },
  { name: "X-Service-Event-Id", in: "header", required: true, description: "Equals the body's eventId", schema: { type: "string", format: "uuid" } },
  { name: "X-Service-Event-Type", in: "header", required: true, description: "Equals the body's eventType", schema: { type: "string" } },
  {
    name: "X-Service-Delivery-Id",
    in: "header",
    required: true,
    description: "The delivery (one per endpoint and event); see GET /public/v1/webhooks/deliveries",
    schema: { type: "string", format: "uuid" },
  },
  { name: "User-Agent", in: "header", required: true, schema: { type: "string", enum: [USER_AGENT] } },
  {
    name: "Api-Version",
    in: "header",
    required: false,
    description: "Extension to the contract: the API version the body is rendered in (the endpoint's apiVersion)",
    schema: { type: "string", enum: [...API_VERSIONS] },
  },
];

/** OpenAPI 3.1 `webhooks`: one POST per event type, with the envelope and the delivery headers. */
export function webhooks(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [type, { scope, emitted }] of Object.entries(DELIVERED_EVENTS)) {
    out[type] = {
      post: {
        operationId: `event${pascal(type)}`,
        tags: ["Webhook events"],
        summary: type,
        description: `${emitted}\n\nSubscribing needs the scope \`${scope}\`.`,
        "x-required-scope": scope,
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: ref("schemas", eventSchemaName(type)),
            },
          },
        },
        responses: {
          "2XX": { description: "Any 2xx within 5 s (WEBHOOK_TIMEOUT_MS) acknowledges the delivery; anything else, a redirect or a time-out is retried." },
        },
      },
    };
  }
  return out;
}
