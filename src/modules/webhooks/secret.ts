import { randomBytes } from "node:crypto";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** `whsec_` + 32 random bytes as unpadded base64url (43 chars): 256 bits of entropy. */
export function generateWebhookSecret(): string {
  // Node's "base64url" encoding never emits "=" padding.
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/**
 * First 12 characters (`whsec_` + 6 of the random part), stored in clear so a
 * partner can tell which secret is active without us revealing it.
 */
export function secretPrefix(secret: string): string {
  return secret.slice(0, 12);
}
