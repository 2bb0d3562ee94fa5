import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as client from "openid-client";
import { ClientCredentials, type ModuleOptions } from "simple-oauth2";
import { decodeJwt } from "jose";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { freePort } from "../helpers/process.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createApplication, createGrant, createStore } from "../../src/modules/admin/operations.js";
import { createPortalLink } from "../../src/modules/admin/portal-links.js";
import { SCOPES } from "../../src/platform/auth/scopes.js";
import { isRecord } from "../../src/platform/json.js";

/**
 * Off-the-shelf OAuth 2.0 clients, unmodified, against the real service: openid-client discovers it (RFC 8414) and
 * simple-oauth2 is pointed at it; both get tokens and read every error as an OAuth error (RFC 6749 §5.2). The
 * service's PUBLIC_BASE_URL is its real address, so the issuer it publishes is the address discovery starts from.
 */

let app: TestApp;
let base: string;
let tenant: Tenant;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  app = await startTestApp({ PUBLIC_BASE_URL: base }, { port });
  tenant = await createTenant(app, { scopes: ["merchant:read", "orders:read"] });
});
afterAll(() => app?.close());

const discover = (t: { clientId: string; clientSecret: string }, auth: "basic" | "post") =>
  client.discovery(
    new URL(base),
    t.clientId,
    undefined,
    auth === "basic" ? client.ClientSecretBasic(t.clientSecret) : client.ClientSecretPost(t.clientSecret),
    { algorithm: "oauth2", execute: [client.allowInsecureRequests] },
  );

