import { orderCreatedData } from "../helpers/fixtures.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { freePort, runCli, type ServiceProcess } from "../helpers/process.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";
import { createAdminKey } from "../../src/modules/admin/operations.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { startReceiver, waitFor, type Receiver } from "./receiver.js";

/**
 * Who-did-what as operators see it, from real processes: an API (`--role api`) whose request lines name the caller,
 * and a worker (`--role worker`, /metrics on METRICS_PORT) whose failed attempts and dead letters are warn lines
 * and whose attempts are counted by outcome.
 */

let app: TestApp;
let receiver: Receiver;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiBase: string;
let metricsBase: string;

beforeAll(async () => {
  app = await startTestApp();
  receiver = await startReceiver();
  receiver.on("/fail", () => ({ status: 500, body: '{"error":"boom"}' }));
  receiver.on("/slow", () => ({ delayMs: 1_000 }));
  const [apiPort, metricsPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: app.databaseUrl,
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    PUBLIC_BASE_URL: "http://api.test.local",
    ADMIN_API_KEY: ADMIN_KEY,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE: "50ms",
    WEBHOOK_TIMEOUT_MS: "300",
  };
  api = runCli("start", ["--role", "api"], { ...env, PORT: String(apiPort) });
  worker = runCli("start", ["--role", "worker"], { ...env, PORT: "0", METRICS_PORT: String(metricsPort) });
  await Promise.all([api.waitFor(/"msg":"listening"/, 90_000), worker.waitFor(/"msg":"worker started"/, 90_000)]);
  apiBase = `http://127.0.0.1:${apiPort}`;
  metricsBase = `http://127.0.0.1:${metricsPort}`;
}, 120_000);

afterAll(async () => {
  for (const p of [api, worker]) {
    p?.child.kill("SIGTERM");
    await p?.exited;
  }
  await receiver?.close();
  await app?.close();
});

type Line = Record<string, unknown> & { level: number; msg: string };
const lines = (p: ServiceProcess): Line[] =>
  p
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

async function register(t: Tenant, path: string): Promise<string> {
  const res = await fetch(`${apiBase}/public/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url(path), events: ["order.created"] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** `name{labels} value` of a Prometheus text exposition, or 0 when the series is absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

it("request lines name the partner's client_id and store, a token request's client_id, or the admin key, and never a credential", async () => {
  const t = await createTenant(app);
  const viewer = await createAdminKey(app.services.db, { name: "viewer", role: "VIEWER" });
  expect((await fetch(`${apiBase}/public/v1/store`, { headers: { authorization: `Bearer ${t.token}` } })).status).toBe(200);
  const wrongSecret = await fetch(`${apiBase}/partner/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: t.clientId, client_secret: `${t.clientSecret}x` }),
  });
  expect(wrongSecret.status).toBe(401);
  for (const key of [ADMIN_KEY, viewer.key]) {
    const res = await fetch(`${apiBase}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ stores { data { id } } }" }),
    });
    expect(res.status).toBe(200);
  }
  await api.waitFor(new RegExp(`"adminKeyId":"${viewer.adminKey.id}"`));
  const requests = lines(api).filter((l) => l.msg === "request");
  expect(requests.find((l) => l.path === "/public/v1/store")).toMatchObject({ clientId: t.clientId, storeCode: t.storeCode });
  // A token request names the client_id it was for, also when its secret was wrong.
  expect(requests.find((l) => l.path === "/partner/auth/token" && l.status === 401)).toMatchObject({ clientId: t.clientId });
  const admins = requests.filter((l) => l.path === "/graphql");
  expect(admins).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ adminKeyId: "ADMIN_API_KEY", adminRole: "ADMIN" }),
      expect.objectContaining({ adminKeyId: viewer.adminKey.id, adminRole: "VIEWER" }),
    ]),
  );
  for (const secret of [t.token, t.clientSecret, `${t.clientSecret}x`, ADMIN_KEY, viewer.key]) expect(api.output()).not.toContain(secret);
}, 60_000);

it("failed attempts and dead letters are warn lines naming the delivery, endpoint, store and Application; attempts are counted by outcome", async () => {
  const t = await createTenant(app);
  const application = await app.services.db.application.findUniqueOrThrow({ where: { clientId: t.clientId } });
  const failing = await register(t, "/fail");
  const slow = await register(t, "/slow");
  const fine = await register(t, "/ok");
  await app.services.db.$transaction((tx) => emitEvent(tx, t.storeId, "order.created", orderCreatedData()));

  for (const endpoint of [failing, slow]) {
    await waitFor(
      `the delivery to ${endpoint} to be dead-lettered`,
      () => lines(worker).some((l) => l.msg.includes("dead-lettered") && l.endpointId === endpoint) || null,
      60_000,
    );
  }
  const warned = lines(worker).filter((l) => l.level === 40 && l.msg === "webhook attempt failed");
  const failed = warned.filter((l) => l.endpointId === failing);
  expect(failed).toHaveLength(10);
  expect(failed[0]).toMatchObject({ storeId: t.storeId, applicationId: application.id, httpStatus: 500, error: "HTTP 500", result: "failed" });
  expect(typeof failed[0].deliveryId).toBe("string");
  expect(warned.find((l) => l.endpointId === slow)).toMatchObject({ result: "timeout", storeId: t.storeId, applicationId: application.id });
  expect(warned.some((l) => l.endpointId === fine)).toBe(false);
  const dead = lines(worker).find((l) => l.level === 40 && l.msg.includes("dead-lettered") && l.endpointId === failing);
  expect(dead).toMatchObject({ deliveryId: failed[0].deliveryId, storeId: t.storeId, applicationId: application.id, status: "DEAD_LETTER" });

  const metrics = await (await fetch(`${metricsBase}/metrics`)).text();
  expect(sample(metrics, 'webhook_attempts_total{outcome="failed"}')).toBe(10);
  expect(sample(metrics, 'webhook_attempts_total{outcome="timeout"}')).toBe(10);
  expect(sample(metrics, 'webhook_attempts_total{outcome="succeeded"}')).toBe(1);
  expect(sample(metrics, 'webhook_attempt_duration_seconds_count{outcome="timeout"}')).toBe(10);
  // A timed-out attempt lasted its whole 300 ms budget.
  expect(sample(metrics, 'webhook_attempt_duration_seconds_bucket{le="0.25",outcome="timeout"}')).toBe(0);

  // The API counts the attempts it runs itself (endpoint tests); nothing listens on port 9.
  const unreachable = await register(t, "/ok-too");
  await app.services.db.webhookEndpoint.update({ where: { id: unreachable }, data: { url: "http://127.0.0.1:9/hook" } });
  const tested = await fetch(`${apiBase}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ query: `mutation { testWebhookEndpoint(id: "${unreachable}") { status } }` }),
  });
  expect(((await tested.json()) as { data: { testWebhookEndpoint: { status: string } } }).data.testWebhookEndpoint.status).toBe("FAILED");
  const apiMetrics = await (await fetch(`${apiBase}/metrics`)).text();
  expect(sample(apiMetrics, 'webhook_attempts_total{outcome="unreachable"}')).toBe(1);
}, 120_000);
