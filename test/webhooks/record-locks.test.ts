import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orderCreatedData } from "../helpers/fixtures.js";
import { createTenant } from "../helpers/tenants.js";
import { recordBatch, type FirstRecordRow, type RecordRow } from "../../src/modules/webhooks/attempt.js";
import { WEBHOOK_RECORD_FIRST } from "../../src/modules/webhooks/sql/record.js";
import { DELIVER_TASK, scheduledJobKey } from "../../src/modules/webhooks/jobs.js";
import { requestReplays } from "../../src/modules/webhooks/deliveries.js";
import { waitFor } from "./receiver.js";

/**
 * The worker records attempts in batches, several at once near its delivery ceiling, and a batch updates the rows
 * of the deliveries and endpoints it covers. Two batches that lock shared rows in different orders deadlock
 * (40P01): the job fails and its deliveries are sent again. These tests hold row locks from other transactions
 * to interleave real batches (recordBatch, the prepared RECORD statement) the way concurrent load does, then
 * check that no batch is chosen as a deadlock victim.
 */

let app: TestApp;
let storeId = "";
let applicationId = "";
const pools: pg.Pool[] = [];
/** Lock holders a failed test left open, closed at the end so the pools can end. */
const holding = new Set<pg.PoolClient>();

beforeAll(async () => {
  app = await startTestApp();
  const tenant = await createTenant(app);
  storeId = tenant.storeId;
  applicationId = (await app.services.db.application.findUniqueOrThrow({ where: { clientId: tenant.clientId }, select: { id: true } })).id;
  // graphile-worker registers a task name on its first job; the first batches to schedule one would queue behind
  // each other on that row, which a running service did long ago.
  await app.services.pool.query(`select graphile_worker.add_job($1, '{}'::json, job_key := 'register', run_at := now() + interval '1 day')`, [DELIVER_TASK]);
  await app.services.pool.query(`select graphile_worker.remove_job('register')`);
});

afterAll(async () => {
  for (const client of holding) client.release(true);
  await Promise.all(pools.map((p) => p.end()));
  await app?.close();
});

/** A connection of its own, named so its lock waits can be found in pg_stat_activity. */
function connection(name: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: app.databaseUrl, max: 1, application_name: name });
  pools.push(pool);
  return pool;
}

const db = () => app.services.pool;

/** Endpoints inserted in the order given, so their rows also lie in that order in the table. */
async function endpoints(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < n; k++) {
    const { rows } = await db().query<{ id: string }>(
      `insert into "WebhookEndpoint" (id, "applicationId", "storeId", url, events, "secretCiphertext", "secretPrefix", "updatedAt")
       values (gen_random_uuid(), $1, $2, 'https://receiver.example/' || $3::text, array['order.created'], 'x', 'whsec_x', now()) returning id`,
      [applicationId, storeId, `${k}`],
    );
    ids.push(rows[0].id);
  }
  return ids;
}

interface Delivery {
  id: string;
  endpointId: string;
}

/** One new delivery, of a new event, to the endpoint. */
async function delivery(endpointId: string): Promise<Delivery> {
  const { rows } = await db().query<{ id: string }>(
    `with ev as (insert into "Event" (id, "storeId", type, data) values (gen_random_uuid(), $1, 'order.created', $4) returning id)
     insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, "nextAttemptAt", "updatedAt")
     select gen_random_uuid(), ev.id, $2, $3, $1, 'order.created', 'PENDING', now(), now() from ev returning id`,
    [storeId, endpointId, applicationId, JSON.stringify(orderCreatedData())],
  );
  return { id: rows[0].id, endpointId };
}

/** A failed attempt as the worker records it: a scheduled one (next attempt scheduled), or a replay (chain kept). */
function failedAttempt(delivery: Delivery, trigger: "SCHEDULED" | "REPLAY" = "SCHEDULED"): RecordRow {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    status: "FAILED",
    http_status: 503,
    last_error: "HTTP 503",
    duration_ms: 3,
    next: trigger === "SCHEDULED" ? "schedule" : "keep",
    delay_ms: 60_000,
    trigger,
    succeeded: false,
    error: "HTTP 503",
    headers: { "content-type": "application/json" },
    body: "{}",
    excerpt: null,
    started_at: new Date(),
    dead_letter: false,
    next_step: 2,
    job_key: scheduledJobKey(delivery.id),
    drill: null,
  };
}

