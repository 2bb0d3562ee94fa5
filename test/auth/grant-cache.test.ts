import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { runCli } from "../helpers/process.js";
import { recordStatements, type StatementRecorder } from "../helpers/statements.js";
import { createGrant, revokeGrant } from "../../src/modules/admin/operations.js";
import { verifyPartnerToken } from "../../src/platform/auth/tokens.js";
import { GRANT_CHANGED_CHANNEL, GrantCache } from "../../src/platform/auth/grant-cache.js";
import { Notifications } from "../../src/platform/db/notifications.js";
import { createPool } from "../../src/platform/db/pool.js";
import { createLogger } from "../../src/platform/log.js";

/**
 * Partner requests admit their token by a cached grant (GRANT_CACHE_TTL_MS); any change to it, made by whoever
 * and however, is notified at commit and fails the next requests at once; a lost notification delays that by at
 * most the TTL.
 */

const TTL_MS = 2000;
/**
 * "At once": the notification reaches the process a moment after the commit, usually before the next request, but
 * on a loaded machine the listening backend may not have run yet. Far below the TTL, so only a notification meets it.
 */
const NOTIFIED_MS = 400;
const GRANT_READ = "grant_of_token";

let app: TestApp;
let recorder: StatementRecorder;
/** Another connection, as another process or an operator's psql would make the change. */
let sql: pg.Client;

