import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from "jose";
import { randomUUID } from "node:crypto";
import { ApiError, forbidden, invalidRequest } from "../errors.js";
import { verifySecret } from "../crypto/hash.js";
import type { Db, Environment } from "../db/prisma.js";
import { SIGNING_ALG, type KeyRing } from "./keys.js";
import type { PartnerClaims } from "./principal.js";
import { isScope, type Scope } from "./scopes.js";
import { issuableGrants } from "./grant-rule.js";

export const TOKEN_AUDIENCE = "partner-api";

export interface TokenRequest {
  grant_type?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
  tenant_id?: unknown;
  /** Space-separated scopes the token is for, among the Application's (RFC 6749 §3.3); all of them without it. */
  scope?: unknown;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  tenant_id: string;
  environment: Environment;
}

export interface TokenSettings {
  issuer: string;
  ttlSeconds: number;
}

/** OAuth 2.0 client credentials, one token per active grant (docs/decisions.md, Tokens, applications and grants). */
export async function issueToken(db: Db, keys: KeyRing, settings: TokenSettings, req: TokenRequest): Promise<TokenResponse> {
  const missing = (["grant_type", "client_id", "client_secret"] as const).filter((f) => typeof req[f] !== "string" || req[f] === "");
  if (missing.length > 0) {
    throw invalidRequest(
      `Missing or non-string field(s): ${missing.join(", ")}.`,
      missing.map((field) => ({ field, code: "REQUIRED", message: `\`${field}\` is required, as a non-empty string` })),
    );
  }
  if (req.grant_type !== "client_credentials") {
    throw invalidRequest('Only grant_type "client_credentials" is supported.', [
      { field: "grant_type", code: "UNSUPPORTED_GRANT_TYPE", message: "`grant_type` must be client_credentials", allowed: ["client_credentials"] },
    ]);
  }
  for (const field of ["tenant_id", "scope"] as const) {
    if (req[field] !== undefined && typeof req[field] !== "string") {
      throw invalidRequest(`${field} must be a string.`, [{ field, code: "INVALID_TYPE", message: `\`${field}\` must be a string` }]);
    }
  }
  const app = await authenticateClient(db, req.client_id as string, req.client_secret as string);
  if (app.status !== "ACTIVE") throw forbidden("This Application is disabled. Contact the platform team.");
  const scopes = grantedScopes(app.scopes, req.scope);

  const grants = await db.grant.findMany({
    where: issuableGrants(app),
    include: { store: { select: { id: true, code: true } } },
  });
  let grant: (typeof grants)[number] | undefined;
  if (typeof req.tenant_id === "string") {
    grant = grants.find((g) => g.store.code === req.tenant_id);
    if (!grant) throw forbidden(`This Application holds no active grant for tenant_id "${req.tenant_id}".`);
  } else if (grants.length === 1) {
    grant = grants[0];
  } else if (grants.length === 0) {
    throw forbidden("This Application holds no active grant on any store. A store must grant it access first.");
  } else {
    throw invalidRequest("This Application is granted on several stores: add tenant_id to choose one.", [
      {
        field: "tenant_id",
        code: "REQUIRED",
        message: `\`tenant_id\` is required: one of ${grants.map((g) => g.store.code).join(", ")}`,
        allowed: grants.map((g) => g.store.code),
      },
    ]);
  }

  return signAccessToken(keys, settings, app, grant.store.code, scopes);
}

/**
 * The Application these client credentials belong to, else 401 INVALID_CLIENT: the same answer, after the same
 * hashing work, for an unknown client_id as for a wrong secret.
 */
export async function authenticateClient(db: Db, clientId: string, clientSecret: string) {
  const app = await db.application.findUnique({ where: { clientId } });
  const ok = await verifySecret(clientSecret, app?.clientSecretHash ?? null);
  if (!app || !ok) throw new ApiError("INVALID_CLIENT", "Unknown client_id or wrong client_secret.");
  return app;
}

/**
 * The access token of an Application for one store it holds an active grant on, with `scopes` (all it holds, or those
 * the token request narrowed it to): the token endpoint's answer, and a portal link's once it is exchanged. The
 * caller has checked the grant.
 */
