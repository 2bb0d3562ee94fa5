import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { migrate } from "../../src/platform/db/migrate.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import { replicationUnavailable, startReplicatedPair, type ReplicatedPair } from "../helpers/replication.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "./support.js";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";

/**
 * Past one database: a primary, a real streaming replica of it and PgBouncer (transaction mode) in front of the
 * primary; two API processes and a worker, each with DATABASE_URL on PgBouncer, DATABASE_DIRECT_URL on the primary
 * and DATABASE_REPLICA_URLS on the replica.
 */
const unavailable = await replicationUnavailable();

let pair: ReplicatedPair;
let app: TestApp;
let a: ApiProcess;
let b: ApiProcess;
let worker: ApiProcess;
let tenant: Tenant;
let customerId: string;
let orderId: string;

const REPLICA_MAX_LAG_MS = 1500;

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Reads of customers and orders (their items, payments and history too) a server has run, from pg_stat_statements:
 * how the test sees which server served them.
 */
async function customerReads(url: string): Promise<number> {
  const rows = await sql<{ n: number }>(
    url,
    `select coalesce(sum(calls), 0)::int as n from pg_stat_statements where query ilike 'select%' and query ~ '"(Customer|Order|OrderItem|Payment)'`,
  );
  return rows[0].n;
}

