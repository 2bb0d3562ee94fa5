import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, getToken, grantChangeSeen } from "../helpers/tenants.js";
import { createApplication, createGrant, createStore, revokeGrant } from "../../src/modules/admin/operations.js";
import { createServer, connect, type Server, type Socket } from "node:net";
import { issueToken } from "../../src/platform/auth/tokens.js";
import { freePort } from "../../src/platform/db/embedded.js";
import { expectProblem, startOfFreshMinute } from "./support.js";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.js";

const hasRedis = await redisReachable();
const backends: { name: string; skip: boolean; env: Record<string, string> }[] = [
  { name: "PostgreSQL", skip: false, env: { RATE_LIMIT_BACKEND: "postgres" } },
  { name: "memory", skip: false, env: { RATE_LIMIT_BACKEND: "memory" } },
  { name: "Redis", skip: !hasRedis, env: { RATE_LIMIT_BACKEND: "redis", REDIS_URL: TEST_REDIS_URL } },
];

for (const { name, skip, env } of backends)
  describe.skipIf(skip)(`rate limits over HTTP, counters in ${name}`, () => {
    let app: TestApp;

    beforeAll(async () => {
      // Small limits so each case reaches them in a handful of requests.
      app = await startTestApp({
        RATE_LIMIT_SANDBOX_STORE: "4",
        RATE_LIMIT_SANDBOX_APP: "6",
        RATE_LIMIT_PRODUCTION_STORE: "7",
        RATE_LIMIT_PRODUCTION_APP: "9",
        RATE_LIMIT_TOKEN_PER_CLIENT: "3",
        ...env,
      });
      await startOfFreshMinute(8);
    });
    afterAll(() => app?.close());

    function rateHeaders(res: { headers: Headers }) {
      return {
        limit: res.headers.get("x-ratelimit-limit"),
        remaining: res.headers.get("x-ratelimit-remaining"),
        reset: Number(res.headers.get("x-ratelimit-reset")),
      };
    }

    describe("API rate limits over HTTP", () => {
      it("every authenticated response carries the headers, errors after authentication included; 429 adds Retry-After", async () => {
        const t = await createTenant(app, { scopes: ["orders:read"] });
        const now = Date.now() / 1000;
        // 403 INSUFFICIENT_SCOPE (the tenant lacks merchant:read), 404 and 405 all come after authentication.
        const denied = await call(app, "GET", "/public/v1/store", { token: t.token });
        expectProblem(denied, 403, "INSUFFICIENT_SCOPE");
        expect(rateHeaders(denied)).toMatchObject({ limit: "4", remaining: "3" });
        expect(rateHeaders(denied).reset).toBeGreaterThan(now);
        expect(rateHeaders(denied).reset).toBeLessThanOrEqual(now + 121);
        expect(rateHeaders(await call(app, "GET", "/public/v1/nothing-here", { token: t.token }))).toMatchObject({ remaining: "2" });
        expect(rateHeaders(await call(app, "DELETE", "/public/v1/store", { token: t.token }))).toMatchObject({ remaining: "1" });
        expect(rateHeaders(await call(app, "GET", "/public/v1/store", { token: t.token }))).toMatchObject({ remaining: "0" });

        const refused = await call(app, "GET", "/public/v1/store", { token: t.token });
        const body = expectProblem(refused, 429, "RATE_LIMIT_EXCEEDED");
        expect(body.detail).toMatch(/4 requests per minute for this store/);
        const retryAfter = refused.headers.get("retry-after");
        expect(retryAfter).toMatch(/^\d+$/);
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(retryAfter)).toBeLessThanOrEqual(121);
        expect(rateHeaders(refused)).toMatchObject({ limit: "4", remaining: "0" });
        expect(rateHeaders(refused).reset).toBeGreaterThanOrEqual(Math.floor(now) + Number(retryAfter) - 1);

        // Unauthenticated responses carry none: there is no subject to count.
        const anonymous = await call(app, "GET", "/public/v1/store");
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get("x-ratelimit-limit")).toBeNull();
      });

      it("a request whose grant is revoked is refused at once, carries no headers and takes no slot", async () => {
        const t = await createTenant(app, { scopes: ["merchant:read"] });
        expect(rateHeaders(await call(app, "GET", "/public/v1/store", { token: t.token }))).toMatchObject({ remaining: "3" });
        await revokeGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
        await grantChangeSeen(app);
        for (let i = 0; i < 5; i++) {
          const refused = await call(app, "GET", "/public/v1/store", { token: t.token });
          expectProblem(refused, 403, "FORBIDDEN");
          expect(refused.headers.get("x-ratelimit-limit")).toBeNull();
        }
        // Granted again, the same token counts on from the one request before the revocation.
        await createGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
        expect(rateHeaders(await call(app, "GET", "/public/v1/store", { token: t.token }))).toMatchObject({ remaining: "2" });
      });

      it("one store at its limit does not limit another store", async () => {
        const a = await createTenant(app, { scopes: ["merchant:read"] });
        const b = await createTenant(app, { scopes: ["merchant:read"] });
        for (let i = 0; i < 4; i++) expect((await call(app, "GET", "/public/v1/store", { token: a.token })).status).toBe(200);
        expect((await call(app, "GET", "/public/v1/store", { token: a.token })).status).toBe(429);
        expect((await call(app, "GET", "/public/v1/store", { token: b.token })).status).toBe(200);
      });

      it("the Application's limit covers all of its stores together, and headers describe the tighter limit", async () => {
        const db = app.services.db;
        const s1 = await createStore(db, { name: "App limit one", environment: "SANDBOX" });
        const s2 = await createStore(db, { name: "App limit two", environment: "SANDBOX" });
        const { application, clientSecret } = await createApplication(db, { name: "two stores", environment: "SANDBOX", scopes: ["merchant:read"] });
        await createGrant(db, { clientId: application.clientId, storeId: s1.id });
        await createGrant(db, { clientId: application.clientId, storeId: s2.id });
        const t1 = await getToken(app, application.clientId, clientSecret, { tenant_id: s1.code });
        const t2 = await getToken(app, application.clientId, clientSecret, { tenant_id: s2.code });

        for (let i = 0; i < 4; i++) expect((await call(app, "GET", "/public/v1/store", { token: t1 })).status).toBe(200);
        // Store two has 4 of its own left, but the Application only 2 of 6: the headers report the Application.
        const first = await call(app, "GET", "/public/v1/store", { token: t2 });
        expect(first.status).toBe(200);
        expect(rateHeaders(first)).toMatchObject({ limit: "6", remaining: "1" });
        expect((await call(app, "GET", "/public/v1/store", { token: t2 })).status).toBe(200);
        const refused = await call(app, "GET", "/public/v1/store", { token: t2 });
        const body = expectProblem(refused, 429, "RATE_LIMIT_EXCEEDED");
        expect(body.detail).toMatch(/6 requests per minute for this Application/);
        expect(rateHeaders(refused)).toMatchObject({ limit: "6", remaining: "0" });
      });

      it("PRODUCTION tokens get the PRODUCTION limits", async () => {
        const p = await createTenant(app, { environment: "PRODUCTION", scopes: ["merchant:read"] });
        const res = await call(app, "GET", "/public/v1/store", { token: p.token });
        expect(rateHeaders(res)).toMatchObject({ limit: "7", remaining: "6" });
      });

      it("partner tokens on /graphql share the same counters; administrators are not limited", async () => {
        const t = await createTenant(app, { scopes: ["merchant:read"] });
        for (let i = 0; i < 3; i++) expect((await call(app, "GET", "/public/v1/store", { token: t.token })).status).toBe(200);
        const gql = await fetch(`${app.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${t.token}` },
          body: JSON.stringify({ query: "{ store { id } }" }),
        });
        expect(gql.status).toBe(200);
        expect(gql.headers.get("x-ratelimit-remaining")).toBe("0");
        const refused = await fetch(`${app.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${t.token}` },
          body: JSON.stringify({ query: "{ store { id } }" }),
        });
        expect(refused.status).toBe(429);
        expect(((await refused.json()) as { code: string }).code).toBe("RATE_LIMIT_EXCEEDED");

        const admin = await fetch(`${app.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_KEY}` },
          body: JSON.stringify({ query: "{ __typename }" }),
        });
        expect(admin.status).toBe(200);
        expect(admin.headers.get("x-ratelimit-limit")).toBeNull();
      });
    });

    describe("token endpoint limit", () => {
      it("limits token requests per client_id, failed ones included, and they do not count toward the API limits", async () => {
        const db = app.services.db;
        const store = await createStore(db, { name: "Token limit", environment: "SANDBOX" });
        const { application, clientSecret } = await createApplication(db, { name: "stuffed", environment: "SANDBOX", scopes: ["merchant:read"] });
        await createGrant(db, { clientId: application.clientId, storeId: store.id });
        const body = { grant_type: "client_credentials", client_id: application.clientId, client_secret: clientSecret };

        const wrong = await call(app, "POST", "/partner/auth/token", { body: { ...body, client_secret: "guess" } });
        expectProblem(wrong, 401, "INVALID_CLIENT");
        expect(wrong.headers.get("x-ratelimit-limit")).toBe("3");
        expect(wrong.headers.get("x-ratelimit-remaining")).toBe("2");
        const ok = await call<{ access_token: string }>(app, "POST", "/partner/auth/token", { body });
        expect(ok.status).toBe(200);
        const basic = Buffer.from(`${application.clientId}:${clientSecret}`).toString("base64");
        const viaBasic = await call(app, "POST", "/partner/auth/token", {
          rawBody: "grant_type=client_credentials",
          headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
        });
        expect(viaBasic.status).toBe(200);
        expect(viaBasic.headers.get("x-ratelimit-remaining")).toBe("0");

        const refused = await call(app, "POST", "/partner/auth/token", { body });
        const problem = expectProblem(refused, 429, "RATE_LIMIT_EXCEEDED");
        expect(problem.detail).toMatch(/token requests of this client_id/);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

        // Another client is unaffected, and the three token requests left the store's API budget whole.
        const other = await createTenant(app, { scopes: ["merchant:read"] });
        expect(other.token).toBeTruthy();
        const api = await call(app, "GET", "/public/v1/store", { token: ok.body.access_token });
        expect(api.status).toBe(200);
        expect(api.headers.get("x-ratelimit-remaining")).toBe("3");
      });
    });
  });

