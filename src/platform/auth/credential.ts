import { ApiError } from "../errors.js";
import type { Services } from "../services.js";
import type { Principal } from "./principal.js";
import { tokenRevoked } from "./revocations.js";

/**
 * The channel the admin_key_revoked triggers notify at commit, with the key's id as payload, when a stored admin key's
 * revokedAt changes or the key is deleted: the live streams of that key check it again.
 */
export const ADMIN_KEY_REVOKED_CHANNEL = "admin_key_revoked";

/**
 * Whether the credential behind a live stream still lets it read: null while it does, else the error that ends the
 * stream. A partner's grant is asked of the grant cache, which a revocation or a disabled Application clears at
 * commit, and its token of the revoked tokens; a stored admin key is read again.
 */
async function credentialEnded(services: Services, principal: Principal): Promise<ApiError | null> {
  if (principal.kind === "anonymous") return new ApiError("UNAUTHORIZED", "Send Authorization: Bearer <admin key or partner access token>.");
  if (principal.kind === "admin") {
    if (principal.adminKeyId === null) return null;
    const key = await services.db.adminKey.findUnique({ where: { id: principal.adminKeyId }, select: { revokedAt: true } });
    return key && !key.revokedAt ? null : new ApiError("INVALID_TOKEN", "The admin key was revoked.");
  }
  if (Date.now() >= principal.expiresAt) {
    return new ApiError("INVALID_TOKEN", "The access token has expired. Request a new one at POST /partner/auth/token and resubscribe with `after`.");
  }
  if (await services.revocations.has(principal.tokenId)) return tokenRevoked();
  try {
    await services.grants.admit(principal);
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * Resolves at the next notification that may have ended the credential, or when `signal` aborts. The grant
 * notifications name a table, not a grant, so any of them wakes every partner stream; a revoked access token wakes
 * only its own streams, a revoked admin key only the streams of that key; ADMIN_API_KEY is not stored and never ends. A lost or regained LISTEN wakes them all.
 */
function nextChange(services: Services, principal: Principal, signal: AbortSignal): Promise<void> {
  if (principal.kind === "partner") return Promise.race([services.grants.nextChange(signal), services.revocations.next(principal.tokenId, signal)]);
  if (principal.kind === "admin" && principal.adminKeyId !== null) return services.adminKeyRevocations.next(principal.adminKeyId, signal);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/**
 * Resolves with the error that ends the caller's credential, or with null once `signal` aborts. The credential is
 * checked at once, again on every notification that may concern it (so a revocation made on any process ends the
 * stream a moment after its commit), at a partner token's expiry to the millisecond, and every `backstopMs` in case
 * a notification was lost. A check the database could not answer is tried again at the next turn: a stream does not
 * end for a hiccup.
 */
export async function credentialEnds(services: Services, principal: Principal, backstopMs: number, signal: AbortSignal): Promise<ApiError | null> {
  while (!signal.aborted) {
    // Wait for the next notification from before checking, so one that arrives while checking is not missed.
    const turn = new AbortController();
    const stopTurn = () => turn.abort();
    signal.addEventListener("abort", stopTurn, { once: true });
    const changed = nextChange(services, principal, turn.signal);
    try {
      const ended = await credentialEnded(services, principal).catch((error: unknown) => {
        services.log.warn({ err: error }, "could not check a live stream's credential; checking again shortly");
        return null;
      });
      if (ended) return ended;
      const wait = principal.kind === "partner" ? Math.max(0, Math.min(backstopMs, principal.expiresAt - Date.now())) : backstopMs;
      const timer = setTimeout(stopTurn, wait);
      await changed;
      clearTimeout(timer);
    } finally {
      signal.removeEventListener("abort", stopTurn);
      turn.abort();
    }
  }
  return null;
}