/** A transaction on a connection of its own that holds row locks until it commits. */
async function hold(name: string, sql: string, values: unknown[]): Promise<{ pid: number; commit: () => Promise<void> }> {
  const client = await connection(name).connect();
  holding.add(client);
  await client.query("begin");
  await client.query(sql, values);
  const pid = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0].pid;
  return {
    pid,
    commit: async () => {
      await client.query("commit");
      holding.delete(client);
      client.release();
    },
  };
}

interface Batch {
  /** The error code the batch failed with (40P01 for a deadlock), or null once it committed. */
  outcome: Promise<string | null>;
  /** Resolves once the batch has settled or waits for a lock held by anyone but `except`. */
  stuck: (except?: number) => Promise<void>;
}

/** What `work` failed with (its SQLSTATE, 40P01 for a deadlock, or its message), or null once it succeeded. */
function outcomeOf(work: Promise<unknown>): { outcome: Promise<string | null>; settled: () => boolean } {
  let settled = false;
  const outcome = work.then(
    () => null,
    (e: unknown) => (e instanceof Error && "code" in e ? String(e.code) : String(e)),
  );
  void outcome.finally(() => (settled = true));
  return { outcome, settled: () => settled };
}

/** Lock waits of the backends matching `where` (a condition on pg_stat_activity), with who they wait for. */
async function lockWaits(where: string, values: unknown[]): Promise<number[][]> {
  const { rows } = await db().query<{ blockers: number[] }>(
    `select pg_blocking_pids(pid) as blockers from pg_stat_activity where wait_event_type = 'Lock' and ${where}`,
    values,
  );
  return rows.map((r) => r.blockers);
}

/** recordBatch on a connection of its own, named `name`. */
function startBatch(name: string, rows: RecordRow[]): Batch {
  const { outcome, settled } = outcomeOf(recordBatch(connection(name), rows));
  const stuck = (except?: number) =>
    waitFor(`${name} to wait for a lock or settle`, async () => {
      if (settled()) return true;
      return (await lockWaits("application_name = $1", [name])).some((blockers) => blockers.some((b) => b !== except));
    }).then(() => undefined);
  return { outcome, stuck };
}

