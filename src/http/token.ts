import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, invalidRequest } from "../errors.js";
import { issueToken, type TokenRequest } from "../auth/tokens.js";
import type { Services } from "../services.js";
import { parseBody, requestBody } from "./body.js";
import { send } from "../rest/router.js";

/** Client authentication by HTTP Basic (RFC 6749 §2.3.1): both parts are form-urlencoded. */
function basicCredentials(header: string | undefined): { client_id: string; client_secret: string } | null {
  const m = header ? /^basic\s+(\S+)$/i.exec(header.trim()) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) throw new ApiError("INVALID_CLIENT", "HTTP Basic credentials must be client_id:client_secret.");
  const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
  return { client_id: unescape(decoded.slice(0, i)), client_secret: unescape(decoded.slice(i + 1)) };
}

/**
 * POST /partner/auth/token: JSON or form body, optional HTTP Basic client authentication. `limit` runs once the
 * client_id is known, before the credentials are checked (the per-client limit of DECISIONS §9).
 */
export async function handleTokenRequest(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  limit: (clientId: string) => Promise<void> = async () => undefined,
): Promise<void> {
  const raw = await requestBody(req);
  const parsed = parseBody(req, raw) ?? {};
  if (typeof parsed !== "object" || Array.isArray(parsed) || parsed === null) throw invalidRequest("The body must be a JSON object.");
  const body = parsed as TokenRequest;
  const basic = basicCredentials(req.headers.authorization);
  if (basic) {
    if (body.client_id !== undefined && body.client_id !== basic.client_id) {
      throw invalidRequest("client_id in the body differs from the HTTP Basic credentials; send one of them.");
    }
    Object.assign(body, basic);
  }
  if (typeof body.client_id === "string" && body.client_id !== "") await limit(body.client_id);
  const token = await issueToken(services.db, services.keys, { issuer: services.config.publicBaseUrl, ttlSeconds: services.config.ACCESS_TOKEN_TTL_SECONDS }, body);
  send(res, 200, token, { "cache-control": "no-store", pragma: "no-cache" });
}