/** What a promise rejected with; fails when it resolved. */
async function rejection(pending: Promise<unknown>): Promise<unknown> {
  try {
    await pending;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** The OAuth error openid-client read from the body: `error` and `error_description`, and the problem beside them. */
async function oauthError(pending: Promise<unknown>): Promise<client.ResponseBodyError> {
  const e = await rejection(pending);
  if (!(e instanceof client.ResponseBodyError)) throw new Error(`not a ResponseBodyError: ${String(e)}`);
  return e;
}

describe("RFC 8414 metadata", () => {
  it("names the issuer the tokens carry, the endpoints, the grant, the client authentication methods and every scope", async () => {
    const res = await call(app, "GET", "/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toEqual({
      issuer: base,
      token_endpoint: `${base}/partner/auth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      revocation_endpoint: `${base}/partner/auth/revoke`,
      grant_types_supported: ["client_credentials"],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: [...SCOPES],
      service_documentation: `${base}/docs`,
    });
    expect(decodeJwt(tenant.token).iss).toBe(base);
  });
});

describe("openid-client", () => {
  it("discovers the service and gets a token with client_secret_basic and with client_secret_post", async () => {
    for (const auth of ["basic", "post"] as const) {
      const config = await discover(tenant, auth);
      expect(config.serverMetadata().token_endpoint).toBe(`${base}/partner/auth/token`);
      const tokens = await client.clientCredentialsGrant(config);
      expect(tokens).toMatchObject({ token_type: "bearer", scope: "merchant:read orders:read", tenant_id: tenant.storeCode });
      expect(tokens.expires_in).toBe(3600);
      expect((await call(app, "GET", "/public/v1/store", { token: tokens.access_token })).status).toBe(200);
    }
  });

  it("narrows the scope", async () => {
    const tokens = await client.clientCredentialsGrant(await discover(tenant, "post"), { scope: "orders:read" });
    expect(tokens.scope).toBe("orders:read");
    expect((await call(app, "GET", "/public/v1/orders", { token: tokens.access_token })).status).toBe(200);
    const refused = await call(app, "GET", "/public/v1/store", { token: tokens.access_token });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="merchant:read"');
  });

  it("reads invalid_client, invalid_scope, unsupported_grant_type and invalid_request as OAuth errors", async () => {
    const wrong = { clientId: tenant.clientId, clientSecret: "wrong" };
    const post = await oauthError(client.clientCredentialsGrant(await discover(wrong, "post")));
    expect(post).toMatchObject({ status: 401, error: "invalid_client", error_description: "Unknown client_id or wrong client_secret." });
    expect(post.cause).toMatchObject({ code: "INVALID_CLIENT", status: 401, detail: "Unknown client_id or wrong client_secret." });
    // A client that sent HTTP Basic credentials is challenged for them again (RFC 6749 §5.2): the library says so.
    const basic = await rejection(client.clientCredentialsGrant(await discover(wrong, "basic")));
    if (!(basic instanceof client.WWWAuthenticateChallengeError)) throw new Error(`not a challenge: ${String(basic)}`);
    expect(basic.cause).toEqual([{ scheme: "basic", parameters: { realm: "partner-api" } }]);
    expect(await basic.response.json()).toMatchObject({ error: "invalid_client", code: "INVALID_CLIENT" });

    const config = await discover(tenant, "basic");
    const scope = await oauthError(client.clientCredentialsGrant(config, { scope: "orders:write" }));
    expect(scope).toMatchObject({ status: 400, error: "invalid_scope" });
    expect(scope.error_description).toContain("orders:write");
    const grant = await oauthError(client.genericGrantRequest(config, "password", { username: "u", password: "p" }));
    expect(grant).toMatchObject({ status: 400, error: "unsupported_grant_type", error_description: 'Only grant_type "client_credentials" is supported.' });

    // An Application granted on two stores must name one (tenant_id).
    const db = app.services.db;
    const [a, b] = [await createStore(db, { name: "Two A", environment: "SANDBOX" }), await createStore(db, { name: "Two B", environment: "SANDBOX" })];
    const { application, clientSecret } = await createApplication(db, { name: "two", environment: "SANDBOX", scopes: ["merchant:read"] });
    for (const store of [a, b]) await createGrant(db, { clientId: application.clientId, storeId: store.id });
    const two = await discover({ clientId: application.clientId, clientSecret }, "post");
    const request = await oauthError(client.clientCredentialsGrant(two));
    expect(request).toMatchObject({ status: 400, error: "invalid_request" });
    expect(request.error_description).toContain("tenant_id");
    expect((await client.clientCredentialsGrant(two, { tenant_id: b.code })).tenant_id).toBe(b.code);
  });
});

/** simple-oauth2's client for the tenant, authenticating in the body or with HTTP Basic. */
function simple(t: { clientId: string; clientSecret: string }, authorizationMethod: "body" | "header"): ClientCredentials {
  const options: ModuleOptions = {
    client: { id: t.clientId, secret: t.clientSecret },
    auth: { tokenHost: base, tokenPath: "/partner/auth/token" },
    options: { authorizationMethod },
  };
  return new ClientCredentials(options);
}

/** The error body simple-oauth2 (Boom over wreck) hands over as `data.payload`, parsed because it is application/json. */
async function simpleError(pending: Promise<unknown>): Promise<Record<string, unknown>> {
  const e = await rejection(pending);
  const payload = isRecord(e) && isRecord(e.data) ? e.data.payload : undefined;
  if (!isRecord(payload)) throw new Error(`no parsed error payload: ${String(e)}`);
  return payload;
}

describe("simple-oauth2", () => {
  it("gets a token authenticating in the body and with HTTP Basic, narrowed to a scope", async () => {
    for (const method of ["body", "header"] as const) {
      const accessToken = await simple(tenant, method).getToken({ scope: "merchant:read" });
      expect(accessToken.token).toMatchObject({ token_type: "Bearer", scope: "merchant:read", tenant_id: tenant.storeCode });
      expect(accessToken.expired()).toBe(false);
      const token = accessToken.token.access_token;
      if (typeof token !== "string") throw new Error("no access_token");
      expect((await call(app, "GET", "/public/v1/store", { token })).status).toBe(200);
    }
  });

  it("hands over each error with `error` and `error_description`", async () => {
    const wrong = await simpleError(simple({ clientId: tenant.clientId, clientSecret: "wrong" }, "body").getToken({}));
    expect(wrong).toMatchObject({ error: "invalid_client", error_description: "Unknown client_id or wrong client_secret.", code: "INVALID_CLIENT" });
    const scope = await simpleError(simple(tenant, "header").getToken({ scope: "catalog:write" }));
    expect(scope).toMatchObject({ error: "invalid_scope", code: "INVALID_REQUEST", status: 400 });
    expect(String(scope.error_description)).toContain("catalog:write");
  });
});

describe("token endpoint errors are OAuth 2.0 error responses", () => {
  it("application/json with `error` and `error_description` beside every problem field", async () => {
    const res = await call(app, "POST", "/partner/auth/token", {
      body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: "nope" },
      headers: { "x-request-id": "0b7e3c1a-5f2d-4c8e-9a61-2d4f8b3e7c10" },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body).toEqual({
      error: "invalid_client",
      error_description: "Unknown client_id or wrong client_secret.",
      type: `${base}/errors/INVALID_CLIENT`,
      title: "Invalid client credentials",
      status: 401,
      code: "INVALID_CLIENT",
      detail: "Unknown client_id or wrong client_secret.",
      instance: "/partner/auth/token",
      requestId: "0b7e3c1a-5f2d-4c8e-9a61-2d4f8b3e7c10",
      traceId: "0b7e3c1a5f2d4c8e9a612d4f8b3e7c10",
      retryable: false,
    });
    // Credentials in the body: no challenge, so a browser opens no sign-in dialog.
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("so does the portal link exchange; a refused link is invalid_grant", async () => {
    const res = await call(app, "POST", "/partner/auth/portal-link", { body: { link_secret: "no-such-link" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body).toMatchObject({ error: "invalid_grant", code: "INVALID_TOKEN", error_description: expect.any(String), requestId: expect.any(String) });
  });

  it("a cross-site browser post is 403 invalid_request at each token endpoint; same-origin, same-site and none pass", async () => {
    const { url } = await createPortalLink(
      app.services.db,
      { clientId: tenant.clientId, storeId: tenant.storeId },
      { baseUrl: base, maxTtlMinutes: 60, createdBy: "test" },
    );
    const linkSecret = new URLSearchParams(new URL(url).hash.slice(1)).get("link_secret");
    const posts: [string, Record<string, unknown>][] = [
      ["/partner/auth/token", { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret }],
      ["/partner/auth/revoke", { token: "whatever", client_id: tenant.clientId, client_secret: tenant.clientSecret }],
      ["/partner/auth/portal-link", { link_secret: linkSecret }],
    ];
    for (const [path, body] of posts) {
      const res = await call(app, "POST", path, { body, headers: { "sec-fetch-site": "cross-site" } });
      expect(res.status, path).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.body).toMatchObject({
        code: "FORBIDDEN",
        error: "invalid_request",
        error_description: expect.stringContaining("Cross-site browser requests are refused"),
        errors: [{ field: "Sec-Fetch-Site", code: "CROSS_SITE" }],
      });
    }
    // The link was not used by the refused post: it still signs in, same-origin.
    const [token, revoke, link] = posts;
    expect((await call(app, "POST", link[0], { body: link[1], headers: { "sec-fetch-site": "same-origin" } })).status).toBe(200);
    for (const site of ["same-site", "none"]) {
      expect((await call(app, "POST", token[0], { body: token[1], headers: { "sec-fetch-site": site } })).status, site).toBe(200);
    }
    expect((await call(app, "POST", revoke[0], { body: revoke[1], headers: { "sec-fetch-site": "same-origin" } })).status).toBe(200);
  });
});
