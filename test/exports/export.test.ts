import { gunzipSync } from "node:zlib";
import type { Runner } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { once } from "node:events";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";
import { WorkerProcesses } from "../helpers/process.js";
import { startWorker } from "../../workers/runner.js";
import { LOCK_CLASS } from "../../workers/crash-recovery.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { changeOrderStatus } from "../../src/modules/orders/service.js";
import { exportLink } from "../../src/modules/exports/service.js";
import { removeExpiredExports } from "../../src/modules/exports/retention.js";

/** Bulk export against the real service: the file, its snapshot and sequence, its link, its queue and its event. */

const ORDERS = 130;
const NEW_VERSION = "2026-12-01";

interface ExportBody {
  id: string;
  status: string;
  resource: string;
  objectCount: number | null;
  bytes: number | null;
  sequence: number | null;
  apiVersion: string;
  url: string | null;
  expiresAt: string | null;
  error: string | null;
}

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let tenant: Tenant;
let other: Tenant;
const workers = new WorkerProcesses();

beforeAll(async () => {
  app = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE: "100ms",
    RATE_LIMIT_SANDBOX_STORE: "100000",
    EXPORT_CHUNK_BYTES: "4096",
  });
  receiver = await startReceiver();
  [tenant, other] = await Promise.all([createTenant(app), createTenant(app)]);
  await createCatalog(app.services.db, tenant.storeId);
  for (let i = 0; i < ORDERS; i += 10) await Promise.all(Array.from({ length: 10 }, () => createOrder(app.services.db, tenant.storeId)));
  worker = await startWorker(app.services, app.databaseUrl);
}, 60_000);

