import { setTimeout as sleep } from "node:timers/promises";
import { ApiError } from "../errors.js";
import type { Services } from "../services.js";
import type { Principal } from "./principal.js";

/**
 * Whether the credential behind a live stream still lets it read: null while it does, else the error that ends the
 * stream. A partner's grant is asked of the grant cache, which a revocation or a disabled Application clears at
 * commit; a stored admin key is read again.
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
  try {
    await services.grants.admit(principal);
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * Resolves with the error that ends the caller's credential (checked every `everyMs`, and at a partner token's
 * expiry to the millisecond), or with null once `signal` aborts. A check the database could not answer is tried
 * again at the next turn: a stream does not end for a hiccup.
 */
export async function credentialEnds(services: Services, principal: Principal, everyMs: number, signal: AbortSignal): Promise<ApiError | null> {
  while (!signal.aborted) {
    const wait = principal.kind === "partner" ? Math.max(0, Math.min(everyMs, principal.expiresAt - Date.now())) : everyMs;
    try {
      await sleep(wait, undefined, { signal });
    } catch {
      return null;
    }
    try {
      const ended = await credentialEnded(services, principal);
      if (ended) return ended;
    } catch (error) {
      services.log.warn({ err: error }, "could not check a live stream's credential; checking again shortly");
    }
  }
  return null;
}
