import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, startSilentReceiver, waitFor, type Receiver, type SilentReceiver } from "./receiver.js";

/**
 * One tenant never takes another's capacity: a webhook test waiting on a partner's receiver that never answers holds
 * no admission slot while it waits, one Application has at most WEBHOOK_TEST_CONCURRENCY of them in flight, and
 * /readyz turns 503 only when most requests are refused. Real service, real receivers on 127.0.0.1.
 */

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
      WEBHOOK_TIMEOUT_MS: "10000",
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
    for (const res of await Promise.all(hammering)) expect([200, 429]).toContain(res.status);

    // The tests end at the timeout as they always did, each recorded as a failed attempt.
    for (const res of await Promise.all(tests)) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "FAILED", lastError: "timeout after 10000ms" });
    }
  }, 30_000);
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

describe("/readyz and shedding", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
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
