import { once } from "node:events";
import type { Runner } from "graphile-worker";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { WorkerProcesses } from "../helpers/process.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { startWorker } from "../../workers/runner.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { SIMULATE_TASK } from "../../src/modules/sandbox/simulate.js";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";
import { tableCounter } from "../platform/support.js";

/**
 * Simulated sandbox orders against the real service, a real worker (in this process, or a process of its own to
 * SIGKILL) and a real local receiver: the order walks its path through the real status change, one step per
 * `stepSeconds`, and a dead worker's steps run once another starts, none skipped, none twice.
 */

const DELIVERY_PATH = ["order.created", "order.confirmed", "order.preparing", "order.ready", "order.dispatched", "order.delivered", "order.completed"];

let app: TestApp;
let receiver: Receiver;
let t: Tenant;
const workers = new WorkerProcesses();

type Order = { id: string; status: string; type: string; statusHistory: { status: string }[] };
type Problem = { code: string; errors?: { field: string; code: string; allowed?: string[] }[] };
type FeedEvent = { eventId: string; eventType: string; timestamp: string; sequence: number; data: { orderId?: string; version?: number } };

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
  t = await createTenant(app);
  const endpoint = await call(app, "POST", "/public/v1/webhooks", {
    token: t.token,
    body: { url: receiver.url("/orders"), events: DELIVERY_PATH, rateLimit: 10_000 },
  });
  expect(endpoint.status).toBe(201);
});

