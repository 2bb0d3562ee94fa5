import { ApiError } from "../errors.js";
import { safeEqual } from "../crypto/hash.js";
import { activeAdminKey, ADMIN_KEY_PREFIX } from "./admin-keys.js";
import type { Services } from "../services.js";
import type { PartnerClaims, PartnerPrincipal, Principal } from "./principal.js";
import { verifyPartnerToken } from "./tokens.js";
import { tokenRevoked } from "./revocations.js";

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
  // Checked again when the caller verified the token already: the request may have waited for its slot since.
  return admit(await unrevoked(services, verified ?? (await verifyPartnerToken(token, services.keys, services.issuer))));
}

/** The claims, unless their token was revoked (401 INVALID_TOKEN). */
async function unrevoked(services: Services, claims: PartnerClaims): Promise<PartnerClaims> {
  if (await services.revocations.has(claims.tokenId)) throw tokenRevoked();
  return claims;
}

/**
 * The claims of a partner token that verifies (signature, issuer, expiry) and was not revoked, read from memory with
 * no database, or null for anything else (no credential, an admin key, a token that does not verify), which
 * resolvePrincipal then answers as it always does. The HTTP adapter asks before a request takes an admission slot,
 * to count the slot against its Application, and hands the claims to resolvePrincipal so the token is verified once.
 */
export async function verifiedPartnerClaims(services: Services, authorization: string | undefined): Promise<PartnerClaims | null> {
  try {
    const token = bearerToken(authorization);
    if (token === null || token.startsWith(ADMIN_KEY_PREFIX)) return null;
    return await unrevoked(services, await verifyPartnerToken(token, services.keys, services.issuer));
  } catch {
    return null;
  }
}