afterAll(async () => {
  workers.killAll();
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

const get = <T = Record<string, unknown>>(path: string, headers: Record<string, string> = {}, token = tenant.token) =>
  call<T>(app, "GET", path, { token, headers });

async function requestExport(body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) {
  return call<ExportBody>(app, "POST", "/public/v1/exports", { token: opts.token ?? tenant.token, body, headers: opts.headers });
}

async function completed(id: string, headers: Record<string, string> = {}): Promise<ExportBody> {
  return waitFor(
    `export ${id} to complete`,
    async () => {
      const res = await get<ExportBody>(`/public/v1/exports/${id}`, headers);
      expect(res.status).toBe(200);
      expect(res.body.status).not.toBe("failed");
      return res.body.status === "completed" ? res.body : null;
    },
    30_000,
  );
}

async function download(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url.replace("http://api.test.local", app.baseUrl), { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const linesOf = (gz: Buffer): Record<string, unknown>[] =>
  gunzipSync(gz)
    .toString("utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function listCount(path: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const res: { body: { data: unknown[]; pagination: { nextCursor: string | null } } } = await get(
      `${path}${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    count += res.body.data.length;
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  return count;
}

describe("the file", () => {
  it("holds every order as GET /orders/{id} answers it, in the Application's pin and in the Api-Version asked, and the event reaches a receiver", async () => {
    const hook = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
      token: tenant.token,
      body: { url: receiver.url("/exports"), events: ["export.completed"] },
    });
    expect(hook.status).toBe(201);

    const pinned = await requestExport({ resource: "orders" });
    expect(pinned.status).toBe(202);
    expect(pinned.headers.get("location")).toBe(`/public/v1/exports/${pinned.body.id}`);
    expect(pinned.body).toMatchObject({ resource: "orders", apiVersion: "2026-11-20", url: null });
    const newer = await requestExport({ resource: "orders" }, { headers: { "api-version": NEW_VERSION } });
    expect(newer.body.apiVersion).toBe(NEW_VERSION);

    for (const [created, headers] of [
      [pinned.body, {}],
      [newer.body, { "api-version": NEW_VERSION }],
    ] as const) {
      const done = await completed(created.id, headers);
      expect(done.objectCount).toBe(ORDERS);
      expect(done.url).toMatch(/\/file\?expires=\d+&signature=/);
      // With the token, at the file's own route.
      const file = await download(`${app.baseUrl}/public/v1/exports/${done.id}/file`, { authorization: `Bearer ${tenant.token}` });
      expect(file.status).toBe(200);
      expect(file.headers.get("content-type")).toBe("application/gzip");
      expect(Number(file.headers.get("content-length"))).toBe(done.bytes);
      const lines = linesOf(file.bytes);
      expect(lines).toHaveLength(ORDERS);
      expect(await listCount("/public/v1/orders")).toBe(lines.length);
      const details = await Promise.all(lines.map((line) => get(`/public/v1/orders/${String(line.id)}`, headers)));
      expect(lines).toEqual(details.map((d) => d.body));
      // The versions differ where a change says so: 2026-11-20 has displayId, 2026-12-01 has not.
      expect("displayId" in lines[0]).toBe(created === pinned.body);
    }

    const delivered = await waitFor("export.completed at the receiver", () =>
      receiver.requests("/exports").find((r) => (JSON.parse(r.body) as { data: { exportId: string } }).data.exportId === pinned.body.id),
    );
    expect(JSON.parse(delivered.body)).toMatchObject({ eventType: "export.completed", data: { resource: "orders", objectCount: ORDERS } });
  }, 40_000);

  it("is read from one snapshot: a change made while it is written is not in it, and the feed after its sequence has it", async () => {
    const [target] = await app.services.db.order.findMany({ where: { storeId: tenant.storeId, status: "PENDING" }, take: 1, select: { id: true } });
    let exportId = "";
    // The change waits in a transaction that holds the order table: the export takes its snapshot, then waits to read orders.
    await app.services.db.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(`lock table "Order" in access exclusive mode`);
        const res = await requestExport({ resource: "orders" });
        exportId = res.body.id;
        await waitFor("the export to wait on the order table", async () => {
          const rows = await app.services.pool.query(`select 1 from pg_locks where relation = '"Order"'::regclass and not granted`);
          return rows.rowCount;
        });
        await changeOrderStatus(tx, tenant.storeId, target.id, "CONFIRMED");
      },
      { timeout: 20_000 },
    );
    const done = await completed(exportId);
    const file = await download(done.url ?? "");
    const line = linesOf(file.bytes).find((l) => l.id === target.id);
    expect(line).toMatchObject({ status: "PENDING", version: 1 });
    const feed = await get<{ data: { eventType: string; sequence: number; data: { orderId?: string } }[] }>(
      `/public/v1/events?after=${done.sequence}&limit=100`,
    );
    const orderEvents = feed.body.data.filter((e) => e.eventType.startsWith("order."));
    expect(orderEvents).toEqual([expect.objectContaining({ eventType: "order.confirmed", data: expect.objectContaining({ orderId: target.id, version: 2 }) })]);
    // Nothing before the sequence is missing from the file: every order's latest event is at or before it.
    const before = await get<{ data: { sequence: number }[] }>(`/public/v1/events?after=${(done.sequence ?? 0) - 1}&limit=1`);
    expect(before.body.data[0].sequence).toBe(done.sequence);
  }, 30_000);

  it("with updatedSince holds only what changed since, as the list does", async () => {
    await createCustomer(app.services.db, tenant.storeId, { name: "Early" });
    const since = new Date(Date.now() + 5);
    await new Promise((r) => setTimeout(r, 10));
    await createCustomer(app.services.db, tenant.storeId, { name: "Later One" });
    await createCustomer(app.services.db, tenant.storeId, { name: "Later Two" });
    const res = await requestExport({ resource: "customers", updatedSince: since.toISOString() });
    const done = await completed(res.body.id);
    const lines = linesOf((await download(done.url ?? "")).bytes);
    expect(lines.map((l) => l.name).sort()).toEqual(["Later One", "Later Two"]);
    expect(lines.length).toBe(await listCount(`/public/v1/customers?updated_since=${encodeURIComponent(since.toISOString())}`));
    const detail = await get(`/public/v1/customers/${String(lines[0].id)}`);
    expect(lines[0]).toEqual(detail.body);
  });

  it("of products equals the product routes", async () => {
    const done = await completed((await requestExport({ resource: "products" })).body.id);
    const lines = linesOf((await download(done.url ?? "")).bytes);
    expect(lines.length).toBe(await listCount("/public/v1/catalog/products"));
    expect(lines[0]).toEqual((await get(`/public/v1/catalog/products/${String(lines[0].id)}`)).body);
  });
});

describe("the request", () => {
  it("honours Idempotency-Key, and refuses bad input naming the field with nothing created", async () => {
    const before = await listCount("/public/v1/exports");
    const headers = { "idempotency-key": `export-${Date.now()}` };
    const first = await requestExport({ resource: "products" }, { headers });
    const again = await requestExport({ resource: "products" }, { headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    const unknown = await requestExport({ resource: "invoices" });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('"field":"resource"');
    const malformed = await requestExport({ resource: "orders", updatedSince: "yesterday" });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toContain('"field":"updatedSince"');
    expect(await listCount("/public/v1/exports")).toBe(before + 1);
  });

  it("needs the resource's read scope, and another tenant's export or file is 404", async () => {
    const readsOrdersOnly = await createTenant(app, { scopes: ["orders:read"] });
    const refused = await requestExport({ resource: "customers" }, { token: readsOrdersOnly.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    const mine = await requestExport({ resource: "products" });
    const done = await completed(mine.body.id);
    expect((await get(`/public/v1/exports/${done.id}`, {}, other.token)).status).toBe(404);
    const file = await download(`${app.baseUrl}/public/v1/exports/${done.id}/file`, { authorization: `Bearer ${other.token}` });
    expect(file.status).toBe(404);
    expect((await get("/public/v1/exports", {}, other.token)).body).toMatchObject({ data: [] });
  });
});

describe("the link", () => {
  it("downloads without a token, in ranges too; altered, for another export or expired, it is refused with a problem", async () => {
    const done = await completed((await requestExport({ resource: "orders" })).body.id);
    const url = done.url ?? "";
    const whole = await download(url);
    expect(whole.status).toBe(200);
    expect(linesOf(whole.bytes)).toHaveLength(ORDERS);
    const part = await download(url, { range: "bytes=10-4200" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-4200/${whole.bytes.length}`);
    expect(part.bytes.equals(whole.bytes.subarray(10, 4201))).toBe(true);
    // HEAD answers the GET's headers alone; another method is 405 naming both.
    const head = await fetch(url.replace("http://api.test.local", app.baseUrl), { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), (await head.arrayBuffer()).byteLength]).toEqual([200, String(whole.bytes.length), 0]);
    const post = await fetch(url.replace("http://api.test.local", app.baseUrl), { method: "POST" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    // The path's id is matched as the route table's parameters are: a malformed percent-escape is the caller's 400.
    expect((await download(`${app.baseUrl}/public/v1/exports/%zz/file`)).status).toBe(400);

    const altered = new URL(url);
    const signature = altered.searchParams.get("signature") ?? "";
    altered.searchParams.set("signature", `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`);
    const tampered = await download(altered.toString());
    expect(tampered.status).toBe(403);
    expect(JSON.parse(tampered.bytes.toString())).toMatchObject({ code: "FORBIDDEN" });
    const later = new URL(url);
    later.searchParams.set("expires", String(Number(later.searchParams.get("expires")) + 3600));
    expect((await download(later.toString())).status).toBe(403);
    const another = (await app.services.db.export.findFirst({ where: { status: "completed", NOT: { id: done.id } }, select: { id: true } }))?.id ?? "";
    expect((await download(url.replace(done.id, another))).status).toBe(403);

    // A link made a while ago, whose time is up.
    const row = await app.services.db.export.findUniqueOrThrow({ where: { id: done.id } });
    const old = exportLink({ ...app.services.config, EXPORT_URL_TTL_SECONDS: 1 }, app.services.box, row, Date.now() - 5000);
    const expired = await download(old?.url ?? "");
    expect(expired.status).toBe(403);
    expect(JSON.parse(expired.bytes.toString()).detail).toContain("expired");
    expect((await download(`${app.baseUrl}/public/v1/exports/${done.id}/file`)).status).toBe(401);
  });
});

it("runs a store's exports one at a time, the others queued, and removes them after retention", async () => {
  const ids: string[] = [];
  for (const resource of ["orders", "customers", "products"]) ids.push((await requestExport({ resource })).body.id);
  for (const id of ids) await completed(id);
  const rows = await app.services.db.export.findMany({ where: { id: { in: ids } }, orderBy: { startedAt: "asc" } });
  for (let i = 1; i < rows.length; i++) expect(rows[i].startedAt?.getTime()).toBeGreaterThanOrEqual(rows[i - 1].completedAt?.getTime() ?? Number.NaN);
  expect(rows.map((r) => r.id)).toEqual(ids);

  const removed = await removeExpiredExports(app.services.db, app.services.log, new Date(Date.now() + 25 * 3_600_000));
  expect(removed).toBeGreaterThanOrEqual(3);
  expect(await app.services.db.exportChunk.count({ where: { exportId: { in: ids } } })).toBe(0);
  expect((await get(`/public/v1/exports/${ids[0]}`)).status).toBe(404);
});

it("a worker killed mid-export leaves no file, and the export completes once, correct, on the next worker", async () => {
  await worker.stop();
  const child = await workers.start(app.databaseUrl, { DB_POOL_SIZE: "5" });
  let exportId = "";
  // The export is held inside its snapshot transaction by a lock on the order table, then its worker dies.
  await app.services.db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`lock table "Order" in access exclusive mode`);
      exportId = (await requestExport({ resource: "orders" })).body.id;
      await waitFor("the export to wait on the order table", async () => {
        const rows = await app.services.pool.query(`select 1 from pg_locks where relation = '"Order"'::regclass and not granted`);
        return rows.rowCount;
      });
      child.kill("SIGKILL");
      await once(child, "exit");
    },
    { timeout: 20_000 },
  );
  const during = await get<ExportBody>(`/public/v1/exports/${exportId}`);
  expect(during.body).toMatchObject({ status: "running", url: null });
  expect(await app.services.db.exportChunk.count({ where: { exportId } })).toBe(0);
  expect((await download(`${app.baseUrl}/public/v1/exports/${exportId}/file`, { authorization: `Bearer ${tenant.token}` })).status).toBe(409);

  // A new worker finds the dead one's job at its start and runs it again, once PostgreSQL has let go of the dead one's
  // liveness lock and the job has been locked longer than crash recovery's grace period (2 s).
  await waitFor("the dead worker's job to be recoverable", async () => {
    const { rows } = await app.services.pool.query<{ n: number; held: number }>(
      `select (select count(*)::int from pg_locks where locktype = 'advisory' and classid = $1::bigint::oid) as held,
        (select count(*)::int from graphile_worker.jobs where locked_by is not null and locked_at < now() - interval '2 seconds') as n`,
      [LOCK_CLASS],
    );
    return rows[0].held === 0 && rows[0].n > 0;
  });
  worker = await startWorker(app.services, app.databaseUrl);
  const done = await completed(exportId);
  const lines = linesOf((await download(done.url ?? "")).bytes);
  expect(lines).toHaveLength(await listCount("/public/v1/orders"));
  expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
  const events = await app.services.db.event.findMany({ where: { storeId: tenant.storeId, type: "export.completed" } });
  expect(events.filter((e) => (e.data as { exportId?: string }).exportId === exportId)).toHaveLength(1);
}, 30_000);
