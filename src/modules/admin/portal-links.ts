import { randomToken, sha256Hex } from "../../platform/crypto/hash.js";
import { ApiError, forbidden, invalidRequest, unprocessable } from "../../platform/errors.js";
import { issuableGrants } from "../../platform/auth/grant-rule.js";
import { signAccessToken, type TokenResponse, type TokenSettings } from "../../platform/auth/tokens.js";
import type { KeyRing } from "../../platform/auth/keys.js";
import type { Tx } from "../../platform/db/prisma.js";
import { createPortalLinkInput, exchangePortalLinkInput } from "./schemas.js";
import { jsonArgs } from "../../platform/validate.js";
import { storeOf } from "./operations.js";

/**
 * One-time sign-in links to the partner portal. An administrator makes one for an Application on a store it holds an
 * active grant on; the link's secret travels in the URL fragment (`/portal#link_secret=…`), which browsers send
 * neither to the server nor in a Referer, and only its sha256 is stored. The portal exchanges it once, before it
 * expires, at POST /partner/auth/portal-link for an ordinary access token of that Application and store.
 */

export const PORTAL_PATH = "/portal";
export const PORTAL_LINK_EXCHANGE_PATH = "/partner/auth/portal-link";
export const DEFAULT_PORTAL_LINK_TTL_MINUTES = 60;

export interface PortalLinkRequest {
  clientId: string;
  storeId: string;
  ttlMinutes?: number | null;
}

export interface PortalLinkSettings {
  /** The service's public address (the token issuer: PUBLIC_BASE_URL, or the address the first process recorded). */
  baseUrl: string;
  maxTtlMinutes: number;
  /** Who makes it, for the record: an admin key's id, ADMIN_API_KEY or cli. */
  createdBy: string;
}

export async function createPortalLink(db: Tx, input: PortalLinkRequest, settings: PortalLinkSettings): Promise<{ url: string; expiresAt: Date }> {
  createPortalLinkInput.check(jsonArgs({ ...input }));
  const ttlMinutes = input.ttlMinutes ?? Math.min(DEFAULT_PORTAL_LINK_TTL_MINUTES, settings.maxTtlMinutes);
  if (ttlMinutes > settings.maxTtlMinutes) {
    throw invalidRequest(`ttlMinutes must be at most ${settings.maxTtlMinutes} (PORTAL_LINK_MAX_TTL_MINUTES).`, [
      { field: "ttlMinutes", code: "OUT_OF_RANGE", message: `ttlMinutes must be at most ${settings.maxTtlMinutes}` },
    ]);
  }
  const app = await db.application.findUnique({ where: { clientId: input.clientId } });
  if (!app) throw new ApiError("NOT_FOUND", `no Application with clientId ${input.clientId}`);
  const store = await storeOf(db, input.storeId);
  if (app.status !== "ACTIVE") throw unprocessable(`Application ${app.clientId} is disabled: enable it before making a portal link.`);
  const grant = await db.grant.findFirst({ where: { ...issuableGrants(app), storeId: store.id }, select: { id: true } });
  if (!grant) throw unprocessable(`Application ${app.clientId} holds no active grant on store ${store.code}: create the grant first.`);
  const secret = randomToken(32);
  const expiresAt = new Date(Date.now() + ttlMinutes * 60_000);
  await db.portalLink.create({
    data: { applicationId: app.id, storeId: store.id, secretHash: sha256Hex(secret), createdBy: settings.createdBy, expiresAt },
  });
  return { url: `${settings.baseUrl}${PORTAL_PATH}#link_secret=${secret}`, expiresAt };
}

const LINK_REFUSED = "Ask the platform team for a new portal link, or sign in with the Application's client_id and client_secret.";

/**
 * Exchanges a portal link's secret for an access token, once. An unknown, used or expired link is 401 INVALID_TOKEN
 * saying which; a link whose grant was revoked or whose Application was disabled since is 403 FORBIDDEN.
 */
export async function exchangePortalLink(
  db: Tx,
  keys: KeyRing,
  settings: TokenSettings,
  body: unknown,
): Promise<{ token: TokenResponse; clientId: string; linkId: string }> {
  exchangePortalLinkInput.check(body);
  const secret = typeof body === "object" && body !== null && "link_secret" in body ? String(body.link_secret) : "";
  const link = await db.portalLink.findUnique({
    where: { secretHash: sha256Hex(secret) },
    include: { application: true, store: { select: { id: true, code: true } } },
  });
  if (!link) throw new ApiError("INVALID_TOKEN", `This portal link is not valid. ${LINK_REFUSED}`);
  if (link.usedAt)
    throw new ApiError("INVALID_TOKEN", `This portal link was already used at ${link.usedAt.toISOString()}; a link signs in once. ${LINK_REFUSED}`);
  const now = new Date();
  if (link.expiresAt <= now) throw new ApiError("INVALID_TOKEN", `This portal link expired at ${link.expiresAt.toISOString()}. ${LINK_REFUSED}`);
  const { application: app } = link;
  if (app.status !== "ACTIVE") throw forbidden("This Application is disabled. Contact the platform team.");
  const grant = await db.grant.findFirst({ where: { ...issuableGrants(app), storeId: link.storeId }, select: { id: true } });
  if (!grant) throw forbidden("This Application no longer holds an active grant on the link's store.");
  // The claim is conditional, so of two exchanges racing for one link exactly one signs in.
  const claimed = await db.portalLink.updateMany({ where: { id: link.id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
  if (claimed.count !== 1) throw new ApiError("INVALID_TOKEN", `This portal link was already used; a link signs in once. ${LINK_REFUSED}`);
  return { token: await signAccessToken(keys, settings, app, link.store.code, app.scopes), clientId: app.clientId, linkId: link.id };
}
