import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, invalidRequest } from "../platform/errors.js";
import { authenticateClient, issueToken, verifyPartnerToken, type TokenRequest } from "../platform/auth/tokens.js";
import { CROSS_SITE } from "../platform/auth/oauth-errors.js";
import type { Services } from "../platform/services.js";
import { FORM_MEDIA_TYPE, mediaType, parseJsonBody, requestBody } from "../platform/http/body.js";
import { send } from "../platform/http/response.js";
import { isStorableText } from "../platform/input.js";
import { isRecord } from "../platform/json.js";
import { exchangePortalLink } from "../modules/admin/portal-links.js";
import { BASIC_CHALLENGE } from "./problem.js";
import { DOCS_PATH } from "./docs.js";
import { SCOPES } from "../platform/auth/scopes.js";
import { JWKS_PATH, REVOCATION_PATH, TOKEN_PATH } from "../platform/auth/endpoints.js";

/**
 * A browser says in Sec-Fetch-Site where a request comes from. A cross-site post to a token endpoint is another
 * website's form or script (a form post needs no CORS consent): it is refused before any credential is read or
 * counted, so no website can lock its visitors' address out of signing in by posting wrong credentials. Servers
 * and curl send no such header, and the portal's own requests are same-origin.
 */
function refuseCrossSite(req: IncomingMessage): void {
  const site = req.headers["sec-fetch-site"];
  if (typeof site !== "string" || site.trim().toLowerCase() !== "cross-site") return;
  throw new ApiError("FORBIDDEN", "Cross-site browser requests are refused here: call this endpoint from a server, or from a page of this site.", [
    { field: "Sec-Fetch-Site", code: CROSS_SITE, message: "`Sec-Fetch-Site` must not be cross-site" },
  ]);
}

const BASIC_SCHEME = /^\s*basic(\s|$)/i;

/**
 * Runs a token endpoint's work; a 401 INVALID_CLIENT of a client that sent HTTP Basic credentials challenges for them
 * again (RFC 6749 §5.2), one of a client that sent its credentials in the body does not.
 */
async function challengingBasic(req: IncomingMessage, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (e) {
    if (!(e instanceof ApiError && e.code === "INVALID_CLIENT" && BASIC_SCHEME.test(req.headers.authorization ?? ""))) throw e;
    throw new ApiError(e.code, e.detail, e.violations, { ...e.headers, "www-authenticate": BASIC_CHALLENGE });
  }
}

/** Client authentication by HTTP Basic (RFC 6749 §2.3.1): both parts are form-urlencoded. */
function basicCredentials(header: string | undefined): { client_id: string; client_secret: string } | null {
  const m = header ? /^basic\s+(\S+)$/i.exec(header.trim()) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) throw new ApiError("INVALID_CLIENT", "HTTP Basic credentials must be client_id:client_secret.");
  return { client_id: formDecode(decoded.slice(0, i)), client_secret: formDecode(decoded.slice(i + 1)) };
}

/** A malformed percent-escape (`%zz`) is a client that failed to authenticate (RFC 6749 §5.2), not a URIError. */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    throw new ApiError("INVALID_CLIENT", "HTTP Basic credentials must be form-urlencoded client_id:client_secret; a percent-escape is malformed.");
  }
}

/** The token endpoint's limits against credential stuffing, for one request. */
export interface TokenLimits {
  /** Runs once the client_id is known, before the secret is hashed; refuses by throwing. */
  admit(clientId: string): Promise<void>;
  /** Runs when the credentials did not verify. */
  failed(): Promise<void>;
}

/** The token request's body: JSON or form, as an object. */
async function bodyObject(services: Services, req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await requestBody(req);
  // OAuth 2.0 clients send a form (RFC 6749 §4.4.2); JSON is the published contract's form.
  const parsed =
    (mediaType(req) === FORM_MEDIA_TYPE ? Object.fromEntries(new URLSearchParams(raw)) : parseJsonBody(req, raw, services.config.JSON_MAX_DEPTH)) ?? {};
  if (!isRecord(parsed)) throw invalidRequest("The body must be a JSON object.");
  return parsed;
}

/**
 * The body with the client's credentials: its own, or HTTP Basic's put in (both at once must name the same client).
 * A client_id no Application can have (a NUL, an unpaired surrogate: the database could not even look one up) is
 * refused as unknown.
 */
function withClientCredentials<T extends { client_id?: unknown; client_secret?: unknown }>(req: IncomingMessage, body: T): T {
  const basic = basicCredentials(req.headers.authorization);
  if (basic) {
    if (body.client_id !== undefined && body.client_id !== basic.client_id) {
      throw invalidRequest("client_id in the body differs from the HTTP Basic credentials; send one of them.");
    }
    Object.assign(body, basic);
  }
  if (typeof body.client_id === "string" && !isStorableText(body.client_id)) throw new ApiError("INVALID_CLIENT", "Unknown client_id or wrong client_secret.");
  return body;
}

/** POST /partner/auth/token: JSON or form body, optional HTTP Basic client authentication. */
export async function handleTokenRequest(services: Services, req: IncomingMessage, res: ServerResponse, limits: TokenLimits): Promise<void> {
  refuseCrossSite(req);
  await challengingBasic(req, async () => {
    const body: TokenRequest = withClientCredentials(req, await bodyObject(services, req));
    if (typeof body.client_id === "string" && body.client_id !== "") await limits.admit(body.client_id);
    const settings = { issuer: services.issuer, ttlSeconds: services.config.ACCESS_TOKEN_TTL_SECONDS };
    const token = await issueToken(services.db, services.keys, settings, body).catch(async (e: unknown) => {
      if (e instanceof ApiError && e.code === "INVALID_CLIENT") await limits.failed();
      throw e;
    });
    send(res, 200, token, { "cache-control": "no-store", pragma: "no-cache" });
  });
}

