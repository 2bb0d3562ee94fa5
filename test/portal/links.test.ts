import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { runCli } from "../helpers/process.js";
import { createAdminKey, revokeGrant } from "../../src/modules/admin/operations.js";
import { sha256Hex } from "../../src/platform/crypto/hash.js";

/**
 * Portal links: an administrator's one-time sign-in link for an Application on a store, exchanged once at
 * POST /partner/auth/portal-link for an ordinary access token. Real server, real database, the real admin CLI.
 */

let app: TestApp;
let tenant: Tenant;

const CREATE = `mutation($input: CreatePortalLinkInput!) { createPortalLink(input: $input) { url expiresAt } }`;

async function makeLink(input: Record<string, unknown>, key = ADMIN_KEY) {
  return graphql<{ createPortalLink: { url: string; expiresAt: string } }>(app, CREATE, { input }, key);
}

function secretOf(url: string): string {
  const fragment = new URL(url).hash.slice(1);
  const secret = new URLSearchParams(fragment).get("link_secret");
  if (!secret) throw new Error(`no link_secret in ${url}`);
  return secret;
}

const exchange = (secret: unknown) => call<Record<string, unknown>>(app, "POST", "/partner/auth/portal-link", { body: { link_secret: secret } });

beforeAll(async () => {
  app = await startTestApp({ PORTAL_LINK_MAX_TTL_MINUTES: "120" });
  tenant = await createTenant(app);
});

afterAll(async () => {
  await app?.close();
});

describe("createPortalLink", () => {
  it("returns a one-time link to /portal whose secret travels in the fragment and is stored only as a hash", async () => {
    const before = Date.now();
    const res = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeCode });
    expect(res.errors).toBeUndefined();
    const { url, expiresAt } = res.data!.createPortalLink;
    const parsed = new URL(url);
    expect(`${parsed.origin}${parsed.pathname}`).toBe("http://api.test.local/portal");
    expect(parsed.search).toBe("");
    const secret = secretOf(url);
    expect(secret.length).toBeGreaterThanOrEqual(40);
    // Default 60 minutes.
    const ttl = new Date(expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThan(61 * 60_000);
    const rows = await app.services.db.portalLink.findMany();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.some((r) => r.secretHash === sha256Hex(secret))).toBe(true);
  });

  it("is for ADMIN keys only: SUPPORT and VIEWER are 403 FORBIDDEN, a partner token too", async () => {
    for (const role of ["SUPPORT", "VIEWER"] as const) {
      const { key } = await createAdminKey(app.services.db, { name: `portal ${role}`, role });
      const res = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId }, key);
      expect(res.data).toBeNull();
      expect(res.errors?.[0].extensions?.code).toBe("FORBIDDEN");
      expect(res.errors?.[0].message).toContain("ADMIN");
    }
    const partner = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId }, tenant.token);
    expect(partner.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    expect(await app.services.db.portalLink.count({ where: { createdBy: { not: "ADMIN_API_KEY" } } })).toBe(0);
  });

  it("bounds ttlMinutes by PORTAL_LINK_MAX_TTL_MINUTES and refuses 0, naming the field", async () => {
    const count = await app.services.db.portalLink.count();
    for (const ttlMinutes of [0, 121]) {
      const res = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId, ttlMinutes });
      expect(res.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
      expect(JSON.stringify(res.errors?.[0].extensions)).toContain("ttlMinutes");
    }
    const ok = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId, ttlMinutes: 120 });
    expect(ok.errors).toBeUndefined();
    expect(await app.services.db.portalLink.count()).toBe(count + 1);
  });

  it("needs an active grant of the Application on the store (422), and a known Application and store (404)", async () => {
    const other = await createTenant(app);
    const noGrant = await makeLink({ clientId: tenant.clientId, storeId: other.storeId });
    expect(noGrant.errors?.[0].extensions?.code).toBe("UNPROCESSABLE_ENTITY");
    expect(noGrant.errors?.[0].message).toContain("grant");
    const unknownApp = await makeLink({ clientId: "sbx_nobody", storeId: tenant.storeId });
    expect(unknownApp.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const unknownStore = await makeLink({ clientId: tenant.clientId, storeId: "NOSUCHSTORE" });
    expect(unknownStore.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });
});