beforeAll(async () => {
  app = await startTestApp({ GRANT_CACHE_TTL_MS: String(TTL_MS) });
  recorder = recordStatements(app.services.pool);
  await app.services.grants.listen();
  sql = new pg.Client({ connectionString: app.databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await app?.close();
});

/** A store request with the tenant's token: its status and how many grant reads it ran. */
async function storeRequest(t: Tenant): Promise<{ status: number; grantReads: number }> {
  const { result, statements } = await recorder.during(() => call(app, "GET", "/public/v1/store", { token: t.token }));
  return { status: result.status, grantReads: statements.filter((s) => s === GRANT_READ).length };
}

/** A tenant whose grant the app holds: its first request read it, its second did not. */
async function cachedTenant(): Promise<Tenant> {
  const t = await createTenant(app, { scopes: ["merchant:read"] });
  expect(await storeRequest(t)).toEqual({ status: 200, grantReads: 1 });
  expect(await storeRequest(t)).toEqual({ status: 200, grantReads: 0 });
  return t;
}

/** Requests until one is refused, failing after `withinMs`; the milliseconds that took. */
async function untilForbidden(t: Tenant, withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await call<{ code?: string }>(app, "GET", "/public/v1/store", { token: t.token });
    if (res.status !== 200) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
      return performance.now() - started;
    }
    expect(performance.now() - started).toBeLessThan(withinMs);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Revokes with triggers off (superuser only): the change commits and nobody is notified, as if it were lost. */
async function revokeUnannounced(t: Tenant): Promise<void> {
  await sql.query("begin");
  await sql.query("set local session_replication_role = replica");
  await sql.query(`update "Grant" g set status = 'REVOKED' from "Application" a where a.id = g."applicationId" and a."clientId" = $1`, [t.clientId]);
  await sql.query("commit");
}

describe("the grant cache", () => {
  it("a second request within the TTL runs no grant read; after it, the grant is read again", async () => {
    const t = await cachedTenant();
    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    expect(await storeRequest(t)).toEqual({ status: 200, grantReads: 1 });
  });

  it("a grant revoked through the service fails at once; granted again, it works on the very next request", async () => {
    const t = await cachedTenant();
    await revokeGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
    await untilForbidden(t, NOTIFIED_MS);
    // A refusal is never kept, so nothing waits for the notification of the new grant.
    await createGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
    expect(await storeRequest(t)).toEqual({ status: 200, grantReads: 1 });
  });

  it("a change made with plain SQL on another connection fails at once: grant, Application, store", async () => {
    const revoked = await cachedTenant();
    await sql.query(`update "Grant" set status = 'REVOKED' where "storeId" = $1`, [revoked.storeId]);
    await untilForbidden(revoked, NOTIFIED_MS);

    const disabled = await cachedTenant();
    await sql.query(`update "Application" set status = 'DISABLED' where "clientId" = $1`, [disabled.clientId]);
    await untilForbidden(disabled, NOTIFIED_MS);

    const moved = await cachedTenant();
    await sql.query(`update "Store" set environment = 'PRODUCTION' where id = $1`, [moved.storeId]);
    await untilForbidden(moved, NOTIFIED_MS);

    const deleted = await cachedTenant();
    await sql.query(`delete from "Grant" where "storeId" = $1`, [deleted.storeId]);
    await untilForbidden(deleted, NOTIFIED_MS);
  });

  it("a grant revoked by another process (the admin CLI) fails at once", async () => {
    const t = await cachedTenant();
    const cli = runCli("admin", ["revoke-grant", "--client-id", t.clientId, "--store", t.storeId], { DATABASE_URL: app.databaseUrl, LOG_LEVEL: "warn" });
    let exited = false;
    void cli.exited.then(() => {
      exited = true;
    });
    // Requests keep the grant cached while the CLI runs (longer than the TTL), so that its commit finds it there;
    // ten a second, within the store's rate limit. Those sent once the notification had time to arrive are refused.
    const answers: { sentAt: number; status: number }[] = [];
    while (!exited) {
      const sentAt = Date.now();
      answers.push({ sentAt, status: (await storeRequest(t)).status });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await cli.exited, cli.output()).toBe(0);
    await untilForbidden(t, NOTIFIED_MS);
    const { rows } = await sql.query<{ revokedAt: Date }>(`select "revokedAt" from "Grant" where "storeId" = $1`, [t.storeId]);
    const settled = rows[0].revokedAt.getTime() + NOTIFIED_MS;
    expect(answers.filter((a) => a.sentAt > settled && a.status !== 403)).toEqual([]);
    expect(answers.filter((a) => a.sentAt < rows[0].revokedAt.getTime()).every((a) => a.status === 200)).toBe(true);
  });

  it("a revocation whose notification is lost fails within the TTL", async () => {
    const t = await cachedTenant();
    await revokeUnannounced(t);
    // The cache is real: the row read before the change still answers.
    expect(await storeRequest(t)).toEqual({ status: 200, grantReads: 0 });
    expect(await untilForbidden(t, TTL_MS + 500)).toBeLessThan(TTL_MS + 500);
  });

  it("with its LISTEN connection killed, a revocation fails within the TTL, and the next is notified again", async () => {
    const t = await cachedTenant();
    const listener = `select pid from pg_stat_activity where datname = current_database() and query = 'LISTEN "${GRANT_CHANGED_CHANNEL}"'`;
    const killed = await sql.query<{ pid: number }>(listener);
    expect(killed.rows).toHaveLength(1);
    await sql.query("select pg_terminate_backend($1)", [killed.rows[0].pid]);
    await revokeUnannounced(t);
    expect(await untilForbidden(t, TTL_MS)).toBeLessThan(TTL_MS);

    // Back with a new connection, it is notified again.
    const relistened = async () => (await sql.query<{ pid: number }>(listener)).rows.some((r) => r.pid !== killed.rows[0].pid);
    await expect.poll(relistened, { timeout: 5000 }).toBe(true);
    await app.services.grants.listen();
    const next = await cachedTenant();
    await sql.query(`update "Grant" set status = 'REVOKED' where "storeId" = $1`, [next.storeId]);
    await untilForbidden(next, NOTIFIED_MS);
  });

  it("holds at most its bound, dropping the grant read first", async () => {
    const tenants = [await createTenant(app), await createTenant(app), await createTenant(app)];
    const claims = await Promise.all(tenants.map((t) => verifyPartnerToken(t.token, app.services.keys, app.services.issuer)));
    const pool = createPool(app.databaseUrl, { max: 1, connectionTimeoutMs: 5000, log: createLogger("silent") });
    const cache = new GrantCache(pool, TTL_MS, new Notifications(app.databaseUrl, GRANT_CHANGED_CHANNEL, createLogger("silent")), 2);
    const counting = recordStatements(pool);
    const reads = async (c: (typeof claims)[number]) => (await counting.during(() => cache.admit(c))).statements.length;
    try {
      await cache.listen();
      for (const c of claims) expect(await reads(c)).toBe(1);
      expect(cache.size).toBe(2);
      expect(await reads(claims[2])).toBe(0);
      expect(await reads(claims[1])).toBe(0);
      expect(await reads(claims[0])).toBe(1);
    } finally {
      await cache.close();
      await pool.end();
    }
  });

  it("keeps no grant that a notification overtook while it was being read", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const claims = await verifyPartnerToken(t.token, app.services.keys, app.services.issuer);
    // One connection, held, so the read below waits for it after it began: a notification then arrives meanwhile.
    const pool = createPool(app.databaseUrl, { max: 1, connectionTimeoutMs: 5000, log: createLogger("silent") });
    const notifications = new Notifications(app.databaseUrl, GRANT_CHANGED_CHANNEL, createLogger("silent"));
    const cache = new GrantCache(pool, TTL_MS, notifications);
    try {
      await cache.listen();
      const held = await pool.connect();
      const admitted = cache.admit(claims);
      const notified = new Promise<void>((resolve) => {
        const stop = notifications.watch(() => {
          stop();
          resolve();
        });
      });
      await sql.query("select pg_notify($1, 'test')", [GRANT_CHANGED_CHANNEL]);
      await notified;
      held.release();
      expect((await admitted).storeId).toBe(t.storeId);
      expect(cache.size).toBe(0);
      // Not overtaken, the same read is kept.
      await cache.admit(claims);
      expect(cache.size).toBe(1);
    } finally {
      await cache.close();
      await pool.end();
    }
  });
});

describe("the grant cache's metrics", () => {
  /** A sample of the app's /metrics (open: no METRICS_TOKEN in this app), NaN when the series is absent. */
  async function sample(series: string): Promise<number> {
    const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : Number.NaN;
  }

  it("count admits from the cache and from the database, the clears, and the grants held", async () => {
    const hits = await sample('grant_cache_admits_total{result="hit"}');
    const misses = await sample('grant_cache_admits_total{result="miss"}');
    const clears = await sample("grant_cache_clears_total");
    const t = await cachedTenant();
    expect(await sample("grant_cache_entries")).toBeGreaterThanOrEqual(1);
    await revokeGrant(app.services.db, { clientId: t.clientId, storeId: t.storeId });
    await untilForbidden(t, NOTIFIED_MS);
    expect(await sample('grant_cache_admits_total{result="hit"}')).toBeGreaterThanOrEqual(hits + 1);
    expect(await sample('grant_cache_admits_total{result="miss"}')).toBeGreaterThanOrEqual(misses + 2);
    expect(await sample("grant_cache_clears_total")).toBeGreaterThanOrEqual(clears + 1);
  });
});

describe("GRANT_CACHE_TTL_MS=0", () => {
  it("reads the grant on every request", async () => {
    const uncached = await startTestApp({ GRANT_CACHE_TTL_MS: "0" });
    try {
      const counting = recordStatements(uncached.services.pool);
      const t = await createTenant(uncached, { scopes: ["merchant:read"] });
      for (let i = 0; i < 3; i++) {
        const { result, statements } = await counting.during(() => call(uncached, "GET", "/public/v1/store", { token: t.token }));
        expect(result.status).toBe(200);
        expect(statements.filter((s) => s === GRANT_READ)).toHaveLength(1);
      }
      expect(uncached.services.grants.size).toBe(0);
    } finally {
      await uncached.close();
    }
  });
});
