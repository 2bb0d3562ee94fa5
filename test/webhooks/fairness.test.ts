import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { bundled } from "../helpers/process.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { orderCreatedData } from "../helpers/fixtures.js";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, startSilentReceiver, waitFor, type Receiver, type SilentReceiver } from "./receiver.js";

/**
 * One tenant never takes another's capacity: a webhook test waiting on a partner's receiver that never answers holds
 * no admission slot while it waits, one Application has at most WEBHOOK_TEST_CONCURRENCY of them in flight, /readyz
 * turns 503 only when most requests are refused, and each endpoint receives at most its rateLimit deliveries per
 * second, across worker processes. Real service, real worker processes, real receivers on 127.0.0.1.
 */

const hasRedis = await redisReachable();

let silent: SilentReceiver;
let receiver: Receiver;

beforeAll(async () => {
  silent = await startSilentReceiver();
  receiver = await startReceiver();
});

afterAll(async () => {
  destroyWebhookAgents();
  await silent?.close();
  await receiver?.close();
});

async function endpointAt(app: TestApp, tenant: Tenant, url: string): Promise<string> {
  const res = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", { token: tenant.token, body: { url, events: ["order.created"] } });
  expect(res.status).toBe(201);
  return res.body.id;
}

const testOf = (app: TestApp, tenant: Tenant, endpointId: string) =>
  call<{ status: string; lastError: string | null; code?: string }>(app, "POST", `/public/v1/webhooks/${endpointId}/test`, { token: tenant.token });

describe("webhook tests waiting on a receiver that never answers", () => {
  let app: TestApp;
  let hammer: Tenant;
  let others: Tenant[];

  beforeAll(async () => {
    // The admission limits as a process runs them (the test helper's long queue would hide shedding), a pool of 5.
    app = await startTestApp({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_TIMEOUT_MS: "60000",
      WEBHOOK_TEST_CONCURRENCY: "10",
      HTTP_MAX_QUEUED: "10",
      HTTP_QUEUE_TIMEOUT_MS: "1000",
    });
    hammer = await createTenant(app);
    others = [await createTenant(app), await createTenant(app), await createTenant(app)];
  });

  afterAll(async () => {
    await app?.close();
  });

  it("10 held by one Application: other tenants, token requests and administrators are served, no 5xx, and /readyz stays 200", async () => {
    const endpointId = await endpointAt(app, hammer, silent.url("/never"));
    const before = silent.received();
    const tests = Array.from({ length: 10 }, () => testOf(app, hammer, endpointId));
    await waitFor("10 tests held by the receiver", () => silent.received() - before >= 10);

    // 64 requests of everyone else while the ten wait, 16 at a time, and the same Application hammering its own reads.
    const kinds = [
      (i: number) => call(app, "GET", "/public/v1/orders?limit=5", { token: others[i % 3].token }),
      (i: number) =>
        call(app, "POST", "/partner/auth/token", {
          body: { grant_type: "client_credentials", client_id: others[i % 3].clientId, client_secret: others[i % 3].clientSecret },
        }),
      () => graphql(app, "{ stores(limit: 5) { data { id } } }"),
      () => call(app, "GET", "/readyz"),
    ];
    const statuses: { kind: number; status: number }[] = [];
    const hammering = Array.from({ length: 40 }, () => call(app, "GET", "/public/v1/webhooks", { token: hammer.token }));
    for (let batch = 0; batch < 4; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 16 }, async (_, j) => {
          const i = batch * 16 + j;
          const res = await kinds[i % kinds.length](i);
          return { kind: i % kinds.length, status: res.status };
        }),
      );
      statuses.push(...answers);
    }
    expect(silent.held()).toBeGreaterThanOrEqual(10);
    expect(statuses.filter((s) => s.status >= 500)).toEqual([]);
    expect(statuses.every((s) => s.status === 200)).toBe(true);
    // The hammering Application itself may be rate limited, or shed with Retry-After when a loaded machine keeps its
    // burst queued past HTTP_QUEUE_TIMEOUT_MS: never anything else.
    for (const res of await Promise.all(hammering)) {
      expect([200, 429, 503]).toContain(res.status);
      if (res.status === 503) expect(res.headers.get("retry-after")).not.toBeNull();
    }

    // Once the receiver lets go, each test answers with its failed attempt, recorded as before.
    silent.cut();
    for (const res of await Promise.all(tests)) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "FAILED", attempts: 1, httpStatus: null });
    }
  }, 90_000);
});

