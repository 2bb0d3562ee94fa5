import { randomBytes } from "node:crypto";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

/**
 * `whsec_` + 32 random bytes in standard base64 (44 characters): 256 bits of entropy, in the form Standard Webhooks
 * libraries take verbatim (they decode what follows `whsec_` into the HMAC key).
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString("base64");
}

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key Standard Webhooks signatures use: the bytes the secret's base64 encodes. Secrets made before
 * secrets were standard base64 (unpadded base64url, 43 characters) have none; they get Standard Webhooks
 * signatures once rotated.
 */
export function standardWebhooksKey(secret: string): Buffer | null {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return null;
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  return encoded.length > 0 && STANDARD_BASE64.test(encoded) ? Buffer.from(encoded, "base64") : null;
}

/**
 * First 12 characters (`whsec_` + 6 of the random part), stored in clear so a
 * partner can tell which secret is active without us revealing it.
 */
export function secretPrefix(secret: string): string {
  return secret.slice(0, 12);
}
