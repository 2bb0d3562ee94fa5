import { API_VERSIONS } from "../platform/versions.js";
import type { JsonSchema } from "../platform/json.js";
import { PORTAL_LINK_EXCHANGE_PATH } from "../modules/admin/portal-links.js";
import { AUTHORIZATION_SERVER_METADATA_PATH, JWKS_PATH, REVOCATION_PATH, TOKEN_PATH } from "../platform/auth/endpoints.js";
import type { Scope } from "../platform/auth/scopes.js";
import { EXPORT_SCOPES, exportFilePath } from "../modules/exports/service.js";

/**
 * The routes no GraphQL operation answers: the token endpoints, the key set, the OAuth 2.0 metadata, the contract itself
 * and an export's file. Each is a row like the route table's, saying its method, path and HTTP answer; its handler is the
 * HTTP adapter's (src/http/server.ts, by operationId, its path matched by the route table's matcher) and its OpenAPI
 * entry is rendered from the row (./openapi-platform.ts).
 */
export interface PlatformRoute<Id extends string = string> {
  operationId: Id;
  method: "GET" | "POST";
  /** Also answers HEAD: the GET's status and headers without the body. */
  head?: true;
  /** The path, or a template whose `{name}` segments are parameters (`params`), as the route table's paths are. */
  path: string;
  /** The path parameters' schemas, by name, as documented. */
  params?: Record<string, JsonSchema>;
  tag: string;
  summary: string;
  description: string;
  /** Listed before the route table's operations in the document (else after them). */
  first: boolean;
  /**
   * Who may call it: anyone; an Application's client with its credentials (in the body, or HTTP Basic); or a partner
   * token holding one of `scopes`, or no token at all with the signed link the query carries.
   */
  caller: "anyone" | "client" | "partnerOrLink";
  /** With a partner token (`partnerOrLink`): the scopes any one of which the token needs, by what it reads. */
  scopes?: Scope[];
  /**
   * Answers as an OAuth 2.0 token endpoint does (RFC 6749 §5.2): every error is application/json with `error` and
   * `error_description` beside the problem's fields, and a cross-site browser post is refused (403) before any
   * credential is checked or counted.
   */
  oauth?: true;
  /** Query parameters it reads, as documented; the handler checks them (an unknown version is its own 400). */
  query?: Record<string, JsonSchema>;
  /** Request headers it reads, as documented. */
  headers?: Record<string, JsonSchema>;
  /** The request body's schema component, and whether it also comes as an HTML form. */
  body?: { component: string; form?: boolean };
  response: JsonResponse | FileResponse;
  /** The error statuses it answers. */
  errors: number[];
}

/** A JSON answer. */
interface JsonResponse {
  description: string;
  /** The body's schema component. */
  component: string;
  /** Answers carry `Cache-Control: no-store` (a token must never be cached). */
  noStore?: boolean;
}

/**
 * A file, streamed: its bytes in `media` with Content-Length, Content-Disposition and `Cache-Control: private, no-store`;
 * one byte range (`Range`) is answered 206 with Content-Range.
 */
interface FileResponse {
  description: string;
  media: string;
  /** The 206 answer to a range. */
  partial: string;
}

/** The contract's own addresses: the document (its reference page loads it) and the version list (deprecation links point at it). */
export const OPENAPI_DOCUMENT_PATH = "/public/v1/openapi.json";
export const VERSIONS_PATH = "/public/v1/versions";

const TOKEN_RESPONSE = { description: "The access token", component: "TokenResponse", noStore: true };

/** Keeps each row's operationId literal, so the examples (./platform-examples.ts) are keyed by the ids the table has. */
const platformRoutes = <Id extends string>(rows: PlatformRoute<Id>[]): PlatformRoute<Id>[] => rows;