describe("WEBHOOK_TEST_CONCURRENCY", () => {
  let app: TestApp;
  let tenant: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "2000" });
    tenant = await createTenant(app);
    other = await createTenant(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("one Application has at most 2 tests in flight: the next is 429 with Retry-After and creates nothing; others are not held back", async () => {
    const held = await endpointAt(app, tenant, silent.url("/held"));
    const quick = await endpointAt(app, tenant, receiver.url("/quick"));
    const before = silent.received();
    const two = [testOf(app, tenant, held), testOf(app, tenant, held)];
    await waitFor("two tests held", () => silent.received() - before >= 2);
    const deliveries = await app.services.db.webhookDelivery.count();

    const third = await testOf(app, tenant, quick);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await app.services.db.webhookDelivery.count()).toBe(deliveries);
    expect(receiver.requests("/quick")).toHaveLength(0);

    // Another Application's test goes through meanwhile.
    const theirs = await testOf(app, other, await endpointAt(app, other, receiver.url("/theirs")));
    expect(theirs.status).toBe(200);
    expect(theirs.body.status).toBe("DELIVERED");

    for (const res of await Promise.all(two)) expect(res.status).toBe(200);
    const after = await testOf(app, tenant, quick);
    expect(after.status).toBe(200);
    expect(after.body.status).toBe("DELIVERED");
  }, 20_000);
});

describe("a test and its endpoint's pace", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
    tenant = await createTenant(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("takes a slot of the current second or is 429: at rateLimit 1, three tests in a row get at least one 429 that sends nothing", async () => {
    const created = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
      token: tenant.token,
      body: { url: receiver.url("/one-a-second"), events: ["order.created"], rateLimit: 1 },
    });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await testOf(app, tenant, created.body.id));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.body.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3 - refused.length);
    expect(receiver.requests("/one-a-second")).toHaveLength(3 - refused.length);
    expect(await app.services.db.webhookDelivery.count({ where: { endpointId: created.body.id } })).toBe(3 - refused.length);
  });
});

