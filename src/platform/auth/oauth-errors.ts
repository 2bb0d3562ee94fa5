import type { ApiError } from "../errors.js";

/** RFC 6749's error codes the token endpoints answer with (§5.2, and §4.1.2.1's for overload and failures). */
export const OAUTH_ERRORS = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "invalid_scope",
  "unsupported_grant_type",
  "unauthorized_client",
  "temporarily_unavailable",
  "server_error",
] as const;

export type OAuthError = (typeof OAUTH_ERRORS)[number];

/** The violation code of a cross-site browser request refused by the token endpoints. */
export const CROSS_SITE = "CROSS_SITE";

/**
 * RFC 6749's `error` for a token endpoint problem (§5.2), beside its code: unsupported_grant_type and invalid_scope
 * from the violation that says so, a refused cross-site request invalid_request, a refused portal link (401
 * INVALID_TOKEN) invalid_grant, the others by status. A refused disabled or ungranted Application is
 * unauthorized_client; overload and failures take the codes §4.1.2.1 defines for them.
 */
export function oauthErrorOf(e: ApiError): OAuthError {
  const codes = new Set(e.violations?.map((v) => v.code));
  if (codes.has("UNSUPPORTED_GRANT_TYPE")) return "unsupported_grant_type";
  if (codes.has("INVALID_SCOPE")) return "invalid_scope";
  if (codes.has(CROSS_SITE)) return "invalid_request";
  if (e.code === "INVALID_TOKEN") return "invalid_grant";
  if (e.status === 401) return "invalid_client";
  if (e.status === 403) return "unauthorized_client";
  if (e.status === 429 || e.status === 503) return "temporarily_unavailable";
  return e.status >= 500 ? "server_error" : "invalid_request";
}
