import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, invalidRequest } from "../platform/errors.js";
import { issueToken, type TokenRequest } from "../platform/auth/tokens.js";
import type { Services } from "../platform/services.js";
import { FORM_MEDIA_TYPE, mediaType, parseJsonBody, requestBody } from "../platform/http/body.js";
import { send } from "../platform/http/response.js";
import { isStorableText } from "../platform/input.js";
import { exchangePortalLink } from "../modules/admin/portal-links.js";

export const TOKEN_PATH = "/partner/auth/token";

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
async function bodyObject(services: Services, req: IncomingMessage): Promise<object> {
  const raw = await requestBody(req);
  // OAuth 2.0 clients send a form (RFC 6749 §4.4.2); JSON is the published contract's form.
  const parsed =
    (mediaType(req) === FORM_MEDIA_TYPE ? Object.fromEntries(new URLSearchParams(raw)) : parseJsonBody(req, raw, services.config.JSON_MAX_DEPTH)) ?? {};
  if (typeof parsed !== "object" || Array.isArray(parsed) || parsed === null) throw invalidRequest("The body must be a JSON object.");
  return parsed;
}

/** POST /partner/auth/token: JSON or form body, optional HTTP Basic client authentication. */
export async function handleTokenRequest(services: Services, req: IncomingMessage, res: ServerResponse, limits: TokenLimits): Promise<void> {
  const body: TokenRequest = await bodyObject(services, req);
  const basic = basicCredentials(req.headers.authorization);
  if (basic) {
    if (body.client_id !== undefined && body.client_id !== basic.client_id) {
      throw invalidRequest("client_id in the body differs from the HTTP Basic credentials; send one of them.");
    }
    Object.assign(body, basic);
  }
  // No client_id with a NUL or an unpaired surrogate exists, and the database could not even look one up.
  if (typeof body.client_id === "string" && !isStorableText(body.client_id)) throw new ApiError("INVALID_CLIENT", "Unknown client_id or wrong client_secret.");
  if (typeof body.client_id === "string" && body.client_id !== "") await limits.admit(body.client_id);
  const settings = { issuer: services.issuer, ttlSeconds: services.config.ACCESS_TOKEN_TTL_SECONDS };
  const token = await issueToken(services.db, services.keys, settings, body).catch(async (e: unknown) => {
    if (e instanceof ApiError && e.code === "INVALID_CLIENT") await limits.failed();
    throw e;
  });
  send(res, 200, token, { "cache-control": "no-store", pragma: "no-cache" });
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
