import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify } from "jose";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, type Tenant } from "../helpers/tenants.js";
import { createApplication, createGrant, createStore, revokeGrant } from "../../src/modules/admin/operations.js";

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { scopes: ["merchant:read", "orders:read"] });
});
afterAll(() => app.close());

function expectProblem(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  const body = res.body as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: `http://api.test.local/errors/${code}`, retryable: status >= 500 || status === 429 });
  for (const f of ["title", "detail", "instance", "requestId", "traceId"]) expect(typeof body[f]).toBe("string");
  expect(body.requestId).toBe(res.headers.get("x-request-id"));
}

describe("token endpoint", () => {
  it("issues a Bearer JWT for JSON credentials with every documented claim", async () => {
    const res = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toMatchObject({
      token_type: "Bearer",
      expires_in: 3600,
      scope: "merchant:read orders:read",
      tenant_id: tenant.storeCode,
      environment: "SANDBOX",
    });
    const token = (res.body as { access_token: string }).access_token;
    const header = decodeProtectedHeader(token);
    expect(header.alg).toBe("EdDSA");
    expect(typeof header.kid).toBe("string");
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: "http://api.test.local",
      aud: "partner-api",
      sub: tenant.clientId,
      tenant_id: tenant.storeCode,
      environment: "SANDBOX",
      scope: "merchant:read orders:read",
    });
    expect(typeof claims.jti).toBe("string");
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
  });

  it("accepts a form-encoded body", async () => {
    const res = await call(app, "POST", "/partner/auth/token", {
      rawBody: new URLSearchParams({ grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
  });

  it("accepts HTTP Basic client authentication", async () => {
    const basic = Buffer.from(`${encodeURIComponent(tenant.clientId)}:${encodeURIComponent(tenant.clientSecret)}`).toString("base64");
    const res = await call(app, "POST", "/partner/auth/token", {
      rawBody: "grant_type=client_credentials",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
    });
    expect(res.status).toBe(200);
    expect((res.body as { tenant_id: string }).tenant_id).toBe(tenant.storeCode);
  });

  it("answers 401 INVALID_CLIENT for a wrong secret or unknown client", async () => {
    const wrong = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: "nope" },
    });
    expectProblem(wrong, 401, "INVALID_CLIENT");
    const unknown = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: "sbx_unknown", client_secret: "nope" },
    });
    expectProblem(unknown, 401, "INVALID_CLIENT");
  });

  it("answers 400 INVALID_REQUEST for a bad grant_type, missing fields or broken JSON", async () => {
    const grant = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "password", client_id: tenant.clientId, client_secret: tenant.clientSecret },
    });
    expectProblem(grant, 400, "INVALID_REQUEST");
    expect((grant.body as { errors: { field: string }[] }).errors[0].field).toBe("grant_type");
    const missing = await call(app, "POST", "/partner/auth/token", { body: { grant_type: "client_credentials" } });
    expectProblem(missing, 400, "INVALID_REQUEST");
    expect((missing.body as { errors: { field: string }[] }).errors.map((e) => e.field).sort()).toEqual(["client_id", "client_secret"]);
    const broken = await call(app, "POST", "/partner/auth/token", { rawBody: "{not json", headers: { "content-type": "application/json" } });
    expectProblem(broken, 400, "INVALID_REQUEST");
  });

  it("needs tenant_id when the Application holds several grants, and refuses one it does not hold", async () => {
    const db = app.services.db;
    const a = await createStore(db, { name: "Multi A", environment: "SANDBOX" });
    const b = await createStore(db, { name: "Multi B", environment: "SANDBOX" });
    const other = await createStore(db, { name: "Not granted", environment: "SANDBOX" });
    const { application, clientSecret } = await createApplication(db, { name: "multi", environment: "SANDBOX", scopes: ["merchant:read"] });
    await createGrant(db, { clientId: application.clientId, storeId: a.id });
    await createGrant(db, { clientId: application.clientId, storeId: b.id });
    const base = { grant_type: "client_credentials", client_id: application.clientId, client_secret: clientSecret };
    expectProblem(await call(app, "POST", "/partner/auth/token", { body: base }), 400, "INVALID_REQUEST");
    expectProblem(await call(app, "POST", "/partner/auth/token", { body: { ...base, tenant_id: other.code } }), 403, "FORBIDDEN");
    const token = await getToken(app, application.clientId, clientSecret, { tenant_id: b.code });
    const store = await call<{ id: string }>(app, "GET", "/public/v1/store", { token });
    expect(store.body.id).toBe(b.id);
  });

  it("answers 403 FORBIDDEN for an Application with no grant", async () => {
    const { application, clientSecret } = await createApplication(app.services.db, { name: "lonely", environment: "SANDBOX", scopes: [] });
    const res = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: application.clientId, client_secret: clientSecret },
    });
    expectProblem(res, 403, "FORBIDDEN");
  });

  it("verifies against the JWKS served at /.well-known/jwks.json", async () => {
    const jwks = createRemoteJWKSet(new URL(`${app.baseUrl}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(tenant.token, jwks, { issuer: "http://api.test.local", audience: "partner-api" });
    expect(payload.tenant_id).toBe(tenant.storeCode);
    const doc = await call<{ keys: Record<string, unknown>[] }>(app, "GET", "/.well-known/jwks.json");
    expect(doc.body.keys.length).toBeGreaterThan(0);
    for (const k of doc.body.keys) expect(k.d).toBeUndefined();
  });
});

describe("the 401/403 matrix", () => {
  it("no token → 401 UNAUTHORIZED", async () => {
    expectProblem(await call(app, "GET", "/public/v1/store"), 401, "UNAUTHORIZED");
  });

  it("malformed, tampered, alg:none, foreign-signed, unknown kid and expired tokens → 401 INVALID_TOKEN", async () => {
    const [h, p, s] = tenant.token.split(".");
    const claims = decodeJwt(tenant.token);
    const tamperedPayload = Buffer.from(JSON.stringify({ ...claims, scope: "merchant:read orders:read orders:write" })).toString("base64url");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${p}.`;
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const kid = decodeProtectedHeader(tenant.token).kid as string;
    const foreign = await new SignJWT({ ...claims }).setProtectedHeader({ alg: "EdDSA", kid }).sign(privateKey);
    const unknownKid = await new SignJWT({ ...claims }).setProtectedHeader({ alg: "EdDSA", kid: "k_unknown" }).sign(privateKey);
    const { key } = app.services.keys.signingKey();
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 }).setProtectedHeader({ alg: "EdDSA", kid }).sign(key);
    for (const bad of ["garbage", `${h}.${tamperedPayload}.${s}`, none, foreign, unknownKid, expired]) {
      expectProblem(await call(app, "GET", "/public/v1/store", { token: bad }), 401, "INVALID_TOKEN");
    }
    const detail = (await call<{ detail: string }>(app, "GET", "/public/v1/store", { token: expired })).body.detail;
    expect(detail).toMatch(/expired/);
  });

  it("a non-Bearer Authorization scheme is 401 INVALID_TOKEN; the scheme is case-insensitive", async () => {
    expectProblem(await call(app, "GET", "/public/v1/store", { headers: { authorization: `Token ${tenant.token}` } }), 401, "INVALID_TOKEN");
    const ok = await call(app, "GET", "/public/v1/store", { headers: { authorization: `bEaReR ${tenant.token}` } });
    expect(ok.status).toBe(200);
  });

  it("missing scope → 403 INSUFFICIENT_SCOPE naming the scope", async () => {
    const limited = await createTenant(app, { scopes: ["orders:read"] });
    const res = await call<{ detail: string }>(app, "GET", "/public/v1/store", { token: limited.token });
    expectProblem(res, 403, "INSUFFICIENT_SCOPE");
    expect(res.body.detail).toContain("merchant:read");
  });

  it("a revoked grant makes existing tokens fail with 403 FORBIDDEN within 5 s", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    expect((await call(app, "GET", "/public/v1/store", { token: t.token })).status).toBe(200);
    await revokeGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline) {
      const res = await call(app, "GET", "/public/v1/store", { token: t.token });
      status = res.status;
      if (status !== 200) {
        expectProblem(res, 403, "FORBIDDEN");
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(403);
    const again = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: t.clientId, client_secret: t.clientSecret },
    });
    expectProblem(again, 403, "FORBIDDEN");
  });

  it("a disabled Application is 403 FORBIDDEN", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    await app.services.db.application.update({ where: { clientId: t.clientId }, data: { status: "DISABLED" } });
    expectProblem(await call(app, "GET", "/public/v1/store", { token: t.token }), 403, "FORBIDDEN");
  });
});

describe("environment isolation", () => {
  it("a token whose environment claim differs from the store's environment is refused", async () => {
    const prod = await createTenant(app, { environment: "PRODUCTION", scopes: ["merchant:read"] });
    const res = await call<{ environment: string }>(app, "GET", "/public/v1/store", { token: prod.token });
    expect(res.status).toBe(200);
    // Re-sign the production token's claims claiming SANDBOX: the store's own environment decides.
    const claims = decodeJwt(prod.token);
    const { key, kid } = app.services.keys.signingKey();
    const forged = await new SignJWT({ ...claims, environment: "SANDBOX" }).setProtectedHeader({ alg: "EdDSA", kid }).sign(key);
    expectProblem(await call(app, "GET", "/public/v1/store", { token: forged }), 403, "FORBIDDEN");
  });

  it("a SANDBOX Application cannot be granted a PRODUCTION store", async () => {
    const db = app.services.db;
    const store = await createStore(db, { name: "Prod", environment: "PRODUCTION" });
    const { application } = await createApplication(db, { name: "sbx", environment: "SANDBOX", scopes: [] });
    await expect(createGrant(db, { clientId: application.clientId, storeId: store.id })).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY" });
  });
});
