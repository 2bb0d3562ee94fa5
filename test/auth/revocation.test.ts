import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as client from "openid-client";
import { createClient, type Client } from "graphql-sse";
import { SignJWT, decodeJwt, generateKeyPair } from "jose";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { freePort } from "../helpers/process.js";
import { call, createTenant, getToken, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "../platform/support.js";
import { removeExpiredRevocations } from "../../workers/tasks/cleanup-events.js";
import { lastSequence } from "../../src/modules/events/feed.js";

/**
 * Token revocation (RFC 7009) at POST /partner/auth/revoke: a revoked access token is 401 INVALID_TOKEN on REST,
 * /graphql and live streams, on this API process at once and on another one (its own OS process, on the same
 * database) within a second, by the notification PostgreSQL sends at the revocation's commit.
 */

/** From the revocation's answer to the other process refusing the token, at most. */
const NOTIFIED_MS = 1000;

let app: TestApp;
let other: ApiProcess;
let base: string;
let tenant: Tenant;
/** Revoked before `other` started: it reads the revocations made so far when it starts. */
let revokedBeforeStart: string;

const REVOKE = "/partner/auth/revoke";

/** A request to `other`, the second API process. */
async function onOther(method: string, path: string, opts: { token: string; body?: unknown }): Promise<ApiResponse<Record<string, unknown>>> {
  const res = await fetch(`${other.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${opts.token}`, ...(opts.body === undefined ? {} : { "content-type": "application/json" }) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const body: unknown = await res.json();
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error(`not an object: ${JSON.stringify(body)}`);
  return { status: res.status, headers: res.headers, body: { ...body } };
}

const creds = (t: Tenant) => ({ client_id: t.clientId, client_secret: t.clientSecret });

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // The streams' periodic check at its most, so only the notification can end a stream within NOTIFIED_MS.
  app = await startTestApp({ PUBLIC_BASE_URL: base, GRAPHQL_STREAM_CHECK_MS: "5000" }, { port });
  tenant = await createTenant(app, { scopes: ["merchant:read", "orders:read"] });
  revokedBeforeStart = await getToken(app, tenant.clientId, tenant.clientSecret);
  expect((await call(app, "POST", REVOKE, { body: { token: revokedBeforeStart, ...creds(tenant) } })).status).toBe(200);
  other = await startApiProcess(app.databaseUrl, { PUBLIC_BASE_URL: base });
}, 150_000);

afterAll(async () => {
  if (other) await stopApiProcess(other);
  await app?.close();
});

/** The answer to a revoked token: 401 INVALID_TOKEN saying so, with RFC 6750's challenge. */
function expectRevoked(res: ApiResponse<unknown>): void {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
  expect(res.body).toMatchObject({ code: "INVALID_TOKEN", detail: expect.stringContaining("revoked") });
}

/** Polls the other process until it refuses the token; how long that took after `since`. */
async function refusedOnOtherWithin(token: string, since: number): Promise<number> {
  await expect.poll(async () => (await onOther("GET", "/public/v1/store", { token })).status, { timeout: NOTIFIED_MS * 5, interval: 5 }).toBe(401);
  return performance.now() - since;
}

