import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { LRUCache } from "lru-cache";
import { standardWebhooksKey } from "./secret.js";

interface SigningKeys {
  service: KeyObject;
  /** Null for a secret made before secrets were standard base64 (see standardWebhooksKey). */
  standard: KeyObject | null;
}

// Every attempt signs twice with its endpoint's secret: its keys are made once, not decoded and copied per attempt.
const keysBySecret = new LRUCache<string, SigningKeys>({ max: 10_000 });

function keysOf(secret: string): SigningKeys {
  let keys = keysBySecret.get(secret);
  if (keys === undefined) {
    const standard = standardWebhooksKey(secret);
    keys = { service: createSecretKey(Buffer.from(secret, "utf8")), standard: standard && createSecretKey(standard) };
    keysBySecret.set(secret, keys);
  }
  return keys;
}

/**
 * Hex HMAC-SHA256 of `${t}.${rawBody}`, keyed with the full secret string
 * (including the `whsec_` prefix) so receivers can use the secret verbatim.
 */
export function computeSignature(secret: string, timestampSeconds: number, rawBody: string): string {
  // Two updates: the body is hashed where it lies, not copied into a concatenated string first.
  return createHmac("sha256", keysOf(secret).service).update(`${timestampSeconds}.`).update(rawBody, "utf8").digest("hex");
}

/**
 * Builds `t=<ts>,v1=<hex>[,v1=<hex>...]`, one v1 per secret in the given order.
 * During a rotation callers pass [current, previous] so receivers still holding
 * the old secret keep verifying until they switch.
 */
export function signatureHeader(secrets: readonly string[], timestampSeconds: number, rawBody: string): string {
  if (secrets.length === 0) {
    // An unsigned header would look valid to a sloppy receiver; fail loudly instead.
    throw new Error("signatureHeader: at least one secret is required");
  }
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    // Receivers parse t as an integer; a fractional or negative value would never verify.
    throw new RangeError(`signatureHeader: timestampSeconds must be a non-negative integer, got ${timestampSeconds}`);
  }
  const parts = [`t=${timestampSeconds}`];
  for (const secret of secrets) {
    if (secret.length === 0) throw new Error("signatureHeader: secrets must be non-empty strings");
    parts.push(`v1=${computeSignature(secret, timestampSeconds, rawBody)}`);
  }
  return parts.join(",");
}

/**
 * The Standard Webhooks `webhook-signature` value: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` per secret
 * that has a Standard Webhooks key, space-separated (both during a rotation overlap); null when none has one.
 */
export function standardSignature(secrets: readonly string[], id: string, timestampSeconds: number, rawBody: string): string | null {
  const signatures = secrets
    .map((secret) => keysOf(secret).standard)
    .filter((key): key is KeyObject => key !== null)
    .map((key) => `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.`).update(rawBody, "utf8").digest("base64")}`);
  return signatures.length > 0 ? signatures.join(" ") : null;
}
