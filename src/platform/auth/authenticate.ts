import { ApiError } from "../errors.js";
import { safeEqual } from "../crypto/hash.js";
import { activeAdminKey, ADMIN_KEY_PREFIX } from "./admin-keys.js";
import type { Services } from "../services.js";
import type { PartnerPrincipal, Principal } from "./principal.js";
import type { PartnerClaims } from "./principal.js";
import { verifyPartnerToken } from "./tokens.js";

/** Extracts the bearer credential; the scheme is matched case-insensitively (RFC 6750). */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header.trim() === "") return null;
  const m = /^bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new ApiError("INVALID_TOKEN", 'The Authorization header must be "Bearer <access_token>".');
  return m[1];
}

/** ADMIN_API_KEY: the operator's own key, with every right. */
const CONFIGURED_ADMIN: Principal = { kind: "admin", adminKeyId: null, role: "ADMIN" };

/**
 * Anonymous when no credential is sent; otherwise a verified admin or partner, or an error. A partner token's
 * verified claims go to `admit`, which checks its grant (and takes its rate-limit slots in the same round trip);
 * `verified` are that token's claims when the caller has verified it already.
 */
export async function resolvePrincipal(
  services: Services,
  authorization: string | undefined,
  admit: (claims: PartnerClaims) => Promise<PartnerPrincipal>,
  verified: PartnerClaims | null = null,
): Promise<Principal> {
  const token = bearerToken(authorization);
  if (token === null) return { kind: "anonymous" };
  if (token.startsWith(ADMIN_KEY_PREFIX)) {
    const configured = services.config.ADMIN_API_KEY;
    if (configured && safeEqual(token, configured)) return CONFIGURED_ADMIN;
    const stored = await activeAdminKey(services.db, token);
    if (stored !== null) return { kind: "admin", adminKeyId: stored.id, role: stored.role };
    throw new ApiError("INVALID_TOKEN", "Unknown or revoked admin key.");
  }
  const configured = services.config.ADMIN_API_KEY;
  if (configured && safeEqual(token, configured)) return CONFIGURED_ADMIN;
  return admit(verified ?? (await verifyPartnerToken(token, services.keys, services.issuer)));
}