/** A TCP proxy to Redis that the test can cut and restore, as a network failure would. */
async function redisProxy(port: number): Promise<{ cut(): Promise<void>; restore(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  let server: Server;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect({ host: target.hostname, port: Number(target.port) });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("error", () => undefined);
          s.on("close", () => {
            sockets.delete(s);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      }).listen(port, "127.0.0.1", () => resolve());
    });
  await open();
  return {
    cut: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
    restore: open,
  };
}

describe("Redis unreachable in redis mode", () => {
  /** A granted tenant and a token minted in-process: the token endpoint needs the counters too. */
  async function tenant(app: TestApp): Promise<string> {
    const db = app.services.db;
    const store = await createStore(db, { name: "No Redis", environment: "SANDBOX" });
    const { application, clientSecret } = await createApplication(db, { name: "no redis", environment: "SANDBOX", scopes: ["merchant:read"] });
    await createGrant(db, { clientId: application.clientId, storeId: store.id });
    const settings = { issuer: app.services.issuer, ttlSeconds: 600 };
    const body = { grant_type: "client_credentials", client_id: application.clientId, client_secret: clientSecret };
    return (await issueToken(db, app.services.keys, settings, body)).access_token;
  }

  it("fails closed: API and token requests get 503 with Retry-After, /readyz is not ready; never a 500", async () => {
    const app = await startTestApp({ RATE_LIMIT_BACKEND: "redis", REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      const token = await tenant(app);
      const res = await call(app, "GET", "/public/v1/store", { token });
      expectProblem(res, 503, "SERVICE_UNAVAILABLE");
      expect(res.headers.get("retry-after")).toBe("2");
      const issued = await call(app, "POST", "/partner/auth/token", { body: { grant_type: "client_credentials", client_id: "x", client_secret: "y" } });
      expectProblem(issued, 503, "SERVICE_UNAVAILABLE");
      expect((await fetch(`${app.baseUrl}/readyz`)).status).toBe(503);
    } finally {
      await app.close();
    }
  });

  it.skipIf(!hasRedis)("answers 503 while Redis is cut off and counts on from where it was once it is back", async () => {
    const port = await freePort();
    const proxy = await redisProxy(port);
    const app = await startTestApp({ RATE_LIMIT_BACKEND: "redis", REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_SANDBOX_STORE: "50" });
    try {
      await startOfFreshMinute(10);
      const token = await tenant(app);
      expect((await call(app, "GET", "/public/v1/store", { token })).headers.get("x-ratelimit-remaining")).toBe("49");
      await proxy.cut();
      expectProblem(await call(app, "GET", "/public/v1/store", { token }), 503, "SERVICE_UNAVAILABLE");
      expect((await fetch(`${app.baseUrl}/readyz`)).status).toBe(503);
      await proxy.restore();
      const deadline = Date.now() + 5000;
      while ((await fetch(`${app.baseUrl}/readyz`)).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const back = await call(app, "GET", "/public/v1/store", { token });
      expect(back.status).toBe(200);
      expect(back.headers.get("x-ratelimit-remaining")).toBe("48");
    } finally {
      await app.close();
      await proxy.cut();
    }
  });
});