describe("revocation reaches every process", () => {
  it("a token revoked before a process started is refused there from its first request", async () => {
    expectRevoked(await onOther("GET", "/public/v1/store", { token: revokedBeforeStart }));
    expectRevoked(await call(app, "GET", "/public/v1/store", { token: revokedBeforeStart }));
  });

  it("openid-client revokes with client_secret_basic and with client_secret_post; REST and /graphql refuse the token everywhere", async () => {
    for (const auth of [client.ClientSecretBasic(tenant.clientSecret), client.ClientSecretPost(tenant.clientSecret)]) {
      const config = await client.discovery(new URL(base), tenant.clientId, undefined, auth, { algorithm: "oauth2", execute: [client.allowInsecureRequests] });
      const { access_token: token } = await client.clientCredentialsGrant(config);
      // Both processes have verified the token and admitted its grant: their caches hold it.
      for (let i = 0; i < 2; i++) {
        expect((await onOther("GET", "/public/v1/store", { token })).status).toBe(200);
        expect((await call(app, "GET", "/public/v1/store", { token })).status).toBe(200);
      }
      await client.tokenRevocation(config, token, { token_type_hint: "access_token" });
      const revokedAt = performance.now();
      expectRevoked(await call(app, "GET", "/public/v1/store", { token }));
      expect(await refusedOnOtherWithin(token, revokedAt)).toBeLessThan(NOTIFIED_MS);
      expectRevoked(await onOther("GET", "/public/v1/store", { token }));
      expectRevoked(await onOther("POST", "/graphql", { token, body: { query: "{ store { id } }" } }));
      expectRevoked(await call(app, "POST", "/graphql", { token, body: { query: "{ store { id } }" } }));
    }
  });

  it("the token itself in Authorization: Bearer revokes it, and ends its live stream on another process", async () => {
    const token = await getToken(app, tenant.clientId, tenant.clientSecret);
    const stream = await openStream(token, tenant.storeId);
    expect((await call(app, "GET", "/public/v1/store", { token })).status).toBe(200);
    const res = await fetch(`${other.baseUrl}${REVOKE}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
    });
    const revokedAt = performance.now();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({});
    await expect.poll(() => stream.ended, { timeout: NOTIFIED_MS * 5, interval: 5 }).not.toBeNull();
    expect(stream.errors).toEqual([{ code: "INVALID_TOKEN", message: expect.stringContaining("revoked") }]);
    expect((stream.ended ?? Number.POSITIVE_INFINITY) - revokedAt).toBeLessThan(NOTIFIED_MS);
    expectRevoked(await call(app, "GET", "/public/v1/store", { token }));
  });
});

describe("what a revocation request may do", () => {
  it("answers 200 {} for unknown, malformed, foreign, expired and already revoked tokens", async () => {
    const claims = decodeJwt(tenant.token);
    const { key, kid } = app.services.keys.signingKey();
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 })
      .setProtectedHeader({ alg: "EdDSA", kid, typ: "at+jwt" })
      .sign(key);
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const foreign = await new SignJWT({ ...claims }).setProtectedHeader({ alg: "EdDSA", kid }).sign(privateKey);
    for (const token of ["garbage", "a.b.c", foreign, expired, revokedBeforeStart]) {
      const res = await call(app, "POST", REVOKE, { body: { token, token_type_hint: "refresh_token", ...creds(tenant) } });
      expect(res.status, token).toBe(200);
      expect(res.body).toEqual({});
    }
    // The bearer form of an already revoked token: nothing left to do.
    expect((await call(app, "POST", REVOKE, { token: revokedBeforeStart, body: { token: revokedBeforeStart } })).status).toBe(200);
    expect((await call(app, "GET", "/public/v1/store", { token: tenant.token })).status).toBe(200);
  });

  it("a client cannot revoke another client's token: 200, and the token keeps working", async () => {
    const intruder = await createTenant(app, { scopes: ["merchant:read"] });
    const token = await getToken(app, tenant.clientId, tenant.clientSecret);
    const res = await call(app, "POST", REVOKE, { body: { token, ...creds(intruder) } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const { jti } = decodeJwt(token);
    expect(await app.services.db.revokedToken.count({ where: { jti } })).toBe(0);
    expect((await call(app, "GET", "/public/v1/store", { token })).status).toBe(200);
    expect((await onOther("GET", "/public/v1/store", { token })).status).toBe(200);
  });

  it("refuses as the token endpoint does: OAuth JSON errors, a Basic challenge only for Basic credentials", async () => {
    const token = await getToken(app, tenant.clientId, tenant.clientSecret);
    const missing = await call(app, "POST", REVOKE, { body: creds(tenant) });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toBe("application/json");
    expect(missing.body).toMatchObject({ error: "invalid_request", code: "INVALID_REQUEST", errors: [{ field: "token", code: "REQUIRED" }] });

    const unauthenticated = await call(app, "POST", REVOKE, { body: { token } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toMatchObject({ error: "invalid_client", code: "INVALID_CLIENT" });
    expect(unauthenticated.headers.get("www-authenticate")).toBeNull();

    const wrongInBody = await call(app, "POST", REVOKE, { body: { token, client_id: tenant.clientId, client_secret: "wrong" } });
    expect(wrongInBody.status).toBe(401);
    expect(wrongInBody.body).toMatchObject({ error: "invalid_client", error_description: "Unknown client_id or wrong client_secret." });
    expect(wrongInBody.headers.get("www-authenticate")).toBeNull();

    const basic = Buffer.from(`${tenant.clientId}:wrong`).toString("base64");
    const wrongBasic = await call(app, "POST", REVOKE, {
      rawBody: new URLSearchParams({ token }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
    });
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.headers.get("www-authenticate")).toBe('Basic realm="partner-api"');

    // A bearer token proves only itself.
    const another = await getToken(app, tenant.clientId, tenant.clientSecret);
    const mismatch = await call(app, "POST", REVOKE, { token: another, body: { token } });
    expect(mismatch.status).toBe(401);
    expect(mismatch.body).toMatchObject({ error: "invalid_client", code: "INVALID_CLIENT" });
    for (const t of [token, another]) expect((await call(app, "GET", "/public/v1/store", { token: t })).status).toBe(200);
  });
});

describe("the revoked tokens kept", () => {
  it("the hourly sweep removes the revocations of tokens that have expired, and keeps the others", async () => {
    const { db } = app.services;
    const past = new Date(Date.now() - 1000);
    await db.revokedToken.create({ data: { jti: "expired-revocation", clientId: tenant.clientId, expiresAt: past } });
    expect(await removeExpiredRevocations(app.services)).toBeGreaterThanOrEqual(1);
    expect(await db.revokedToken.count({ where: { jti: "expired-revocation" } })).toBe(0);
    const { jti } = decodeJwt(revokedBeforeStart);
    expect(await db.revokedToken.count({ where: { jti } })).toBe(1);
  });
});

/** A live stream of the store's events on `app`: the errors it ended with and when (performance.now()). */
interface Stream {
  errors: { code: unknown; message: string }[];
  ended: number | null;
}

const clients: Client[] = [];
afterAll(() => {
  for (const c of clients) c.dispose();
});

/** Opens a storeEvents subscription from the store's latest event; resolves once the server has answered it. */
async function openStream(token: string, storeId: string): Promise<Stream> {
  const after = String(await lastSequence(app.services.db, storeId));
  const stream: Stream = { errors: [], ended: null };
  await new Promise<void>((answered) => {
    const sse = createClient({
      url: `${app.baseUrl}/graphql`,
      headers: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      on: { connected: () => answered() },
    });
    clients.push(sse);
    sse.subscribe(
      { query: "subscription ($storeId: ID, $after: String) { storeEvents(storeId: $storeId, after: $after) { eventId } }", variables: { storeId, after } },
      {
        next: (result) => {
          for (const e of result.errors ?? []) stream.errors.push({ code: e.extensions?.code, message: e.message });
        },
        error: () => {
          stream.ended = performance.now();
          answered();
        },
        complete: () => {
          stream.ended = performance.now();
        },
      },
    );
  });
  return stream;
}
