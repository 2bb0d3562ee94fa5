import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";
import { startWorker } from "../../workers/runner.js";
import { LOCK_CLASS } from "../../workers/crash-recovery.js";

/**
 * Losing database connections under load never wedges the service: every pool drops its dead connections and
 * reconnects, a request that cannot get a connection in time answers 503 with Retry-After, and /readyz answers
 * from the pool that serves requests.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection to the server's maintenance database, so terminating the test database's backends spares it. */
async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: inject("serverUrl") });
  await client.connect();
  return client;
}

function databaseOf(app: TestApp): string {
  return new URL(app.databaseUrl).pathname.slice(1);
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: unknown;
}

/** One request with a deadline well past every bound the service sets: a wedged service shows as status 0. */
async function send(app: TestApp, method: string, path: string, opts: { token?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  try {
    const res = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 8000),
    });
    const text = await res.text();
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: text ? (JSON.parse(text) as unknown) : undefined };
  } catch {
    return { status: 0, retryAfter: null, body: undefined };
  }
}

describe("terminating every backend of the service's database, twice, under concurrent writers", () => {
  let app: TestApp;
  let tenant: Tenant;
  let admin: pg.Client;

  beforeAll(async () => {
    app = await startTestApp({ DB_POOL_SIZE: "5", RATE_LIMIT_SANDBOX_STORE: "100000", RATE_LIMIT_SANDBOX_APP: "100000" });
    tenant = await createTenant(app);
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin?.end();
    await app?.close();
  });

  it("answers no 500 during the fault, and token, read and write requests succeed within seconds after it", async () => {
    const answers: Answer[] = [];
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const created = await send(app, "POST", "/public/v1/sandbox/orders", { token: tenant.token, body: { scenario: "delivery" } });
        answers.push(created);
        const id = (created.body as { id?: string } | undefined)?.id;
        if (created.status === 201 && id) {
          answers.push(await send(app, "PATCH", `/public/v1/orders/${id}/status`, { token: tenant.token, body: { status: "CONFIRMED" } }));
        }
      }
    };
    const writers = Array.from({ length: 12 }, writer);
    const readiness: Answer[] = [];
    const probe = (async () => {
      while (!stop) {
        readiness.push(await send(app, "GET", "/readyz"));
        await sleep(100);
      }
    })();

    await sleep(800);
    const kill = `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`;
    const first = await admin.query(kill, [databaseOf(app)]);
    expect(first.rowCount).toBeGreaterThan(0);
    await sleep(700);
    await admin.query(kill, [databaseOf(app)]);

    // The writers go on a moment past the fault, through the pool's reconnecting.
    await sleep(1000);
    stop = true;
    await Promise.all([...writers, probe]);

    // Within a few seconds the service serves everything again: a new token, a read and a write.
    const started = Date.now();
    let recovered = false;
    while (!recovered && Date.now() - started < 5000) {
      const issued = await send(app, "POST", "/partner/auth/token", {
        body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret },
        timeoutMs: 3000,
      });
      const token = issued.status === 200 ? (issued.body as { access_token: string }).access_token : null;
      const read = token ? await send(app, "GET", "/public/v1/orders?limit=1", { token, timeoutMs: 3000 }) : null;
      const write = token ? await send(app, "POST", "/public/v1/sandbox/orders", { token, body: { scenario: "pickup" }, timeoutMs: 3000 }) : null;
      recovered = read?.status === 200 && write?.status === 201;
      if (!recovered) await sleep(250);
    }
    expect(recovered).toBe(true);

    const statuses = answers.map((a) => a.status);
    expect(statuses).not.toContain(500);
    // Nothing hung past the service's bounds, and whatever was refused says when to come back.
    expect(statuses).not.toContain(0);
    for (const a of answers.filter((x) => x.status === 503)) expect(a.retryAfter).toMatch(/^\d+$/);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
    expect(readiness.map((r) => r.status).every((s) => s === 200 || s === 503)).toBe(true);
    expect((await send(app, "GET", "/readyz")).status).toBe(200);
  }, 40_000);
});