/** One metric's value on a process's /metrics (0 when absent). */
async function metric(p: ApiProcess, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${p.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

const on = (p: ApiProcess) => ({ ...app, baseUrl: p.baseUrl });
const getCustomer = (p: ApiProcess) => call<{ id: string; name: string }>(on(p), "GET", `/public/v1/customers/${customerId}`, { token: tenant.token });
const renameCustomer = (p: ApiProcess, name: string) =>
  call<{ name: string }>(on(p), "PATCH", `/public/v1/customers/${customerId}`, { token: tenant.token, body: { name } });

describe.skipIf(unavailable !== null)(`read replicas and PgBouncer${unavailable ? ` (skipped: ${unavailable})` : ""}`, () => {
  beforeAll(async () => {
    pair = await startReplicatedPair("partner", async (url) => void (await migrate(url)));
    const env = {
      DATABASE_URL: pair.bouncer.url("partner"),
      DATABASE_DIRECT_URL: pair.primary.url("partner"),
      DATABASE_REPLICA_URLS: pair.replica.url("partner"),
      REPLICA_MAX_LAG_MS: String(REPLICA_MAX_LAG_MS),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_RETRY_SCHEDULE: "100ms",
      // Hundreds of requests of one store within a minute: the published limits are tested elsewhere.
      RATE_LIMIT_SANDBOX_STORE: "100000",
      RATE_LIMIT_SANDBOX_APP: "100000",
    };
    app = await startTestApp(env);
    [a, b, worker] = await Promise.all([
      startApiProcess(env.DATABASE_URL, env),
      startApiProcess(env.DATABASE_URL, env),
      startApiProcess(env.DATABASE_URL, env, "worker"),
    ]);
    tenant = await createTenant(app);
    const created = await call<{ id: string }>(on(a), "POST", "/public/v1/customers", { token: tenant.token, body: { name: "Replica Reader" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    customerId = created.body.id;
    expect((await call(on(a), "POST", "/public/v1/sandbox/seed", { token: tenant.token })).status).toBe(201);
    const order = await call<{ id: string }>(on(a), "POST", "/public/v1/sandbox/orders", { token: tenant.token, body: { scenario: "cash" } });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
    orderId = order.body.id;
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a, b, worker].filter(Boolean).map(stopApiProcess));
    await app?.close();
    await pair?.close();
  });

  it("serves reads from the replica: REST and GraphQL queries run there, relations included, none on the primary", async () => {
    // The replica has replayed the set-up's writes, and the processes' polls have seen it: none of these reads has
    // a reason to go to the primary.
    const [{ lsn }] = await sql<{ lsn: string }>(pair.primary.url("partner"), "select pg_current_wal_insert_lsn()::text as lsn");
    await expect
      .poll(async () => (await sql<{ ok: boolean }>(pair.replica.url("partner"), `select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn as ok`))[0].ok, {
        timeout: 10_000,
      })
      .toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const [onReplica, onPrimary] = await Promise.all([customerReads(pair.replica.url("partner")), customerReads(pair.primary.url("partner"))]);
    for (let i = 0; i < 10; i++) expect((await getCustomer(i % 2 ? a : b)).status).toBe(200);
    for (const p of [a, b]) {
      const list = await call<{ data: { id: string; items: unknown[] }[] }>(on(p), "GET", "/public/v1/orders?limit=20", { token: tenant.token });
      expect(list.status).toBe(200);
      expect(list.body.data.map((o) => o.id)).toContain(orderId);
      expect((await call(on(p), "GET", `/public/v1/orders/${orderId}`, { token: tenant.token })).status).toBe(200);
    }
    const q = await graphql<{ customer: { name: string } }>(on(a), `query($id: ID!) { customer(id: $id) { name } }`, { id: customerId }, tenant.token);
    expect(q.errors).toBeUndefined();
    expect(q.data?.customer.name).toBe("Replica Reader");
    expect(await customerReads(pair.replica.url("partner"))).toBeGreaterThanOrEqual(onReplica + 11);
    expect(await customerReads(pair.primary.url("partner"))).toBe(onPrimary);
    expect(await metric(a, "db_reads_total", `target="127.0.0.1:${pair.replica.port}/partner"`)).toBeGreaterThan(0);
    expect(await metric(a, "db_replica_up", `replica="127.0.0.1:${pair.replica.port}/partner"`)).toBe(1);
  });

  it("30 write-then-read rounds across the two processes: every read sees its write", async () => {
    for (let i = 0; i < 30; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      expect((await renameCustomer(writer, `Round ${i}`)).status).toBe(200);
      const read = await getCustomer(reader);
      expect(read.status).toBe(200);
      expect(read.body.name).toBe(`Round ${i}`);
    }
  });

  it("replay paused on the replica: reads stay correct and fresh (the primary serves them); past REPLICA_MAX_LAG_MS the replica is skipped", async () => {
    const replica = pair.replica.url("partner");
    await sql(replica, "select pg_wal_replay_pause()");
    try {
      const behind = await metric(b, "db_read_fallbacks_total", `reason="behind_write"`);
      for (let i = 0; i < 10; i++) {
        expect((await renameCustomer(a, `Paused ${i}`)).status).toBe(200);
        const read = await getCustomer(b);
        expect(read.body.name).toBe(`Paused ${i}`);
      }
      expect(await metric(b, "db_read_fallbacks_total", `reason="behind_write"`)).toBeGreaterThanOrEqual(behind + 10);
      // The replica has not replayed these writes, so it really is behind: a read there would have been stale.
      expect((await sql<{ name: string }>(replica, `select name from "Customer" where id = '${customerId}'`))[0].name).not.toBe("Paused 9");
      // Writes keep coming (rate-limit counts are writes too); once the oldest unreplayed one is older than the bound, no read goes there.
      await expect
        .poll(
          async () => {
            await renameCustomer(a, "Still paused");
            return metric(b, "db_replica_up", `replica="127.0.0.1:${pair.replica.port}/partner"`);
          },
          { timeout: 10_000, interval: 250 },
        )
        .toBe(0);
      expect((await getCustomer(b)).body.name).toBe("Still paused");
    } finally {
      await sql(replica, "select pg_wal_replay_resume()");
    }
  });

  it("replica killed: no read fails and /readyz stays 200; replica back: used again", async () => {
    await expect.poll(() => metric(a, "db_replica_up", `replica="127.0.0.1:${pair.replica.port}/partner"`), { timeout: 10_000 }).toBe(1);
    await pair.replica.stop("immediate");
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [x, y] = await Promise.all([getCustomer(a), getCustomer(b)]);
      statuses.push(x.status, y.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    for (const p of [a, b]) expect((await fetch(`${p.baseUrl}/readyz`)).status).toBe(200);
    expect(await metric(a, "db_replica_up", `replica="127.0.0.1:${pair.replica.port}/partner"`)).toBe(0);

    await pair.replica.start();
    for (const p of [a, b])
      await expect.poll(() => metric(p, "db_replica_up", `replica="127.0.0.1:${pair.replica.port}/partner"`), { timeout: 20_000 }).toBe(1);
    const before = await customerReads(pair.replica.url("partner"));
    for (let i = 0; i < 10; i++) expect((await getCustomer(i % 2 ? a : b)).status).toBe(200);
    expect(await customerReads(pair.replica.url("partner"))).toBeGreaterThanOrEqual(before + 10);
  }, 60_000);

  it("replica hung (stopped, not refusing): reads neither hang nor fail, and go back to it once it answers", async () => {
    const replica = `replica="127.0.0.1:${pair.replica.port}/partner"`;
    await expect.poll(() => metric(a, "db_replica_up", replica), { timeout: 20_000 }).toBe(1);
    await pair.replica.signal("SIGSTOP");
    try {
      const started = Date.now();
      // The first reads may be on their way to the frozen replica: each waits at most for its connection (2 s here).
      const reads = await Promise.all(Array.from({ length: 10 }, (_, i) => getCustomer(i % 2 ? a : b)));
      expect(
        reads.map((r) => r.status),
        JSON.stringify(reads.filter((r) => r.status !== 200).map((r) => r.body)),
      ).toEqual(Array(10).fill(200));
      await expect.poll(() => metric(a, "db_replica_up", replica), { timeout: 10_000, message: "process a still counts the frozen replica up" }).toBe(0);
      const later = Date.now();
      for (let i = 0; i < 10; i++) expect((await getCustomer(i % 2 ? a : b)).status).toBe(200);
      // Once the replica is judged silent, reads go straight to the primary.
      expect(Date.now() - later).toBeLessThan(2_000);
      expect(later - started).toBeLessThan(10_000);
    } finally {
      await pair.replica.signal("SIGCONT");
    }
    for (const p of [a, b]) await expect.poll(() => metric(p, "db_replica_up", replica), { timeout: 20_000 }).toBe(1);
    const before = await customerReads(pair.replica.url("partner"));
    for (let i = 0; i < 6; i++) expect((await getCustomer(i % 2 ? a : b)).status).toBe(200);
    expect(await customerReads(pair.replica.url("partner"))).toBeGreaterThanOrEqual(before + 6);
  }, 60_000);

  it("write positions unreadable: reads go to the primary and still answer, and writes still succeed", async () => {
    const primary = pair.primary.url("partner");
    const before = await metric(b, "db_read_fallbacks_total", `reason="marks_unavailable"`);
    await sql(primary, `alter table "WriteMark" rename to "WriteMarkAway"`);
    try {
      expect((await renameCustomer(a, "Marks away")).status).toBe(200);
      const read = await getCustomer(b);
      expect(read.status).toBe(200);
      expect(read.body.name).toBe("Marks away");
      expect(await metric(b, "db_read_fallbacks_total", `reason="marks_unavailable"`)).toBeGreaterThan(before);
    } finally {
      await sql(primary, `alter table "WriteMarkAway" rename to "WriteMark"`);
    }
  });

  it("delivers webhooks through PgBouncer (the worker's statements there, graphile-worker on the direct connection)", async () => {
    const receiver: Receiver = await startReceiver();
    try {
      const endpoint = await call<{ id: string }>(on(a), "POST", "/public/v1/webhooks", {
        token: tenant.token,
        body: { url: receiver.url("/hooks"), events: ["customer.updated"] },
      });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
      expect((await renameCustomer(b, "Webhook Wanted")).status).toBe(200);
      const got = await waitFor("the delivery", () => receiver.requests("/hooks").find((r) => r.body.includes("Webhook Wanted")), 20_000);
      expect(JSON.parse(got.body)).toMatchObject({ eventType: "customer.updated" });
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it("writes a bulk export from the replica's snapshot, through PgBouncer, and any process serves its file", async () => {
    const onPrimary = await customerReads(pair.primary.url("partner"));
    const onReplica = await customerReads(pair.replica.url("partner"));
    const created = await call<{ id: string }>(on(a), "POST", "/public/v1/exports", { token: tenant.token, body: { resource: "orders" } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitFor(
      "the export",
      async () => {
        const res = await call<{ status: string; url: string | null; objectCount: number }>(on(b), "GET", `/public/v1/exports/${created.body.id}`, {
          token: tenant.token,
        });
        return res.body.status === "completed" ? res.body : null;
      },
      20_000,
    );
    const list = await call<{ data: unknown[] }>(on(b), "GET", "/public/v1/orders?limit=100", { token: tenant.token });
    expect(done.objectCount).toBe(list.body.data.length);
    const file = await fetch(`${b.baseUrl}/public/v1/exports/${created.body.id}/file`, { headers: { authorization: `Bearer ${tenant.token}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/gzip");
    // The orders were read on the replica; the primary ran no read of them (the list above ran on the replica too).
    expect(await customerReads(pair.replica.url("partner"))).toBeGreaterThan(onReplica);
    expect(await customerReads(pair.primary.url("partner"))).toBe(onPrimary);
  }, 30_000);

  it("a mixed load through PgBouncer answers no 5xx (no prepared-statement or session errors)", async () => {
    const requests: (() => Promise<ApiResponse<unknown>>)[] = [];
    for (let i = 0; i < 120; i++) {
      const p = i % 2 ? a : b;
      const kind = i % 4;
      if (kind === 0) requests.push(() => getCustomer(p));
      else if (kind === 1) requests.push(() => call(on(p), "GET", "/public/v1/customers?limit=20", { token: tenant.token }));
      else if (kind === 2) requests.push(() => renameCustomer(p, `Load ${i}`));
      else requests.push(() => call(on(p), "POST", "/public/v1/customers", { token: tenant.token, body: { name: `Load ${i}` } }));
    }
    const statuses: number[] = [];
    const queue = [...requests];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) statuses.push((await next()).status);
      }),
    );
    expect(statuses).toHaveLength(120);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    for (const p of [a, b, worker]) expect(p.output()).not.toMatch(/prepared statement|unsupported startup parameter/i);
  }, 60_000);
});