afterAll(async () => {
  workers.killAll();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

const simulated = (body: Record<string, unknown>, token = t.token) => call<Order & Problem>(app, "POST", "/public/v1/sandbox/orders", { token, body });

/** The feed's events of one order, in sequence order. */
async function feedOf(orderId: string): Promise<FeedEvent[]> {
  const res = await call<{ data: FeedEvent[] }>(app, "GET", "/public/v1/events?limit=100", { token: t.token });
  expect(res.status).toBe(200);
  return res.body.data.filter((e) => e.data.orderId === orderId);
}

const orderStatus = async (id: string) => (await app.services.db.order.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;

/** The simulation's jobs (graphile-worker's jobs view leaves the payload out). */
const STEPS = `graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id and t.identifier = '${SIMULATE_TASK}'`;

async function pendingSteps(orderId: string): Promise<number> {
  const { rows } = await app.services.pool.query<{ n: number }>(`select count(*)::int as n from ${STEPS} where j.payload->>'orderId' = $1`, [orderId]);
  return rows[0].n;
}

/** Every step's event comes at least a step after the one before; delivered and completed are one step's two events. */
function expectPaced(events: FeedEvent[], stepMs: number): void {
  const steps = events.filter((e) => e.eventType !== "order.completed");
  for (let i = 1; i < steps.length; i++) {
    const gap = Date.parse(steps[i].timestamp) - Date.parse(steps[i - 1].timestamp);
    expect(gap, `${steps[i - 1].eventType} → ${steps[i].eventType}`).toBeGreaterThanOrEqual(stepMs);
  }
}

/** The order's versions in its events are 1, 2, 3… with no gap and no repeat (delivered and completed share one). */
function expectContiguous(events: FeedEvent[]): void {
  const versions = events.filter((e) => e.eventType !== "order.completed").map((e) => e.data.version);
  expect(versions).toEqual(versions.map((_, i) => i + 1));
}

describe("validation: nothing is created on a refusal", () => {
  const bad: [string, Record<string, unknown>, number, string, string][] = [
    ["stepSeconds 0", { scenario: "delivery", simulate: { until: "READY", stepSeconds: 0 } }, 400, "simulate.stepSeconds", "OUT_OF_RANGE"],
    ["stepSeconds 601", { scenario: "delivery", simulate: { until: "READY", stepSeconds: 601 } }, 400, "simulate.stepSeconds", "OUT_OF_RANGE"],
    ["stepSeconds 1.5", { scenario: "delivery", simulate: { until: "READY", stepSeconds: 1.5 } }, 400, "simulate.stepSeconds", "INVALID_TYPE"],
    ["stepSeconds as text", { scenario: "delivery", simulate: { until: "READY", stepSeconds: "5" } }, 400, "simulate.stepSeconds", "INVALID_TYPE"],
    ["stepSeconds null", { scenario: "delivery", simulate: { until: "READY", stepSeconds: null } }, 400, "simulate.stepSeconds", "INVALID_TYPE"],
    ["no until", { scenario: "delivery", simulate: { stepSeconds: 5 } }, 400, "simulate.until", "REQUIRED"],
    ["an unknown status", { scenario: "delivery", simulate: { until: "TELEPORTED" } }, 400, "simulate.until", "INVALID_VALUE"],
    ["a lower-case status", { scenario: "delivery", simulate: { until: "ready" } }, 400, "simulate.until", "INVALID_VALUE"],
    ["simulate not an object", { scenario: "delivery", simulate: "soon" }, 400, "simulate", "INVALID_TYPE"],
    ["until PENDING, where the order starts", { scenario: "delivery", simulate: { until: "PENDING" } }, 422, "simulate.until", "UNREACHABLE_STATUS"],
    ["until CANCELLED, off the path", { scenario: "cash", simulate: { until: "CANCELLED" } }, 422, "simulate.until", "UNREACHABLE_STATUS"],
    ["a pickup order until DISPATCHED", { scenario: "pickup", simulate: { until: "DISPATCHED", stepSeconds: 1 } }, 422, "simulate.until", "UNREACHABLE_STATUS"],
    ["the cancelled scenario", { scenario: "cancelled", simulate: { until: "DELIVERED" } }, 422, "simulate.until", "UNREACHABLE_STATUS"],
  ];
  for (const [name, body, status, field, code] of bad) {
    it(`${name}: ${status} ${code} on ${field}`, async () => {
      const counts = await tableCounter(app);
      const before = await counts();
      const res = await simulated(body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.errors?.map((e) => [e.field, e.code])).toEqual([[field, code]]);
      expect(await counts()).toEqual(before);
    });
  }

  it("a 422 lists the statuses the order does reach", async () => {
    const pickup = await simulated({ scenario: "pickup", simulate: { until: "DISPATCHED" } });
    expect(pickup.body.errors?.[0].allowed).toEqual(["CONFIRMED", "PREPARING", "READY", "DELIVERED"]);
    const cancelled = await simulated({ scenario: "cancelled", simulate: { until: "DELIVERED" } });
    expect(cancelled.body.errors?.[0].allowed).toEqual([]);
  });

  it("sandboxCreateOrder refuses the same values with the same errors", async () => {
    const counts = await tableCounter(app);
    const before = await counts();
    const query = "mutation($s: SandboxSimulation) { sandboxCreateOrder(scenario: PICKUP, simulate: $s) { id } }";
    const range = await graphql(app, query, { s: { until: "READY", stepSeconds: 601 } }, t.token);
    expect(range.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    expect(range.errors?.[0].extensions?.errors).toMatchObject([{ field: "simulate.stepSeconds", code: "OUT_OF_RANGE" }]);
    const offPath = await graphql(app, query, { s: { until: "DISPATCHED" } }, t.token);
    expect(offPath.errors?.[0].extensions?.code).toBe("UNPROCESSABLE_ENTITY");
    expect(offPath.errors?.[0].extensions?.errors).toMatchObject([{ field: "simulate.until", code: "UNREACHABLE_STATUS" }]);
    const typed = await graphql(app, query, { s: { until: "READY", stepSeconds: 1.5 } }, t.token);
    expect(typed.errors?.[0].extensions?.code).toBe("INVALID_REQUEST");
    expect(await counts()).toEqual(before);
  });

  it("a PRODUCTION token is 403 FORBIDDEN and nothing is created", async () => {
    const prod = await createTenant(app, { environment: "PRODUCTION" });
    const counts = await tableCounter(app);
    const before = await counts();
    const res = await simulated({ scenario: "delivery", simulate: { until: "DELIVERED", stepSeconds: 1 } }, prod.token);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
    expect(await counts()).toEqual(before);
  });

  it("the first step commits with the order, stepSeconds (default 5) after it", async () => {
    const res = await simulated({ scenario: "delivery", simulate: { until: "CONFIRMED" } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("PENDING");
    const { rows } = await app.services.pool.query<{ payload: Record<string, unknown>; delay: number }>(
      `select j.payload, extract(epoch from j.run_at - o."createdAt")::float8 as delay from ${STEPS} join "Order" o on o.id = (j.payload->>'orderId')::uuid`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].payload).toEqual({ storeId: t.storeId, orderId: res.body.id, until: "CONFIRMED", stepSeconds: 5, version: 1 });
    expect(rows[0].delay).toBeGreaterThanOrEqual(5);
    expect(rows[0].delay).toBeLessThan(10);
    await app.services.pool.query(
      `delete from graphile_worker._private_jobs j using graphile_worker._private_tasks t where t.id = j.task_id and t.identifier = $1`,
      [SIMULATE_TASK],
    );
  });
});

describe("with a worker", () => {
  let worker: Runner;
  beforeAll(async () => {
    worker = await startWorker(app.services, app.databaseUrl);
  });
  afterAll(() => worker?.stop());

  it("an order simulated to DELIVERED emits every event in order, a step apart; a pickup one stops at READY", async () => {
    const [delivery, pickup] = await Promise.all([
      simulated({ scenario: "delivery", simulate: { until: "DELIVERED", stepSeconds: 1 } }),
      simulated({ scenario: "pickup", simulate: { until: "READY", stepSeconds: 1 } }),
    ]);
    expect(delivery.status).toBe(201);
    expect(pickup.status).toBe(201);
    await waitFor("the delivery order to be DELIVERED", async () => (await orderStatus(delivery.body.id)) === "DELIVERED", 20_000);

    const events = await feedOf(delivery.body.id);
    expect(events.map((e) => e.eventType)).toEqual(DELIVERY_PATH);
    expectContiguous(events);
    expectPaced(events, 1000);
    // The receiver gets each of them once.
    await waitFor("every webhook of the order", () => received(delivery.body.id).length >= DELIVERY_PATH.length, 10_000);
    expect(received(delivery.body.id).sort()).toEqual(events.map((e) => e.eventId).sort());

    // The pickup order stopped at READY: nothing more is scheduled, and it stays there.
    expect(await orderStatus(pickup.body.id)).toBe("READY");
    expect(await pendingSteps(pickup.body.id)).toBe(0);
    const pickupEvents = await feedOf(pickup.body.id);
    expect(pickupEvents.map((e) => e.eventType)).toEqual(["order.created", "order.confirmed", "order.preparing", "order.ready"]);
    expectPaced(pickupEvents, 1000);
    expect(await pendingSteps(delivery.body.id)).toBe(0);
  }, 30_000);

  it("a step run again does nothing: its order no longer has the version it carries", async () => {
    const res = await simulated({ scenario: "pickup", simulate: { until: "CONFIRMED", stepSeconds: 1 } });
    await waitFor("the order to be CONFIRMED", async () => (await orderStatus(res.body.id)) === "CONFIRMED", 10_000);
    // The job of the step that ran, as a worker that died after its commit would leave it.
    const payload = { storeId: t.storeId, orderId: res.body.id, until: "DELIVERED", stepSeconds: 1, version: 1 };
    await app.services.pool.query("select graphile_worker.add_job($1, $2::json)", [SIMULATE_TASK, JSON.stringify(payload)]);
    await waitFor("the stale step to run", async () => (await pendingSteps(res.body.id)) === 0, 10_000);
    expect(await orderStatus(res.body.id)).toBe("CONFIRMED");
    expect((await feedOf(res.body.id)).map((e) => e.eventType)).toEqual(["order.created", "order.confirmed"]);
  });

  it("the partner's own change, a move or a cancellation, ends the simulation", async () => {
    const simulate = { until: "DELIVERED", stepSeconds: 1 };
    const [moved, cancelled] = await Promise.all([simulated({ scenario: "delivery", simulate }), simulated({ scenario: "delivery", simulate })]);
    const patch = (id: string, body: Record<string, unknown>) => call(app, "PATCH", `/public/v1/orders/${id}/status`, { token: t.token, body });
    expect((await patch(moved.body.id, { status: "CONFIRMED" })).status).toBe(200);
    expect((await patch(cancelled.body.id, { status: "CANCELLED", reason: "The customer called it off" })).status).toBe(200);
    await waitFor("the first steps to run", async () => (await pendingSteps(moved.body.id)) + (await pendingSteps(cancelled.body.id)) === 0, 10_000);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await orderStatus(moved.body.id)).toBe("CONFIRMED");
    expect((await feedOf(moved.body.id)).map((e) => e.eventType)).toEqual(["order.created", "order.confirmed"]);
    expect(await orderStatus(cancelled.body.id)).toBe("CANCELLED");
    expect((await feedOf(cancelled.body.id)).map((e) => e.eventType)).toEqual(["order.created", "order.cancelled"]);
  });
});

function received(orderId: string): string[] {
  return receiver
    .requests("/orders")
    .filter((r) => (JSON.parse(r.body) as FeedEvent).data.orderId === orderId)
    .map((r) => String(r.headers["x-service-event-id"]));
}

const spawnWorker = () => workers.start(app.databaseUrl, { DB_POOL_SIZE: "3" });

it("a worker SIGKILLed in the middle of a step: the next worker runs it, nothing skipped, nothing twice", async () => {
  const first = await spawnWorker();
  const res = await simulated({ scenario: "delivery", simulate: { until: "DELIVERED", stepSeconds: 1 } });
  await waitFor("the order to be PREPARING", async () => (await orderStatus(res.body.id)) === "PREPARING", 15_000);

  // Hold the order's row, so the worker's next step takes its job and waits on the row: it dies holding both.
  const holder = new pg.Client({ connectionString: app.databaseUrl });
  await holder.connect();
  try {
    await holder.query("begin");
    await holder.query(`select 1 from "Order" where id = $1 for no key update`, [res.body.id]);
    await waitFor(
      "the worker to take the next step",
      async () =>
        (await app.services.pool.query("select 1 from graphile_worker.jobs where task_identifier = $1 and locked_by is not null", [SIMULATE_TASK])).rowCount ===
        1,
      10_000,
    );
    first.kill("SIGKILL");
    await once(first, "exit");
  } finally {
    await holder.query("rollback");
    await holder.end();
  }
  // No worker: the due step waits, still held by the dead worker, and the order stays where it was.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await orderStatus(res.body.id)).toBe("PREPARING");
  expect((await app.services.pool.query(`select 1 from ${STEPS} where j.locked_by is not null`)).rowCount).toBe(1);

  const second = await spawnWorker();
  await waitFor("the order to be DELIVERED", async () => (await orderStatus(res.body.id)) === "DELIVERED", 30_000);
  const events = await feedOf(res.body.id);
  expect(events.map((e) => e.eventType)).toEqual(DELIVERY_PATH);
  expectContiguous(events);
  expectPaced(events, 1000);
  const history = await app.services.db.orderStatusHistory.findMany({ where: { orderId: res.body.id }, orderBy: { at: "asc" } });
  expect(history.map((h) => h.status)).toEqual(["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"]);
  expect(await pendingSteps(res.body.id)).toBe(0);
  second.kill("SIGTERM");
  await once(second, "exit");
}, 60_000);