describe("a pool with every connection taken", () => {
  const POOL = 2;
  let app: TestApp;
  let tenant: Tenant;
  let admin: pg.Client;

  beforeAll(async () => {
    app = await startTestApp({ DB_POOL_SIZE: String(POOL), DB_CONNECTION_TIMEOUT_MS: "500", HTTP_MAX_IN_FLIGHT: "50", RATE_LIMIT_SANDBOX_STORE: "100000" });
    tenant = await createTenant(app);
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin?.end();
    await app?.close();
  });

  it("answers 503 with Retry-After within the wait bound, REST, GraphQL and /readyz alike, and serves again once a connection frees", async () => {
    // Requests reading orders hold every connection of the pool, blocked behind a lock on the table.
    const locker = new pg.Client({ connectionString: app.databaseUrl });
    await locker.connect();
    await locker.query(`begin; lock table "Order" in access exclusive mode`);
    const blocked = Array.from({ length: POOL }, () => send(app, "GET", "/public/v1/orders", { token: tenant.token, timeoutMs: 15_000 }));
    try {
      // A session of its own: inside the locker's transaction, pg_stat_activity would stay one snapshot.
      for (let waiting = 0; waiting < POOL; await sleep(50)) {
        const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [
          databaseOf(app),
        ]);
        waiting = rows[0].n;
      }
      // All of these answer while the lock is still held: their wait for a connection is bounded.
      const [rest, gql, ready] = await Promise.all([
        send(app, "GET", "/public/v1/orders", { token: tenant.token }),
        fetch(`${app.baseUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_KEY}` },
          body: JSON.stringify({ query: "{ stores { data { id } } }" }),
          signal: AbortSignal.timeout(8000),
        }),
        send(app, "GET", "/readyz"),
      ]);
      expect(rest.status).toBe(503);
      expect(rest.body).toMatchObject({ code: "SERVICE_UNAVAILABLE", retryable: true });
      expect(rest.retryAfter).toMatch(/^\d+$/);
      const body = (await gql.json()) as { errors?: { extensions?: Record<string, unknown> }[] };
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
      expect(gql.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(ready.status).toBe(503);
      expect(ready.retryAfter).toMatch(/^\d+$/);
    } finally {
      await locker.query("rollback");
      await locker.end();
    }
    expect((await Promise.all(blocked)).map((r) => r.status)).toEqual(Array(POOL).fill(200));
    expect((await send(app, "GET", "/readyz")).status).toBe(200);
    expect((await send(app, "GET", "/public/v1/orders", { token: tenant.token })).status).toBe(200);
  });
});

describe("the worker's liveness lock", () => {
  let app: TestApp;
  let admin: pg.Client;

  beforeAll(async () => {
    app = await startTestApp();
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin?.end();
    await app?.close();
  });

  /** Backends of the test database holding a liveness lock, by pool id hash. */
  async function livenessLocks(): Promise<{ pid: number; key: number }[]> {
    const { rows } = await admin.query<{ pid: number; key: number }>(
      `select l.pid, l.objid::int as key from pg_locks l join pg_database d on d.oid = l.database
       where l.locktype = 'advisory' and l.classid = $1 and l.objsubid = 2 and l.granted and d.datname = $2`,
      [LOCK_CLASS, databaseOf(app)],
    );
    return rows;
  }

  async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  it("is taken again within seconds after its connection is terminated", async () => {
    const runner = await startWorker(app.services, app.databaseUrl);
    try {
      const [held] = await eventually("the liveness lock", async () => {
        const locks = await livenessLocks();
        return locks.length > 0 ? locks : undefined;
      });
      await admin.query("select pg_terminate_backend($1)", [held.pid]);
      const retaken = await eventually("the lock to be retaken", async () => (await livenessLocks()).find((l) => l.key === held.key && l.pid !== held.pid));
      expect(retaken.key).toBe(held.key);
    } finally {
      await runner.stop();
    }
  });
});
