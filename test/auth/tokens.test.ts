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

/** A problem; at the token endpoint an OAuth 2.0 error response, application/json with `error` and `error_description` beside it. */
function expectProblem(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = res.body as Record<string, unknown>;
  if (body.instance === "/partner/auth/token") {
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(body).toMatchObject({ error: expect.any(String), error_description: body.detail });
  } else {
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  }
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

describe("token errors follow OAuth 2.0 (RFC 6749 §5.2)", () => {
  const token = (body: Record<string, unknown>, headers: Record<string, string> = {}) => call(app, "POST", "/partner/auth/token", { body, headers });
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    call(app, "POST", "/partner/auth/token", {
      rawBody: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    });

  it("every error carries RFC 6749's `error` beside the problem fields", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const creds = { grant_type: "client_credentials", client_id: t.clientId, client_secret: t.clientSecret };
    const cases: [Promise<Awaited<ReturnType<typeof call>>>, number, string, string][] = [
      [token({ ...creds, client_secret: "nope" }), 401, "INVALID_CLIENT", "invalid_client"],
      [token({ ...creds, grant_type: "password" }), 400, "INVALID_REQUEST", "unsupported_grant_type"],
      [token({ grant_type: "client_credentials" }), 400, "INVALID_REQUEST", "invalid_request"],
      [
        call(app, "POST", "/partner/auth/token", { rawBody: "{not json", headers: { "content-type": "application/json" } }),
        400,
        "INVALID_REQUEST",
        "invalid_request",
      ],
      [
        call(app, "POST", "/partner/auth/token", { rawBody: JSON.stringify(creds), headers: { "content-type": "text/plain" } }),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        "invalid_request",
      ],
      [token({ ...creds, scope: "orders:write" }), 400, "INVALID_REQUEST", "invalid_scope"],
    ];
    for (const [pending, status, code, error] of cases) {
      const res = await pending;
      expectProblem(res, status, code);
      expect(res.body, JSON.stringify(res.body)).toMatchObject({ error });
    }
  });

  it("a 401 carries WWW-Authenticate: Basic only when the client authenticated with HTTP Basic", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    // Credentials in the body: a challenge would make a browser open its sign-in dialog.
    const inBody = await token({ grant_type: "client_credentials", client_id: t.clientId, client_secret: "nope" });
    expect(inBody.status).toBe(401);
    expect(inBody.headers.get("www-authenticate")).toBeNull();
    const basic = await form({ grant_type: "client_credentials" }, { authorization: `Basic ${Buffer.from(`${t.clientId}:nope`).toString("base64")}` });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toBe('Basic realm="partner-api"');
    expect(basic.body).toMatchObject({ code: "INVALID_CLIENT", error: "invalid_client" });
    const malformed = await form({ grant_type: "client_credentials" }, { authorization: `Basic ${Buffer.from("no-colon").toString("base64")}` });
    expect(malformed.status).toBe(401);
    expect(malformed.headers.get("www-authenticate")).toBe('Basic realm="partner-api"');
  });

  it("`scope` narrows the token to the scopes asked for, in JSON and in a form; the response says what was granted", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read", "orders:read", "customers:read"] });
    const creds = { grant_type: "client_credentials", client_id: t.clientId, client_secret: t.clientSecret };
    const narrowed = await token({ ...creds, scope: "orders:read" });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    expect(narrowed.body).toMatchObject({ scope: "orders:read" });
    const access = (narrowed.body as { access_token: string }).access_token;
    expect(decodeJwt(access).scope).toBe("orders:read");
    expect((await call(app, "GET", "/public/v1/orders", { token: access })).status).toBe(200);
    expectProblem(await call(app, "GET", "/public/v1/store", { token: access }), 403, "INSUFFICIENT_SCOPE");

    const two = await form({ ...creds, scope: "customers:read merchant:read" });
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(two.body).toMatchObject({ scope: "merchant:read customers:read" });
    // Without `scope`, every scope the Application holds.
    expect((await token(creds)).body).toMatchObject({ scope: "merchant:read orders:read customers:read" });
  });

  it("a scope the Application is not granted, or no scope at all, is 400 invalid_scope naming it; a non-string scope is invalid_request", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const creds = { grant_type: "client_credentials", client_id: t.clientId, client_secret: t.clientSecret };
    for (const scope of ["merchant:read orders:write", "bogus"]) {
      const res = await token({ ...creds, scope });
      expectProblem(res, 400, "INVALID_REQUEST");
      expect(res.body).toMatchObject({ error: "invalid_scope", errors: [{ field: "scope", code: "INVALID_SCOPE", allowed: ["merchant:read"] }] });
      expect((res.body as { detail: string }).detail).toContain(scope.split(" ").at(-1));
    }
    const typed = await token({ ...creds, scope: ["merchant:read"] });
    expectProblem(typed, 400, "INVALID_REQUEST");
    expect(typed.body).toMatchObject({ error: "invalid_request", errors: [{ field: "scope" }] });
  });
});

describe("the 401/403 matrix", () => {
  it("no token → 401 UNAUTHORIZED", async () => {
    expectProblem(await call(app, "GET", "/public/v1/store"), 401, "UNAUTHORIZED");
  });

  it('a 401 carries WWW-Authenticate: Bearer, with error="invalid_token" only when a token was sent (REST and /graphql)', async () => {
    for (const path of ["/public/v1/store", "/graphql"]) {
      const method = path === "/graphql" ? "POST" : "GET";
      const body = path === "/graphql" ? { query: "{ store { id } }" } : undefined;
      const none = await call(app, method, path, { body });
      expectProblem(none, 401, "UNAUTHORIZED");
      expect(none.headers.get("www-authenticate"), path).toBe("Bearer");
      for (const authorization of ["Bearer garbage", "Token abc", "Bearer adm_unknown_key"]) {
        const bad = await call(app, method, path, { body, headers: { authorization } });
        expectProblem(bad, 401, "INVALID_TOKEN");
        expect(bad.headers.get("www-authenticate"), `${path} ${authorization}`).toBe('Bearer error="invalid_token"');
      }
    }
    expect((await call(app, "GET", "/public/v1/store", { token: tenant.token })).headers.get("www-authenticate")).toBeNull();
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

  it("missing scope → 403 INSUFFICIENT_SCOPE naming the scope, in the detail and in RFC 6750's challenge", async () => {
    const limited = await createTenant(app, { scopes: ["orders:read"] });
    const res = await call<{ detail: string }>(app, "GET", "/public/v1/store", { token: limited.token });
    expectProblem(res, 403, "INSUFFICIENT_SCOPE");
    expect(res.body.detail).toContain("merchant:read");
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="merchant:read"');
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