/**
 * POST /partner/auth/revoke (RFC 7009): JSON or form body with `token` and an optional `token_type_hint` (every
 * token here is an access token, so the hint changes nothing). The client authenticates as at the token endpoint,
 * or, sending no client credentials, with `Authorization: Bearer` and the very token it revokes, which is how the
 * portal, holding only its token, signs out. The answer is 200 whatever the token was (unknown, malformed, expired, revoked already, another
 * client's), and only a token of the authenticated client is revoked. Limited as token requests are, and a client
 * that fails to authenticate counts toward the same failure limit of its address.
 */
export async function handleRevocation(services: Services, req: IncomingMessage, res: ServerResponse, limits: TokenLimits): Promise<void> {
  refuseCrossSite(req);
  await challengingBasic(req, async () => {
    const body = await bodyObject(services, req);
    const { token, token_type_hint } = body;
    if (typeof token !== "string" || token === "") {
      throw invalidRequest("`token` is required: the access token to revoke.", [
        { field: "token", code: "REQUIRED", message: "`token` is required, as a non-empty string" },
      ]);
    }
    if (token_type_hint !== undefined && typeof token_type_hint !== "string") {
      throw invalidRequest("token_type_hint must be a string.", [
        { field: "token_type_hint", code: "INVALID_TYPE", message: "`token_type_hint` must be a string" },
      ]);
    }
    const claims = await verifyPartnerToken(token, services.keys, services.issuer).catch(() => null);
    const clientId = await revokingClient(services, req, body, token, claims?.clientId ?? null, limits);
    if (claims && clientId === claims.clientId) await services.revocations.revoke(claims);
    send(res, 200, {}, { "cache-control": "no-store", pragma: "no-cache" });
  });
}

/**
 * The client a revocation request authenticated as, or null when it proved a token that is no longer valid (which
 * leaves nothing to revoke). `owner` is the client_id of the token to revoke, when it verifies.
 */
async function revokingClient(
  services: Services,
  req: IncomingMessage,
  body: Record<string, unknown>,
  token: string,
  owner: string | null,
  limits: TokenLimits,
): Promise<string | null> {
  // Client credentials, when sent, decide: the bearer form is for a holder of nothing but the token.
  const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  if (bearer && body.client_id === undefined && body.client_secret === undefined) {
    if (bearer[1] !== token) {
      await limits.failed();
      throw new ApiError(
        "INVALID_CLIENT",
        "Authorization: Bearer proves only the token it carries: revoke that same token, or authenticate with client_id and client_secret.",
      );
    }
    if (owner !== null) await limits.admit(owner);
    return owner;
  }
  const { client_id, client_secret } = withClientCredentials(req, body);
  if (typeof client_id !== "string" || client_id === "" || typeof client_secret !== "string" || client_secret === "") {
    throw new ApiError(
      "INVALID_CLIENT",
      "Authenticate the client: HTTP Basic (client_secret_basic), client_id and client_secret in the body (client_secret_post), or Authorization: Bearer with the token being revoked.",
    );
  }
  await limits.admit(client_id);
  const app = await authenticateClient(services.db, client_id, client_secret).catch(async (e: unknown) => {
    if (e instanceof ApiError && e.code === "INVALID_CLIENT") await limits.failed();
    throw e;
  });
  return app.clientId;
}

/**
 * POST /partner/auth/portal-link: a portal link's secret for an access token, once. Refused links count toward the
 * token endpoint's failure limit of the source address, which is checked first.
 */
export async function handlePortalLinkExchange(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  limits: { admit(): Promise<void>; failed(): Promise<void> },
  signedIn: (clientId: string) => void,
): Promise<void> {
  refuseCrossSite(req);
  const body = await bodyObject(services, req);
  await limits.admit();
  const settings = { issuer: services.issuer, ttlSeconds: services.config.ACCESS_TOKEN_TTL_SECONDS };
  const { token, clientId, linkId } = await exchangePortalLink(services.db, services.keys, settings, body).catch(async (e: unknown) => {
    if (e instanceof ApiError && e.code === "INVALID_TOKEN") await limits.failed();
    throw e;
  });
  signedIn(clientId);
  services.log.info({ clientId, storeCode: token.tenant_id, portalLinkId: linkId }, "portal link used");
  send(res, 200, token, { "cache-control": "no-store", pragma: "no-cache" });
}

const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"];

/**
 * GET /.well-known/oauth-authorization-server (RFC 8414): what OAuth 2.0 client libraries discover the endpoints
 * from. `issuer` is the tokens' `iss`, which clients compare with the address they discovered from; the endpoints are
 * at this service's public address. No authorization endpoint exists, so no response type is supported.
 */
export function authorizationServerMetadata(services: Services): Record<string, unknown> {
  const base = services.config.publicBaseUrl;
  return {
    issuer: services.issuer,
    token_endpoint: `${base}${TOKEN_PATH}`,
    jwks_uri: `${base}${JWKS_PATH}`,
    revocation_endpoint: `${base}${REVOCATION_PATH}`,
    grant_types_supported: ["client_credentials"],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: [...SCOPES],
    service_documentation: `${base}${DOCS_PATH}`,
  };
}