export const PLATFORM_ROUTES = platformRoutes([
  {
    operationId: "createToken",
    method: "POST",
    path: TOKEN_PATH,
    tag: "Authentication",
    summary: "Exchange client credentials for an access token",
    description:
      "OAuth 2.0 client credentials grant. Credentials travel in the body (JSON or form) or in HTTP Basic client authentication. Token requests have their own rate limit per client_id and source address and do not count toward the API limits; failed ones (401) are also limited per source address, past which every token request from it gets 429 until the window slides. When too many credential checks are in progress the answer is 503 with `Retry-After`. Not idempotent: `Idempotency-Key` does not apply. " +
      "Extension to the contract: errors are OAuth 2.0 error responses (RFC 6749 §5.2), `application/json` with `error` and `error_description` beside the problem's fields; a 401 carries `WWW-Authenticate: Basic` only when the client sent HTTP Basic credentials; a cross-site browser post (`Sec-Fetch-Site: cross-site`) is 403 FORBIDDEN (`error` invalid_request) before any credential is checked or counted.",
    first: true,
    caller: "client",
    oauth: true,
    body: { component: "TokenRequest", form: true },
    response: TOKEN_RESPONSE,
    errors: [400, 401, 403, 413, 415, 429, 500, 503],
  },
  {
    operationId: "revokeToken",
    method: "POST",
    path: REVOCATION_PATH,
    tag: "Authentication",
    summary: "Revoke an access token (extension to the contract)",
    description:
      "Extension to the contract. OAuth 2.0 token revocation (RFC 7009): send the access token as `token` (JSON or form body; `token_type_hint` is accepted and changes nothing, every token here is an access token). " +
      "The client authenticates as at the token endpoint (HTTP Basic or client_id and client_secret in the body), or, sending no client credentials, with `Authorization: Bearer` carrying the very token it revokes, which is how a holder of only the token (the partner portal) signs out. " +
      "The answer is 200 with an empty object whatever the token was (unknown, malformed, expired, revoked already); only a token of the authenticated client is revoked, another client's keeps working. " +
      "From then on the token is 401 INVALID_TOKEN everywhere (REST, `/graphql`, live streams), on every server within a second. " +
      "Limited as token requests are, and a failed client authentication counts toward the same failure limit of the source address. Errors are answered as at the token endpoint.",
    first: true,
    caller: "client",
    oauth: true,
    body: { component: "TokenRevocationRequest", form: true },
    response: { description: "Revoked, or nothing to revoke", component: "TokenRevocationResponse", noStore: true },
    errors: [400, 401, 403, 413, 415, 429, 500, 503],
  },
  {
    operationId: "exchangePortalLink",
    method: "POST",
    path: PORTAL_LINK_EXCHANGE_PATH,
    tag: "Authentication",
    summary: "Exchange a portal link for an access token (extension to the contract)",
    description:
      "Extension to the contract. The partner portal (`/portal`) signs in with a one-time link an administrator made for an Application on a store " +
      "(GraphQL `createPortalLink` or `npm run admin -- create-portal-link`): the link's secret travels in its URL fragment, which never reaches " +
      "a server log or a Referer, and the page sends it here. The answer is the token endpoint's, for that Application and store. A link signs " +
      "in once and until it expires: an unknown, used or expired link is 401 INVALID_TOKEN saying which, and counts toward the token endpoint's " +
      "failure limit of the source address; a link whose grant was revoked or whose Application was disabled since is 403 FORBIDDEN. " +
      "This is the only route that exists for the portal alone: everything else the portal does is a documented route of this API. " +
      "Errors are answered as at the token endpoint (`error` invalid_grant for a refused link), and a cross-site browser post is 403 FORBIDDEN.",
    first: true,
    caller: "anyone",
    oauth: true,
    body: { component: "PortalLinkExchange" },
    response: TOKEN_RESPONSE,
    errors: [400, 401, 403, 413, 415, 429, 500, 503],
  },
  {
    operationId: "getJwks",
    method: "GET",
    path: JWKS_PATH,
    tag: "Authentication",
    summary: "Public keys that verify access tokens",
    description: "JSON Web Key Set (RFC 7517). Pick the key by the token header's `kid`; refetch on an unknown `kid` (keys rotate).",
    first: true,
    caller: "anyone",
    response: { description: "The key set", component: "JsonWebKeySet" },
    errors: [500],
  },
  {
    operationId: "getAuthorizationServerMetadata",
    method: "GET",
    path: AUTHORIZATION_SERVER_METADATA_PATH,
    tag: "Authentication",
    summary: "OAuth 2.0 authorization server metadata (extension to the contract)",
    description:
      "Extension to the contract. RFC 8414 metadata, from which OAuth 2.0 client libraries discover the token, revocation and key set addresses: " +
      "`issuer` is the base URL and equals the `iss` of the access tokens, so discovery from the base URL succeeds. No token needed.",
    first: true,
    caller: "anyone",
    response: { description: "The metadata", component: "AuthorizationServerMetadata" },
    errors: [500],
  },
  {
    operationId: "downloadExportFile",
    method: "GET",
    head: true,
    path: exportFilePath("{id}"),
    params: { id: { type: "string", format: "uuid", description: "The export's id" } },
    tag: "Exports",
    summary: "Download an export's file (extension to the contract)",
    description:
      "Extension to the contract. The gzip-compressed JSON Lines file of a completed export: one object per line, each the body its " +
      "GET-by-id route answers in the export's `apiVersion`. Two ways in: with `Authorization: Bearer` (the Application's own exports on " +
      "the token's store; the token needs the exported resource's read scope: orders:read, customers:read or catalog:read), or with no " +
      "token by the signed link the export's `url` is, `expires` and `signature` in its query, until `expiresAt`. " +
      "A link that is incomplete, altered, made for another export or expired is 403 FORBIDDEN (read the export again for a fresh one); " +
      "another Application's or store's export, or one removed (EXPORT_RETENTION_HOURS after it ended), is 404; an export not completed " +
      "yet is 409 CONFLICT. Resume a download with `Range`: one byte range is answered 206. HEAD answers the headers alone. " +
      "A token request counts toward the rate limits as every route's does; a signed link's does not.",
    first: false,
    caller: "partnerOrLink",
    scopes: [...new Set(Object.values(EXPORT_SCOPES))],
    query: {
      expires: { type: "string", pattern: "^[0-9]{1,12}$", description: "The signed link's expiry (unix seconds); without a token, required with `signature`" },
      signature: { type: "string", description: "The signed link's signature; without a token, this and `expires` are the credential" },
    },
    headers: {
      Range: {
        type: "string",
        description:
          "One byte range, `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix length>`, to resume a download: answered 206 with " +
          "Content-Range. Several ranges, or a value of another form, get the whole file (200). A range starting past the end is 400 " +
          "INVALID_REQUEST with `Content-Range: bytes */<size>`.",
        examples: ["bytes=1048576-"],
      },
    },
    response: { description: "The whole file", media: "application/gzip", partial: "The byte range asked for" },
    errors: [400, 401, 403, 404, 409, 429, 500, 503],
  },
  {
    operationId: "getOpenApiDocument",
    method: "GET",
    path: OPENAPI_DOCUMENT_PATH,
    tag: "Contract",
    summary: "This OpenAPI 3.1 document",
    description: "No token needed. The reference page at `/docs` renders it. Without `version`, the latest version's document.",
    first: false,
    caller: "anyone",
    query: {
      version: {
        type: "string",
        enum: [...API_VERSIONS],
        description: "The API version whose document to answer; an unknown one is 400 INVALID_API_VERSION",
      },
    },
    response: { description: "The document", component: "OpenApiDocument" },
    errors: [400, 500],
  },
  {
    operationId: "listApiVersions",
    method: "GET",
    path: VERSIONS_PATH,
    tag: "Contract",
    summary: "The API versions (extension to the contract)",
    description:
      "No token needed. Newest first, each with its status, release date, what it changed, and for a deprecated one when it was " +
      "deprecated and (once set) its sunset date.",
    first: false,
    caller: "anyone",
    response: { description: "The versions", component: "ApiVersionList" },
    errors: [500],
  },
]);

export type PlatformOperationId = (typeof PLATFORM_ROUTES)[number]["operationId"];

/** The paths that answer as OAuth 2.0 token endpoints (`oauth`). */
export const OAUTH_PATHS: ReadonlySet<string> = new Set(PLATFORM_ROUTES.filter((route) => route.oauth).map((route) => route.path));