export async function signAccessToken(
  keys: KeyRing,
  settings: TokenSettings,
  app: { clientId: string; environment: Environment },
  storeCode: string,
  scopes: readonly string[],
): Promise<TokenResponse> {
  const scope = scopes.join(" ");
  const { kid, key } = keys.signingKey();
  const access_token = await new SignJWT({ tenant_id: storeCode, environment: app.environment, scope })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "at+jwt" })
    .setIssuer(settings.issuer)
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(app.clientId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${settings.ttlSeconds}s`)
    .sign(key);
  return {
    access_token,
    token_type: "Bearer",
    expires_in: settings.ttlSeconds,
    scope,
    tenant_id: storeCode,
    environment: app.environment,
  };
}

/**
 * The scopes a token is issued with: those the request's `scope` names (space-separated; blank is none named), in
 * the Application's order, or all the Application holds. Naming one it does not hold is 400 invalid_scope, listing
 * what it may ask for.
 */
function grantedScopes(held: readonly string[], asked: unknown): string[] {
  const named = typeof asked === "string" ? asked.split(" ").filter((s) => s !== "") : [];
  if (named.length === 0) return [...held];
  const refused = [...new Set(named.filter((s) => !held.includes(s)))];
  if (refused.length > 0) {
    const may = held.length > 0 ? `it may ask for ${held.join(", ")}` : "it holds no scope";
    throw invalidRequest(`This Application is not granted ${refused.join(", ")}: ${may}.`, [
      { field: "scope", code: "INVALID_SCOPE", message: `\`scope\` names scopes this Application is not granted: ${refused.join(", ")}`, allowed: [...held] },
    ]);
  }
  return held.filter((s) => named.includes(s));
}

/**
 * Claims of tokens this process has verified, per key ring, by issuer and token string. A partner sends the same
 * token for up to an hour, and an EdDSA verification costs tens of microseconds on every request; an entry lives
 * until the token expires but at most a minute, so a retired signing key stops being honoured soon after.
 * Nothing else is cached here: the grant has its own cache, cleared when a grant changes (GrantCache), and a
 * revocation is looked up on every request after this cache (authenticate.ts), so it holds from its commit on.
 */
const verifiedTokens = new WeakMap<KeyRing, Map<string, { payload: JWTPayload; until: number }>>();
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;

async function verifyAccessToken(token: string, keys: KeyRing, issuer: string): Promise<JWTPayload> {
  let cache = verifiedTokens.get(keys);
  if (!cache) {
    cache = new Map();
    verifiedTokens.set(keys, cache);
  }
  const key = `${issuer}\u0000${token}`;
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && now < hit.until) return hit.payload;
  const { payload } = await jwtVerify(token, keys.resolve, {
    algorithms: [SIGNING_ALG],
    issuer,
    audience: TOKEN_AUDIENCE,
    requiredClaims: ["sub", "tenant_id", "environment", "scope", "jti", "exp", "iat"],
  });
  if (cache.size >= VERIFIED_MAX) cache.clear();
  cache.set(key, { payload, until: Math.min(now + VERIFIED_TTL_MS, (payload.exp ?? 0) * 1000) });
  return payload;
}

/** Verifies a bearer JWT (signature, issuer, audience, expiry, claims). The grant is checked by `admitGrant` (grant-rule.ts). */
export async function verifyPartnerToken(token: string, keys: KeyRing, issuer: string): Promise<PartnerClaims> {
  let payload: JWTPayload;
  try {
    payload = await verifyAccessToken(token, keys, issuer);
  } catch (e) {
    const detail =
      e instanceof joseErrors.JWTExpired
        ? "The access token has expired. Request a new one at POST /partner/auth/token."
        : "The access token is malformed, wrongly signed or not issued by this service. Request a new one at POST /partner/auth/token.";
    throw new ApiError("INVALID_TOKEN", detail);
  }
  const { sub, tenant_id, environment, scope, jti, exp } = payload as Record<string, unknown>;
  if (
    typeof tenant_id !== "string" ||
    typeof scope !== "string" ||
    typeof sub !== "string" ||
    typeof exp !== "number" ||
    (environment !== "SANDBOX" && environment !== "PRODUCTION")
  ) {
    throw new ApiError("INVALID_TOKEN", "The access token's claims are malformed. Request a new token.");
  }
  return {
    clientId: sub,
    storeCode: tenant_id,
    environment,
    scopes: new Set(scope.split(" ").filter(isScope)) as ReadonlySet<Scope>,
    tokenId: String(jti),
    expiresAt: exp * 1000,
  };
}
