import { afterAll, beforeAll, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "../platform/support.js";
import { waitFor } from "../webhooks/receiver.js";

/**
 * An API process dies at the end of a write with an Idempotency-Key, just before its record is marked done.
 * The retry, to a new process, must create nothing twice: it replays the write or runs it once.
 */

/** Advisory lock the test holds; a trigger makes every update of an idempotency record wait for it. */
const BLOCK = 740_101;

let app: TestApp;
let tenant: Tenant;
let admin: pg.Client;
const processes: ApiProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { scopes: ["customers:read", "customers:write"] });
  admin = new pg.Client({ connectionString: app.databaseUrl });
  await admin.connect();
});

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await admin?.end();
  await app?.close();
});

function postCustomer(base: string, key: string, name: string): Promise<Response> {
  return fetch(`${base}/public/v1/customers`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ name }),
  });
}

async function customersNamed(name: string): Promise<string[]> {
  const { rows } = await admin.query<{ id: string }>(`select id from "Customer" where "storeId" = $1 and name = $2`, [tenant.storeId, name]);
  return rows.map((r) => r.id);
}

it("a process killed before it records its answer: the retry creates the customer once", async () => {
  const key = randomUUID();
  const name = `Crash ${key.slice(0, 8)}`;
  await admin.query(`
    create function test_hold_record() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${BLOCK}); return new; end $$`);
  await admin.query(`create trigger test_hold_record before update on "IdempotencyKey" for each row execute function test_hold_record()`);
  await admin.query("select pg_advisory_lock($1)", [BLOCK]);

  const doomed = await startApiProcess(app.databaseUrl);
  processes.push(doomed);
  const lost = postCustomer(doomed.baseUrl, key, name).catch((e: unknown) => e);
  const blocked = await waitFor(
    "the record's update to wait on the test's lock",
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `select pid from pg_locks where locktype = 'advisory' and not granted and objid = $1 and database = (select oid from pg_database where datname = current_database())`,
        [BLOCK],
      );
      return rows[0]?.pid;
    },
    20_000,
  );
  doomed.child.kill("SIGKILL");
  await doomed.exited;
  expect(await lost).toBeInstanceOf(Error);
  // The dead process never sent that update: end its backend before the lock lets the statement finish.
  await admin.query("select pg_terminate_backend($1)", [blocked]);
  await admin.query("select pg_advisory_unlock($1)", [BLOCK]);
  await admin.query(`drop trigger test_hold_record on "IdempotencyKey"; drop function test_hold_record()`);
  // Retries come at any time: age whatever the crash left as a retry some minutes later would find it.
  await admin.query(`update "IdempotencyKey" set "createdAt" = "createdAt" - interval '5 minutes' where key = $1`, [key]);

  const survivor = await startApiProcess(app.databaseUrl);
  processes.push(survivor);
  try {
    const retry = await postCustomer(survivor.baseUrl, key, name);
    const body = (await retry.json()) as { id: string; name: string };
    expect(retry.status, JSON.stringify(body)).toBe(201);
    expect(body.name).toBe(name);
    expect(await customersNamed(name)).toEqual([body.id]);

    const again = await postCustomer(survivor.baseUrl, key, name);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { id: string }).id).toBe(body.id);
    expect(await customersNamed(name)).toEqual([body.id]);
  } finally {
    await stopApiProcess(survivor);
  }
}, 120_000);