describe("recording attempts in concurrent batches", () => {
  it("never deadlocks on the endpoint rows two batches share, whatever order each finds them in", async () => {
    // With statistics for a small table, PostgreSQL reads the endpoint rows in table order: A, C, B. `first` reads
    // the table while another transaction moves A's row (an update writes the new version at the end): it locks A,
    // then waits for C. `second` starts after A moved, so it finds B before A: it locks B and waits for `first`.
    // Once C is free, `first` wants B, and each batch waits for the other.
    const [a, c, b] = await endpoints(3);
    await db().query(`analyze "WebhookEndpoint"`);
    const firstRows = [failedAttempt(await delivery(a)), failedAttempt(await delivery(c)), failedAttempt(await delivery(b))];
    const secondRows = [failedAttempt(await delivery(b)), failedAttempt(await delivery(a))];
    const moveA = await hold("move-a", `update "WebhookEndpoint" set "updatedAt" = now() where id = $1`, [a]);
    const holdC = await hold("hold-c", `select 1 from "WebhookEndpoint" where id = $1 for no key update`, [c]);

    const first = startBatch("first", firstRows);
    await first.stuck();
    await moveA.commit();
    await first.stuck(moveA.pid);
    const second = startBatch("second", secondRows);
    await second.stuck();
    await holdC.commit();

    expect(await Promise.all([first.outcome, second.outcome])).toEqual([null, null]);
    const { rows } = await db().query<{ id: string; failureCount: number }>(`select id, "failureCount" from "WebhookEndpoint" where id = any($1::uuid[])`, [
      [a, b, c],
    ]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.failureCount]))).toEqual({ [a]: 2, [b]: 2, [c]: 1 });
  });

  it("never deadlocks on the delivery rows two batches share (a replay recorded beside a retry), whatever their order", async () => {
    const [endpoint] = await endpoints(1);
    const [d0, d1, d2] = [await delivery(endpoint), await delivery(endpoint), await delivery(endpoint)];
    // A batch reaches its deliveries in the order it lists them: `retries` locks d1 and waits for d0, `replays` locks
    // d2 and waits for d1; once d0 is free, `retries` wants d2.
    const holdD0 = await hold("hold-d0", `select 1 from "WebhookDelivery" where id = $1 for no key update`, [d0.id]);

    const retries = startBatch("retries", [failedAttempt(d1), failedAttempt(d0), failedAttempt(d2)]);
    await retries.stuck();
    const replays = startBatch("replays", [failedAttempt(d2, "REPLAY"), failedAttempt(d1, "REPLAY")]);
    await replays.stuck();
    await holdD0.commit();

    expect(await Promise.all([retries.outcome, replays.outcome])).toEqual([null, null]);
    const { rows } = await db().query<{ id: string; attempts: number }>(`select id, attempts from "WebhookDelivery" where id = any($1::uuid[])`, [
      [d0.id, d1.id, d2.id],
    ]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.attempts]))).toEqual({ [d0.id]: 1, [d1.id]: 2, [d2.id]: 2 });
  });

  it("never deadlocks with a replay of several deliveries whose attempts are being recorded", async () => {
    const [endpoint] = await endpoints(1);
    const [dx, d1, d2] = [await delivery(endpoint), await delivery(endpoint), await delivery(endpoint)];
    // A replay request marks its deliveries PENDING in one update, which reaches them in table order (d1, d2);
    // the batch locks d2, then waits for dx. The replay locks d1 and waits for d2; once dx is free the batch wants d1.
    const holdX = await hold("hold-dx", `select 1 from "WebhookDelivery" where id = $1 for no key update`, [dx.id]);
    const batch = startBatch("record", [failedAttempt(d2), failedAttempt(dx), failedAttempt(d1)]);
    await batch.stuck();
    const replay = outcomeOf(app.services.db.$transaction((tx) => requestReplays(tx, null, [d1.id, d2.id], async () => null)));
    await waitFor(
      "the replay to wait for a lock or settle",
      async () => replay.settled() || (await lockWaits("application_name <> 'record'", [])).some((b) => !b.includes(holdX.pid)),
    );
    await holdX.commit();

    expect(await Promise.all([batch.outcome, replay.outcome])).toEqual([null, null]);
    const { rows } = await db().query<{ attempts: number }>(`select attempts from "WebhookDelivery" where id = any($1::uuid[])`, [[d1.id, d2.id]]);
    expect(rows.map((r) => r.attempts)).toEqual([1, 1]);
  });

  it("a first attempt whose endpoint is deleted while it is recorded creates no delivery, and its batch still commits", async () => {
    const [gone, kept] = await endpoints(2);
    const { rows: events } = await db().query<{ id: string }>(
      `insert into "Event" (id, "storeId", type, data) values (gen_random_uuid(), $1, 'order.created', $2) returning id`,
      [storeId, JSON.stringify(orderCreatedData())],
    );
    const first = (endpointId: string): FirstRecordRow => ({
      ...failedAttempt({ id: randomUUID(), endpointId }),
      status: "DELIVERED",
      http_status: 200,
      last_error: null,
      next: "clear",
      succeeded: true,
      error: null,
      event_id: events[0].id,
      application_id: applicationId,
      store_id: storeId,
      event_type: "order.created",
    });
    const rows = [first(gone), first(kept)];
    // Deleting an endpoint locks its row first; the batch's insert must not reach the foreign key check against it.
    const deletion = await hold("delete-endpoint", `delete from "WebhookEndpoint" where id = $1`, [gone]);
    const recorded = recordBatch(connection("record-first"), rows, WEBHOOK_RECORD_FIRST);
    const batch = outcomeOf(recorded);
    await waitFor("the batch to wait for the deletion", async () => batch.settled() || (await lockWaits("application_name = 'record-first'", [])).length > 0);
    await deletion.commit();

    expect(await batch.outcome).toBeNull();
    expect(await recorded).toEqual([null, 1]);
    const { rows: created } = await db().query<{ id: string; status: string; attempts: number }>(
      `select d.id, d.status, d.attempts from "WebhookDelivery" d join "WebhookAttempt" a on a."deliveryId" = d.id where d."eventId" = $1`,
      [events[0].id],
    );
    expect(created).toEqual([{ id: rows[1].id, status: "DELIVERED", attempts: 1 }]);
  });
});
