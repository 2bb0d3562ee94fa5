import { once } from "node:events";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { WorkerProcesses } from "../helpers/process.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { orderCreatedData } from "../helpers/fixtures.js";
import { startWorker } from "../../workers/runner.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, waitFor, type Receiver } from "./receiver.js";

/**
 * At-least-once across a crash: a worker process is SIGKILLed in the middle of a burst, or of an ordered endpoint's
 * sequence; nothing is lost, and the ordered endpoint sees nothing out of order.
 */

const BURST = 1000;

let app: TestApp;
let receiver: Receiver;
let tenant: Tenant;
const workers = new WorkerProcesses();

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
  tenant = await createTenant(app);
});

afterAll(async () => {
  workers.killAll();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

const spawnWorker = () => workers.start(app.databaseUrl, { WEBHOOK_TIMEOUT_MS: "500", WEBHOOK_RETRY_SCHEDULE: "100ms", DB_POOL_SIZE: "5" });

/** Emits `count` order.created events as 4 writers committing 10 at a time, collecting their ids. */
async function emitMany(storeId: string, count: number, into: string[]): Promise<void> {
  let remaining = count / 10;
  const writer = async () => {
    while (remaining-- > 0) {
      const ids = await app.services.db.$transaction(
        async (tx) => {
          const out: string[] = [];
          for (let i = 0; i < 10; i++) out.push((await emitEvent(tx, storeId, "order.created", orderCreatedData())).id);
          return out;
        },
        { timeout: 30_000 },
      );
      into.push(...ids);
    }
  };
  await Promise.all([writer(), writer(), writer(), writer()]);
}

function receivedEventIds(): Set<string> {
  return new Set(receiver.requests("/burst").map((r) => String(r.headers["x-service-event-id"])));
}

it(`a worker killed with SIGKILL mid-burst of ${BURST} events loses none once another starts`, async () => {
  // Slow enough that many attempts are in flight when the worker dies.
  receiver.on("/burst", () => ({ status: 200, delayMs: 30 }));
  // No pace to speak of: this is about losing nothing, not about waiting for slots.
  const res = await call(app, "POST", "/public/v1/webhooks", {
    token: tenant.token,
    body: { url: receiver.url("/burst"), events: ["order.created"], rateLimit: 10_000 },
  });
  expect(res.status).toBe(201);

  // Events keep coming while the first worker starts, works and dies.
  const eventIds: string[] = [];
  const emitting = emitMany(tenant.storeId, BURST, eventIds);
  const first = await spawnWorker();

  await waitFor("a part of the burst to arrive", () => receiver.requests("/burst").length >= 200, 30_000);
  first.kill("SIGKILL");
  await once(first, "exit");
  const { rows } = await app.services.pool.query<{ n: number }>("select count(*)::int as n from graphile_worker.jobs where locked_by is not null");
  // The dead worker was holding jobs: the next worker has to recover them.
  expect(rows[0].n).toBeGreaterThan(0);
  expect(receivedEventIds().size).toBeLessThan(BURST);

  const second = await spawnWorker();
  await emitting;
  expect(new Set(eventIds).size).toBe(BURST);
  // Attempts the dead worker sent but never recorded are sent again once their lease ends (at-least-once).
  await waitFor(
    "every delivery of the burst",
    async () => receivedEventIds().size === BURST && (await app.services.db.webhookDelivery.count({ where: { status: "DELIVERED" } })) === BURST,
    60_000,
  );
  expect([...receivedEventIds()].sort()).toEqual([...eventIds].sort());
  second.kill("SIGTERM");
  await once(second, "exit");
}, 120_000);

it("two workers sharing the queue send each attempt once", async () => {
  const t = await createTenant(app);
  receiver.on("/shared", () => ({ status: 200, delayMs: 5 }));
  const res = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
    token: t.token,
    body: { url: receiver.url("/shared"), events: ["order.created"], rateLimit: 10_000 },
  });
  const workers = await Promise.all([startWorker(app.services, app.databaseUrl), startWorker(app.services, app.databaseUrl)]);
  try {
    const ids: string[] = [];
    await emitMany(t.storeId, 300, ids);
    await waitFor(
      "all deliveries",
      async () => (await app.services.db.webhookDelivery.count({ where: { endpointId: res.body.id, status: "DELIVERED" } })) === 300,
      30_000,
    );
    const received = receiver.requests("/shared").map((r) => String(r.headers["x-service-event-id"]));
    expect(received).toHaveLength(300);
    expect(new Set(received)).toEqual(new Set(ids));
    expect(await app.services.db.webhookAttempt.count({ where: { delivery: { endpointId: res.body.id } } })).toBe(300);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
});

it("a worker SIGKILLed mid-sequence of an ordered endpoint loses and reorders nothing", async () => {
  const t = await createTenant(app);
  const path = "/ordered-crash";
  // Started while the endpoint and its events are set up: a worker process takes seconds to start.
  const starting = spawnWorker();
  const died = starting.then((victim) => once(victim, "exit"));
  // The worker dies while the third event's request is in flight: sent, never answered, never recorded.
  receiver.on(path, (_req, n) => {
    if (n === 3) void starting.then((victim) => victim.kill("SIGKILL"));
    return { delayMs: 100 };
  });
  const res = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
    token: t.token,
    body: { url: receiver.url(path), events: ["order.created"], ordering: "store", rateLimit: 10_000 },
  });
  expect(res.status).toBe(201);
  // One transaction: the sequences are known before any delivery can start.
  const sequences = await app.services.db.$transaction(async (tx) => {
    const out: number[] = [];
    for (let i = 0; i < 10; i++) out.push(Number((await emitEvent(tx, t.storeId, "order.created", orderCreatedData())).sequence));
    return out;
  });
  const arrived = () => receiver.requests(path).map((r) => (JSON.parse(r.body) as { sequence: number }).sequence);

  await died;
  expect(arrived()).toEqual(sequences.slice(0, 3));
  // A new worker's crash recovery hands it the dead one's jobs once they are past the grace period, at its start or
  // at its next sweep 5 s later: it starts once they are, so its first sweep finds them.
  await waitFor("the dead worker's jobs past the grace period", async () => {
    const { rows } = await app.services.pool.query<{ n: number }>(
      "select count(*)::int as n from graphile_worker.jobs where locked_by is not null and locked_at < now() - interval '2 seconds'",
    );
    return rows[0].n > 0;
  });
  const second = await spawnWorker();
  await waitFor(
    "all 10 delivered",
    async () => (await app.services.db.webhookDelivery.count({ where: { endpointId: res.body.id, status: "DELIVERED" } })) === 10,
    20_000,
  );
  // The attempt in flight when the worker died is sent again (at-least-once), and before anything later: the
  // arrivals, each run of repeats taken once, are the sequence exactly.
  expect(arrived().filter((s, i, all) => i === 0 || all[i - 1] !== s)).toEqual(sequences);
  expect(arrived().filter((s) => s === sequences[2])).toHaveLength(2);
  second.kill("SIGTERM");
  await once(second, "exit");
}, 30_000);