describe("/readyz and shedding", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    // One Application floods a process of one slot and no queue: the process itself is past capacity.
    app = await startTestApp({ HTTP_MAX_IN_FLIGHT: "1", HTTP_MAX_QUEUED: "0" });
    tenant = await createTenant(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("turns 503 while the process refuses most requests, and 200 again once it serves them", async () => {
    expect((await call(app, "GET", "/readyz")).status).toBe(200);
    const flood = await Promise.all(Array.from({ length: 60 }, () => call(app, "GET", "/public/v1/orders?limit=100", { token: tenant.token })));
    const shed = flood.filter((r) => r.status === 503).length;
    expect(shed).toBeGreaterThan(flood.length / 2);
    const ready = await call<{ code: string; detail: string }>(app, "GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body.detail).toMatch(/capacity/);
    // Served one at a time, the requests succeed again, and so does readiness once they outnumber the refusals.
    await waitFor(
      "/readyz to be 200 again",
      async () => {
        await call(app, "GET", "/public/v1/orders?limit=1", { token: tenant.token });
        return (await call(app, "GET", "/readyz")).status === 200;
      },
      15_000,
    );
  }, 30_000);
});

/** Starts `test/webhooks/worker-process.ts` (bundled) on the app's database and resolves once it takes jobs. */
async function spawnWorker(app: TestApp, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bundled("worker-process")], {
    env: { ...process.env, DATABASE_URL: app.databaseUrl, LOG_LEVEL: "silent", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", DB_POOL_SIZE: "5", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor("the worker process to start", () => out.includes("ready") || child.exitCode !== null, 30_000);
  if (child.exitCode !== null) throw new Error(`worker process exited with ${child.exitCode}`);
  return child;
}

describe.each([{ backend: "postgres" }, ...(hasRedis ? [{ backend: "redis" }] : [])])(
  "each endpoint's pace, two worker processes ($backend)",
  ({ backend }) => {
    let app: TestApp;
    let tenant: Tenant;
    const workers: ChildProcess[] = [];

    beforeAll(async () => {
      app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      tenant = await createTenant(app);
      // Two jobs at a time each, so both processes take a share of the deliveries (one would fetch them all).
      const env = { WORKER_CONCURRENCY: "2", WEBHOOK_PACE_BACKEND: backend, ...(backend === "redis" ? { REDIS_URL: TEST_REDIS_URL } : {}) };
      workers.push(await spawnWorker(app, env), await spawnWorker(app, env));
    }, 60_000);

    afterAll(async () => {
      for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGKILL");
      await app?.close();
    });

    it("rateLimit 5: 30 deliveries reach the receiver at 5 a second, none failed, none counted as an extra attempt", async () => {
      const path = `/paced-${backend}`;
      const created = await call<{ id: string; rateLimit: number }>(app, "POST", "/public/v1/webhooks", {
        token: tenant.token,
        body: { url: receiver.url(path), events: ["order.created"], rateLimit: 5 },
      });
      expect(created.status).toBe(201);
      expect(created.body.rateLimit).toBe(5);
      const endpointId = created.body.id;
      await app.services.db.$transaction(async (tx) => {
        for (let i = 0; i < 30; i++) await emitEvent(tx, tenant.storeId, "order.created", orderCreatedData(i));
      });
      await waitFor("30 deliveries", () => receiver.requests(path).length >= 30, 30_000);
      const at = receiver
        .requests(path)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(new Set(receiver.requests(path).map((r) => JSON.parse(r.body).eventId)).size).toBe(30);
      // 30 at 5 a second: six seconds' slots, so at least 4.4 s from the first to the last.
      expect(at[29] - at[0]).toBeGreaterThanOrEqual(4400);
      // No more than two seconds' worth (10) within any second.
      for (let i = 0; i + 10 < at.length; i++) expect(at[i + 10] - at[i]).toBeGreaterThanOrEqual(900);
      await waitFor(
        "every delivery recorded",
        async () => (await app.services.db.webhookDelivery.count({ where: { endpointId, status: "DELIVERED" } })) === 30,
      );
      const deliveries = await app.services.db.webhookDelivery.findMany({ where: { endpointId }, select: { attempts: true, lastError: true } });
      expect(deliveries.every((d) => d.attempts === 1 && d.lastError === null)).toBe(true);
      expect(await app.services.db.webhookAttempt.count({ where: { delivery: { endpointId } } })).toBe(30);
    }, 60_000);

    it("rateLimit is validated on create and PATCH, and a changed pace applies to what comes next", async () => {
      const path = `/repaced-${backend}`;
      for (const rateLimit of [0, 10_001, 2.5, "10"]) {
        const bad = await call(app, "POST", "/public/v1/webhooks", {
          token: tenant.token,
          body: { url: receiver.url(path), events: ["order.created"], rateLimit },
        });
        expect(bad.status, String(rateLimit)).toBe(400);
      }
      const created = await call<{ id: string; rateLimit: number }>(app, "POST", "/public/v1/webhooks", {
        token: tenant.token,
        body: { url: receiver.url(path), events: ["order.created"] },
      });
      expect(created.body.rateLimit).toBe(50);
      const patch = (rateLimit: unknown) =>
        call<{ rateLimit: number }>(app, "PATCH", `/public/v1/webhooks/${created.body.id}`, { token: tenant.token, body: { rateLimit } });
      expect((await patch(0)).status).toBe(400);
      expect((await patch(10_001)).status).toBe(400);
      const patched = await patch(2);
      expect(patched.status).toBe(200);
      expect(patched.body.rateLimit).toBe(2);
      await app.services.db.$transaction(async (tx) => {
        for (let i = 0; i < 6; i++) await emitEvent(tx, tenant.storeId, "order.created", orderCreatedData(i));
      });
      await waitFor("6 deliveries", () => receiver.requests(path).length >= 6, 20_000);
      const at = receiver
        .requests(path)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      // 6 at 2 a second: three seconds' slots, so the first and the last are at least a second apart (the first may
      // take the end of its second, the last the start of its own).
      expect(at[5] - at[0]).toBeGreaterThanOrEqual(1000);
    }, 60_000);
  },
);
