import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, graphql, type Tenant } from "../helpers/tenants.js";
import { createApplication, createGrant } from "../../src/modules/admin/operations.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { customerCreatedData, orderCreatedData } from "../helpers/fixtures.js";
import { planFirstAttempts, fanOutEvent } from "../../src/modules/webhooks/fan-out.js";
import { runAttempt } from "../../src/modules/webhooks/attempt.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, type Receiver } from "./receiver.js";

/**
 * Endpoint management, validation, tenant isolation and the deliveries list over REST and GraphQL. No worker
 * runs here: fan-out and attempts are driven directly, so queued jobs stay put and states are deterministic.
 */

let app: TestApp;
let receiver: Receiver;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "1000" });
  receiver = await startReceiver();
  [tenant, other] = await Promise.all([createTenant(app), createTenant(app)]);
});

afterAll(async () => {
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

type Body = Record<string, unknown>;

function create(t: Tenant, body: unknown) {
  return call<Body>(app, "POST", "/public/v1/webhooks", { token: t.token, body });
}

async function register(t: Tenant, path: string, events: string[] = ["order.created"]): Promise<{ id: string; secret: string }> {
  const res = await create(t, { url: receiver.url(path), events });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

/** Emits an event and fans it out inline: PENDING deliveries, not attempted (no worker runs). */
async function emitAndFanOut(storeId: string, type: "order.created" | "customer.created" = "order.created"): Promise<string> {
  return (await emitAndFanOutWithAttempts(storeId, type)).eventId;
}

/** The same, with the first attempts the fan-out hands back (what a worker would run). */
async function emitAndFanOutWithAttempts(storeId: string, type: "order.created" | "customer.created" = "order.created") {
  const event = await app.services.db.$transaction((tx) =>
    type === "order.created" ? emitEvent(tx, storeId, type, orderCreatedData()) : emitEvent(tx, storeId, type, customerCreatedData()),
  );
  return { eventId: event.id, attempts: await fanOutEvent(app.services.pool, event.id) };
}

const ENDPOINT_KEYS = [
  "deliveriesLast24h",
  "destination",
  "disabledReason",
  "drill",
  "events",
  "failureCount",
  "id",
  "lastSuccessAt",
  "ordering",
  "rateLimit",
  "secretPrefix",
  "status",
  "type",
  "url",
];
const DELIVERY_KEYS = [
  "attempts",
  "endpointId",
  "eventId",
  "eventType",
  "httpStatus",
  "id",
  "lastAttemptAt",
  "lastError",
  "nextAttemptAt",
  "requestDurationMs",
  "status",
  "tenantId",
];

describe("endpoint management", () => {
  it("creates an endpoint and shows its secret once, encrypted at rest; lists, gets and deletes it", async () => {
    const url = receiver.url("/crud");
    const created = await create(tenant, { url, events: ["order.created", "order.cancelled", "order.created"] });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([
      "destination",
      "events",
      "id",
      "message",
      "ordering",
      "rateLimit",
      "secret",
      "secretPrefix",
      "type",
      "url",
    ]);
    const { id, secret } = created.body as { id: string; secret: string };
    expect(created.body).toMatchObject({ url, events: ["order.created", "order.cancelled"], secretPrefix: secret.slice(0, 12) });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64url")).toHaveLength(32);

    const row = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(row.secretCiphertext).not.toContain(secret.slice(6));
    expect(app.services.box.decrypt(row.secretCiphertext)).toBe(secret);

    const list = await call<Body[]>(app, "GET", "/public/v1/webhooks", { token: tenant.token });
    expect(list.status).toBe(200);
    const listed = list.body.find((e) => e.id === id);
    expect(Object.keys(listed ?? {}).sort()).toEqual(ENDPOINT_KEYS);
    expect(listed).toEqual({
      id,
      url,
      type: "http",
      ordering: null,
      destination: null,
      events: ["order.created", "order.cancelled"],
      status: "ACTIVE",
      secretPrefix: secret.slice(0, 12),
      rateLimit: 50,
      lastSuccessAt: null,
      failureCount: 0,
      disabledReason: null,
      deliveriesLast24h: { delivered: 0, failed: 0, pending: 0, successRate: null },
      drill: null,
    });

    const got = await call<Body>(app, "GET", `/public/v1/webhooks/${id}`, { token: tenant.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(listed);
    expect(JSON.stringify(got.body)).not.toContain(secret);

    const deleted = await call(app, "DELETE", `/public/v1/webhooks/${id}`, { token: tenant.token });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await call(app, "GET", `/public/v1/webhooks/${id}`, { token: tenant.token })).status).toBe(404);
    expect((await call(app, "DELETE", `/public/v1/webhooks/${id}`, { token: tenant.token })).status).toBe(404);
  });

  it("refuses bad input with 400, a missing event scope with 403, and unsafe URLs with 422", async () => {
    const url = receiver.url("/validation");
    const bad = async (body: unknown) => (await create(tenant, body)).body as { status: number; code: string; errors?: { field: string; code: string }[] };

    expect(await bad({ url: "not a url", events: ["order.created"] })).toMatchObject({ status: 400, code: "INVALID_REQUEST", errors: [{ field: "url" }] });
    expect(await bad({ url, events: [] })).toMatchObject({ status: 400, errors: [{ field: "events", code: "TOO_FEW" }] });
    expect(await bad({ url })).toMatchObject({ status: 400, errors: [{ field: "events", code: "REQUIRED" }] });
    expect(await bad({ url, events: ["order.exploded"] })).toMatchObject({ status: 400, errors: [{ field: "events[0]", code: "INVALID_VALUE" }] });
    expect(await bad({ url, events: ["webhook.test"] })).toMatchObject({ status: 400 });
    expect(await bad({ url, events: ["order.created"], secret: "mine" })).toMatchObject({ status: 400, errors: [{ code: "UNKNOWN_FIELD" }] });

    const metadata = await bad({ url: "http://169.254.169.254/latest/meta-data", events: ["order.created"] });
    expect(metadata).toMatchObject({ status: 422, code: "UNPROCESSABLE_ENTITY", errors: [{ field: "url", code: "PRIVATE_NETWORK" }] });

    const production = await createTenant(app, { environment: "PRODUCTION" });
    const insecure = await create(production, { url: "http://hooks.example.com/in", events: ["order.created"] });
    expect(insecure.body).toMatchObject({ status: 422, errors: [{ field: "url", code: "INSECURE_SCHEME" }] });

    const ordersOnly = await createTenant(app, { scopes: ["orders:read", "webhooks:manage"] });
    const unscoped = await create(ordersOnly, { url, events: ["order.created", "customer.created"] });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body).toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    expect(String(unscoped.body.detail)).toContain("customers:read");
    expect((await create(ordersOnly, { url, events: ["order.created"] })).status).toBe(201);

    const noManage = await createTenant(app, { scopes: ["orders:read"] });
    for (const [method, path] of [
      ["POST", "/public/v1/webhooks"],
      ["GET", "/public/v1/webhooks"],
      ["GET", "/public/v1/webhooks/deliveries"],
    ]) {
      const res = await call<Body>(app, method, path, { token: noManage.token, body: method === "POST" ? { url, events: ["order.created"] } : undefined });
      expect(res.body).toMatchObject({ status: 403, code: "INSUFFICIENT_SCOPE" });
    }
    expect((await call(app, "GET", "/public/v1/webhooks/not-a-uuid", { token: tenant.token })).status).toBe(400);
  });

  it("refuses loopback and private targets unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set", async () => {
    const strict = await startTestApp();
    try {
      const t = await createTenant(strict);
      for (const url of ["http://127.0.0.1:8080/hook", "http://10.1.2.3/hook", "http://192.168.0.10/hook", "http://[::1]/hook", "http://169.254.1.1/hook"]) {
        const res = await call<Body>(strict, "POST", "/public/v1/webhooks", { token: t.token, body: { url, events: ["order.created"] } });
        expect(res.body, url).toMatchObject({ status: 422, errors: [{ field: "url", code: "PRIVATE_NETWORK" }] });
      }
      // The check is repeated at delivery time: a host that now resolves inside the network gets nothing.
      const application = await strict.services.db.application.findUniqueOrThrow({ where: { clientId: t.clientId } });
      const rebound = await strict.services.db.webhookEndpoint.create({
        data: {
          applicationId: application.id,
          storeId: t.storeId,
          url: receiver.url("/rebound"),
          events: ["order.created"],
          secretCiphertext: strict.services.box.encrypt("whsec_rebound"),
          secretPrefix: "whsec_reboun",
        },
      });
      const test = await call<Body>(strict, "POST", `/public/v1/webhooks/${rebound.id}/test`, { token: t.token });
      expect(test.status).toBe(200);
      expect(test.body).toMatchObject({ status: "FAILED", attempts: 1, httpStatus: null });
      expect(String(test.body.lastError)).toMatch(/^URL refused at delivery time \(PRIVATE_NETWORK\)/);
      expect(receiver.requests("/rebound")).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it("allows 20 endpoints per application and store, the 21st is 422", async () => {
    const t = await createTenant(app);
    const results = await Promise.all(Array.from({ length: 21 }, (_, i) => create(t, { url: receiver.url(`/limit-${i}`), events: ["order.created"] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(1);
    expect(refused[0].body).toMatchObject({ status: 422, errors: [{ code: "ENDPOINT_LIMIT_REACHED" }] });
  });
});

describe("tenant isolation", () => {
  it("another store's, or another Application's, endpoints and deliveries are 404 and never listed", async () => {
    const mine = await register(tenant, "/isolated");
    const eventId = await emitAndFanOut(tenant.storeId);
    const delivery = await app.services.db.webhookDelivery.findFirstOrThrow({ where: { eventId, endpointId: mine.id } });

    // A second Application granted on the same store is a different owner too.
    const { application, clientSecret } = await createApplication(app.services.db, {
      name: "Second app",
      environment: "SANDBOX",
      scopes: ["webhooks:manage", "orders:read"],
      apiVersion: FIRST_API_VERSION,
    });
    await createGrant(app.services.db, { clientId: application.clientId, storeId: tenant.storeId });
    const sibling = await getToken(app, application.clientId, clientSecret);

    for (const token of [other.token, sibling]) {
      for (const [method, path] of [
        ["GET", `/public/v1/webhooks/${mine.id}`],
        ["DELETE", `/public/v1/webhooks/${mine.id}`],
        ["POST", `/public/v1/webhooks/${mine.id}/test`],
        ["POST", `/public/v1/webhooks/${mine.id}/rotate-secret`],
        ["GET", `/public/v1/webhooks/deliveries/${delivery.id}`],
        ["POST", `/public/v1/webhooks/deliveries/${delivery.id}/replay`],
      ]) {
        const res = await call<Body>(app, method, path, { token });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body).toMatchObject({ code: "NOT_FOUND" });
      }
      const endpoints = await call<Body[]>(app, "GET", "/public/v1/webhooks", { token });
      expect(endpoints.body.map((e) => e.id)).not.toContain(mine.id);
      const deliveries = await call<Body[]>(app, "GET", `/public/v1/webhooks/deliveries?endpointId=${mine.id}`, { token });
      expect(deliveries.body).toEqual([]);
      const gql = await graphql<{ webhookDeliveries: { data: Body[] } }>(app, `{ webhookDeliveries(limit: 100) { data { id } } }`, {}, token);
      expect(gql.data?.webhookDeliveries.data.map((d) => d.id)).not.toContain(delivery.id);
    }
    // Nothing was changed by those attempts.
    expect(await app.services.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({ status: "PENDING", attempts: 0 });
    expect((await call(app, "GET", `/public/v1/webhooks/${mine.id}`, { token: tenant.token })).status).toBe(200);
  });
});

describe("deliveries list", () => {
  it("pages newest first with X-Next-Cursor and Link headers, filters, and mirrors GraphQL", async () => {
    const t = await createTenant(app);
    const a = await register(t, "/list-a", ["order.created", "customer.created"]);
    const b = await register(t, "/list-b", ["order.created"]);
    const events: string[] = [];
    for (let i = 0; i < 3; i++) events.push(await emitAndFanOut(t.storeId));
    events.push(await emitAndFanOut(t.storeId, "customer.created"));
    // 3 order events × 2 endpoints + 1 customer event × 1 endpoint.

    const first = await call<Body[]>(app, "GET", "/public/v1/webhooks/deliveries?limit=3", { token: t.token });
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(3);
    expect(Object.keys(first.body[0]).sort()).toEqual(DELIVERY_KEYS);
    expect(first.body[0]).toMatchObject({
      eventId: events[3],
      eventType: "customer.created",
      status: "PENDING",
      attempts: 0,
      tenantId: t.storeCode,
      endpointId: a.id,
    });
    const cursor = first.headers.get("x-next-cursor");
    expect(cursor).toBe(first.body[2].id);
    expect(first.headers.get("link")).toBe(`</public/v1/webhooks/deliveries?limit=3&cursor=${cursor}>; rel="next"`);

    const pages = [first.body];
    let link = first.headers.get("link");
    while (link) {
      const next = await call<Body[]>(app, "GET", /<([^>]+)>/.exec(link)?.[1] ?? "", { token: t.token });
      pages.push(next.body);
      link = next.headers.get("link");
      if (!link) expect(next.headers.get("x-next-cursor")).toBeNull();
    }
    const all = pages.flat();
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(new Set(all.map((d) => d.id)).size).toBe(7);
    const created = await app.services.db.webhookDelivery.findMany({
      where: { id: { in: all.map((d) => String(d.id)) } },
      select: { id: true, createdAt: true },
    });
    const at = new Map(created.map((d) => [d.id, d.createdAt.getTime()]));
    const times = all.map((d) => at.get(String(d.id)) ?? 0);
    expect(times).toEqual([...times].sort((x, y) => y - x));

    const onlyB = await call<Body[]>(app, "GET", `/public/v1/webhooks/deliveries?endpointId=${b.id}`, { token: t.token });
    expect(onlyB.body).toHaveLength(3);
    expect(onlyB.headers.get("x-next-cursor")).toBeNull();
    expect(onlyB.headers.get("link")).toBeNull();
    const customer = await call<Body[]>(app, "GET", "/public/v1/webhooks/deliveries?eventType=customer.created", { token: t.token });
    expect(customer.body.map((d) => d.eventId)).toEqual([events[3]]);
    const delivered = await call<Body[]>(app, "GET", "/public/v1/webhooks/deliveries?status=DELIVERED", { token: t.token });
    expect(delivered.body).toEqual([]);
    const pending = await call<Body[]>(app, "GET", "/public/v1/webhooks/deliveries?status=PENDING&limit=100", { token: t.token });
    expect(pending.body).toHaveLength(7);

    for (const query of ["limit=0", "limit=101", "limit=abc", "status=LOST", "eventType=order.exploded", "endpointId=nope", `cursor=${b.id}`]) {
      const res = await call<Body>(app, "GET", `/public/v1/webhooks/deliveries?${query}`, { token: t.token });
      expect(res.status, query).toBe(400);
    }

    const gql = await graphql<{ webhookDeliveries: { data: Body[]; hasMore: boolean; nextCursor: string | null }; webhookEndpoints: Body[] }>(
      app,
      `{ webhookDeliveries(limit: 3) { data { id eventId eventType tenantId status httpStatus attempts lastAttemptAt nextAttemptAt lastError requestDurationMs endpointId } hasMore nextCursor }
         webhookEndpoints { id url events status secretPrefix lastSuccessAt failureCount disabledReason rateLimit type ordering destination
           deliveriesLast24h { delivered failed pending successRate } drill { duplicateRate reorderWindowSeconds maxDelaySeconds } } }`,
      {},
      t.token,
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.webhookDeliveries).toEqual({ data: first.body, hasMore: true, nextCursor: cursor });
    const restEndpoints = await call<Body[]>(app, "GET", "/public/v1/webhooks", { token: t.token });
    expect(gql.data?.webhookEndpoints).toEqual(restEndpoints.body);
  });
});

describe("fan-out and attempt claims", () => {
  it("a re-run fan-out creates nothing more and hands back the deliveries never attempted, then nothing", async () => {
    const t = await createTenant(app);
    const endpoint = await register(t, "/fan-out-rerun");
    const { eventId, attempts } = await emitAndFanOutWithAttempts(t.storeId);
    const deliveries = await app.services.db.webhookDelivery.findMany({ where: { eventId } });
    expect(deliveries.map((d) => d.endpointId)).toEqual([endpoint.id]);
    expect(attempts).toEqual([{ deliveryId: deliveries[0].id, trigger: "SCHEDULED", step: 1, dueAt: deliveries[0].nextAttemptAt?.toISOString() }]);
    // No job per delivery: the fan-out job runs the first attempts itself.
    const { rows } = await app.services.pool.query("select 1 from graphile_worker.jobs where task_identifier = 'deliver_webhook' and key = $1", [
      `deliver:${deliveries[0].id}`,
    ]);
    expect(rows).toHaveLength(0);

    // A re-run (the worker died before recording the attempt) creates nothing new and hands the delivery back.
    expect(await fanOutEvent(app.services.pool, eventId)).toEqual(attempts);
    expect(await app.services.db.webhookDelivery.count({ where: { eventId } })).toBe(1);
    expect(await runAttempt(app.services, attempts[0])).toMatchObject({ kind: "attempted", succeeded: true });
    expect(await fanOutEvent(app.services.pool, eventId)).toEqual([]);
  });

  it("a disabled Application's endpoints get no delivery from either fan-out; once enabled again they do", async () => {
    const t = await createTenant(app);
    const endpoint = await register(t, "/disabled-app");
    await app.services.db.application.update({ where: { clientId: t.clientId }, data: { status: "DISABLED" } });
    const event = await app.services.db.$transaction((tx) => emitEvent(tx, t.storeId, "order.created", orderCreatedData()));
    expect(await planFirstAttempts(app.services.pool, [event.id])).toEqual([[]]);
    expect(await fanOutEvent(app.services.pool, event.id)).toEqual([]);
    expect(await app.services.db.webhookDelivery.count({ where: { eventId: event.id } })).toBe(0);

    await app.services.db.application.update({ where: { clientId: t.clientId }, data: { status: "ACTIVE" } });
    const { eventId } = await emitAndFanOutWithAttempts(t.storeId);
    const deliveries = await app.services.db.webhookDelivery.findMany({ where: { eventId } });
    expect(deliveries.map((d) => d.endpointId)).toEqual([endpoint.id]);
  });

  it("two workers running the same scheduled attempt send it once; a crashed attempt is retried after its lease", async () => {
    const t = await createTenant(app);
    receiver.on("/claimed", () => ({ status: 200, delayMs: 200 }));
    await register(t, "/claimed");
    const {
      attempts: [payload],
    } = await emitAndFanOutWithAttempts(t.storeId);
    expect(payload).toMatchObject({ trigger: "SCHEDULED", step: 1 });

    const outcomes = await Promise.all([runAttempt(app.services, payload), runAttempt(app.services, payload)]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(["attempted", "busy"]);
    expect(receiver.requests("/claimed")).toHaveLength(1);
    // The job ran again after it was done (a stale duplicate): nothing is sent.
    expect(await runAttempt(app.services, payload)).toEqual({ kind: "skipped", reason: "not due" });
    expect(receiver.requests("/claimed")).toHaveLength(1);

    // A worker that claimed the next delivery's attempt and died: its step is leased, then free again.
    const {
      attempts: [nextPayload],
    } = await emitAndFanOutWithAttempts(t.storeId);
    await app.services.db.webhookDelivery.update({ where: { id: nextPayload.deliveryId }, data: { lastAttemptAt: new Date() } });
    const busy = await runAttempt(app.services, nextPayload);
    expect(busy.kind).toBe("busy");
    await app.services.db.webhookDelivery.update({ where: { id: nextPayload.deliveryId }, data: { lastAttemptAt: new Date(Date.now() - 3100) } });
    expect(await runAttempt(app.services, nextPayload)).toMatchObject({ kind: "attempted", succeeded: true, status: "DELIVERED", attempt: 1 });
    expect(receiver.requests("/claimed")).toHaveLength(2);
  });
});