describe("POST /partner/auth/portal-link", () => {
  it("signs in once as the Application on the store; the second exchange fails plainly", async () => {
    const link = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId });
    const secret = secretOf(link.data!.createPortalLink.url);
    const first = await exchange(secret);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body).toMatchObject({ token_type: "Bearer", tenant_id: tenant.storeCode, environment: "SANDBOX", expires_in: 3600 });
    const store = await call<{ id: string }>(app, "GET", "/public/v1/store", { token: String(first.body.access_token) });
    expect(store.status).toBe(200);
    expect(store.body.id).toBe(tenant.storeId);

    const again = await exchange(secret);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ code: "INVALID_TOKEN" });
    expect(String(again.body.detail)).toContain("already used");
  });

  it("lets exactly one of two simultaneous exchanges of one link through", async () => {
    const link = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId });
    const secret = secretOf(link.data!.createPortalLink.url);
    const answers = await Promise.all([exchange(secret), exchange(secret), exchange(secret)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
  });

  it("refuses an expired link, an unknown one and a malformed body", async () => {
    const link = await makeLink({ clientId: tenant.clientId, storeId: tenant.storeId, ttlMinutes: 1 });
    const secret = secretOf(link.data!.createPortalLink.url);
    await app.services.db.portalLink.update({ where: { secretHash: sha256Hex(secret) }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await exchange(secret);
    expect(expired.status).toBe(401);
    expect(String(expired.body.detail)).toContain("expired");
    // Expired and refused: still unused.
    expect((await app.services.db.portalLink.findUniqueOrThrow({ where: { secretHash: sha256Hex(secret) } })).usedAt).toBeNull();

    const unknown = await exchange("not-a-link-secret");
    expect(unknown.status).toBe(401);
    expect(String(unknown.body.detail)).toContain("not valid");

    const malformed = await exchange(42);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: "INVALID_REQUEST", errors: [{ field: "link_secret" }] });
    const wrongMethod = await call(app, "GET", "/partner/auth/portal-link");
    expect(wrongMethod.status).toBe(405);
  });

  it("is 403 once the grant is revoked after the link was made", async () => {
    const t = await createTenant(app);
    const link = await makeLink({ clientId: t.clientId, storeId: t.storeId });
    await revokeGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
    const res = await exchange(secretOf(link.data!.createPortalLink.url));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("npm run admin -- create-portal-link", () => {
  it("prints a link that signs in once", async () => {
    const cli = runCli("admin", ["create-portal-link", "--client-id", tenant.clientId, "--store", tenant.storeCode, "--ttl-minutes", "5", "--json"], {
      DATABASE_URL: app.databaseUrl,
      LOG_LEVEL: "warn",
    });
    expect(await cli.exited).toBe(0);
    const out = JSON.parse(cli.output()) as { url: string; expiresAt: string };
    expect(new Date(out.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect((await exchange(secretOf(out.url))).status).toBe(200);
    const row = await app.services.db.portalLink.findUniqueOrThrow({ where: { secretHash: sha256Hex(secretOf(out.url)) } });
    expect(row.createdBy).toBe("cli");
    expect(row.usedAt).not.toBeNull();
  }, 60_000);
});

describe("guessing portal links", () => {
  it("counts refused links toward the address's token failure limit: past it, 429 with Retry-After, also at the token endpoint", async () => {
    const limited = await startTestApp({ RATE_LIMIT_TOKEN_FAILURES_PER_ADDRESS: "2" });
    try {
      const guess = () => call(limited, "POST", "/partner/auth/portal-link", { body: { link_secret: "guessed" } });
      expect((await guess()).status).toBe(401);
      expect((await guess()).status).toBe(401);
      const refused = await guess();
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      const token = await call(limited, "POST", "/partner/auth/token", { body: { grant_type: "client_credentials", client_id: "x", client_secret: "y" } });
      expect(token.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
