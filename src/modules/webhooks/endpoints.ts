import type { PartnerPrincipal } from "../../platform/auth/principal.js";
import type { Transact, Tx, WebhookEndpointStatus } from "../../platform/db/prisma.js";
import type { SecretBox } from "../../platform/crypto/encryption.js";
import { EVENT_SCOPES, isEventType } from "../events/types.js";
import { forbidden, insufficientScope, invalidRequest, notFound, unprocessable } from "../../platform/errors.js";
import type { Services } from "../../platform/services.js";
import { MAX_ENDPOINTS_PER_OWNER, ROTATION_OVERLAP_MS } from "./policy.js";
import { generateWebhookSecret, secretPrefix } from "./secret.js";
import { checkWebhookUrl } from "./url-safety.js";
import { lockActiveGrant, rotateEndpointSecret } from "./sql/endpoints.js";

/**
 * Whose webhook rows a caller may touch: a partner its own (Application, Store), an administrator any (null).
 * Every lookup below filters by it, so there is no way to load another tenant's endpoint or delivery.
 */
export type Owner = { applicationId: string; storeId: string } | null;

export function ownerWhere(owner: Owner): { applicationId?: string; storeId?: string } {
  return owner ?? {};
}

export interface EndpointInput {
  url: string;
  events: readonly string[];
}

async function checkUrl(services: Services, principal: PartnerPrincipal, url: string): Promise<void> {
  const check = await checkWebhookUrl(url, { environment: principal.environment, allowPrivateNetworks: services.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
  if (check.ok) return;
  const violation = [{ field: "url", code: check.code, message: check.message }];
  // A string that is not a URL is a malformed request; a URL we refuse to call is a business rule.
  throw check.code === "INVALID_URL" ? invalidRequest(check.message, violation) : unprocessable(check.message, violation);
}

/**
 * Registers an endpoint for the token's (Application, Store) and returns its secret, the only time it is
 * ever visible (stored encrypted). The caller has checked the input (400: the endpoint's body schema); then
 * scopes (403), URL and limit (422). The URL check resolves the host name before `transact` starts the writes'
 * transaction.
 */
export async function createEndpoint(services: Services, principal: PartnerPrincipal, input: EndpointInput, transact: Transact) {
  // Known types by then; a repeated one would only be delivered once anyway.
  const events = [...new Set(input.events.filter(isEventType))];
  const missing = events.map((e) => EVENT_SCOPES[e]).find((scope) => !principal.scopes.has(scope));
  if (missing) throw insufficientScope(missing);
  await checkUrl(services, principal, input.url);

  const secret = generateWebhookSecret();
  const owner = { applicationId: principal.applicationId, storeId: principal.storeId };
  const endpoint = await transact(async (tx) => {
    // The Grant row serialises concurrent creations of one owner, so the limit cannot be overshot.
    const grant = await tx.$queryRaw<{ id: string }[]>(lockActiveGrant(owner));
    if (grant.length === 0) throw forbidden("This Application's grant on the store is revoked.");
    const count = await tx.webhookEndpoint.count({ where: owner });
    if (count >= MAX_ENDPOINTS_PER_OWNER) {
      throw unprocessable(`An application may register at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per store; delete one first.`, [
        { field: "url", code: "ENDPOINT_LIMIT_REACHED", message: `at most ${MAX_ENDPOINTS_PER_OWNER} endpoints per application and store` },
      ]);
    }
    return tx.webhookEndpoint.create({
      data: { ...owner, url: input.url, events, secretCiphertext: services.box.encrypt(secret), secretPrefix: secretPrefix(secret) },
      select: { id: true, url: true, events: true, secretPrefix: true },
    });
  });
  return { ...endpoint, secret };
}

/**
 * Replaces the signing secret and returns the new one (shown once). The previous secret keeps signing
 * beside it for ROTATION_OVERLAP_MS, so receivers can switch without losing a delivery. One statement, so
 * two concurrent rotations cannot both demote the same secret.
 */
export async function rotateSecret(db: Tx, box: SecretBox, owner: Owner, id: string) {
  const secret = generateWebhookSecret();
  const prefix = secretPrefix(secret);
  const rows = await db.$queryRaw<{ id: string; previousSecretExpiresAt: Date }[]>(
    rotateEndpointSecret({ id, owner, secretCiphertext: box.encrypt(secret), secretPrefix: prefix, overlapMs: ROTATION_OVERLAP_MS }),
  );
  if (rows.length === 0) throw notFound("webhook endpoint", id);
  return { id: rows[0].id, secret, secretPrefix: prefix, previousSecretExpiresAt: rows[0].previousSecretExpiresAt };
}

/** Deletes the endpoint with its deliveries and attempts; their queued jobs find nothing and end. */
export async function deleteEndpoint(db: Tx, owner: Owner, id: string): Promise<void> {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id, ...ownerWhere(owner) } });
  if (count === 0) throw notFound("webhook endpoint", id);
}

/** Administrators enable (ACTIVE) or disable (INACTIVE) an endpoint; FAILED is only ever set by deliveries. */
export async function setEndpointStatus(db: Tx, id: string, status: Exclude<WebhookEndpointStatus, "FAILED">): Promise<void> {
  const { count } = await db.webhookEndpoint.updateMany({ where: { id }, data: { status } });
  if (count === 0) throw notFound("webhook endpoint", id);
}
