import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import type { EventData, EventType } from "../../src/platform/events/declaration.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { Webhook } from "standardwebhooks";
import { signatureParts, startReceiver, verifySignature, waitFor, type Receiver } from "./receiver.js";

/** Delivery end to end: real worker, real receiver on 127.0.0.1, a 50 ms retry schedule and a 500 ms timeout. */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "500", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  tenant = await createTenant(app);
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

const ORDER: EventData<"order.created"> = {
  orderId: "5a4c1e2e-9d1b-4f7e-8a51-3b2f0c9d7e61",
  orderNumber: 1042,
  total: 59.9,
  type: "DELIVERY",
  status: "PENDING",
  version: 1,
};

async function register(path: string, events: string[] = ["order.created"], t: Tenant = tenant): Promise<{ id: string; secret: string }> {
  const res = await call<{ id: string; secret: string }>(app, "POST", "/public/v1/webhooks", { token: t.token, body: { url: receiver.url(path), events } });
  expect(res.status).toBe(201);
  return res.body;
}

function emit<T extends EventType>(type: T, data: EventData<T>, storeId = tenant.storeId) {
  return app.services.db.$transaction((tx) => emitEvent(tx, storeId, type, data));
}

function deliveryOf(eventId: string, endpointId: string) {
  return app.services.db.webhookDelivery.findUnique({ where: { eventId_endpointId: { eventId, endpointId } } });
}

function settles(eventId: string, endpointId: string, status: string, timeoutMs = 10_000) {
  return waitFor(
    `delivery of ${eventId} to become ${status}`,
    async () => {
      const d = await deliveryOf(eventId, endpointId);
      return d?.status === status ? d : null;
    },
    timeoutMs,
  );
}

/** The fan-out job of an event is gone once it ran (its deliveries, if any, exist from then on). */
function fannedOut(eventId: string) {
  return waitFor(`fan-out of ${eventId}`, async () => {
    const { rows } = await app.services.pool.query("select 1 from graphile_worker.jobs where key = $1", [`fan_out:${eventId}`]);
    return rows.length === 0;
  });
}

function attemptsOf(deliveryId: string) {
  return app.services.db.webhookAttempt.findMany({ where: { deliveryId }, orderBy: { number: "asc" } });
}

describe("a successful delivery", () => {
  it("POSTs the signed envelope with the documented headers, and an independent verifier accepts it", async () => {
    const endpoint = await register("/signed");
    const event = await emit("order.created", ORDER);
    const delivery = await settles(event.id, endpoint.id, "DELIVERED");
    const [req] = receiver.requests("/signed");

    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["user-agent"]).toBe("PartnerWebhooks/1.0");
    expect(req.headers["x-service-event-id"]).toBe(event.id);
    expect(req.headers["x-service-event-type"]).toBe("order.created");
    expect(req.headers["x-service-delivery-id"]).toBe(delivery.id);

    const envelope = JSON.parse(req.body) as Record<string, unknown>;
    const stored = await app.services.db.event.findUniqueOrThrow({ where: { id: event.id } });
    expect(envelope).toEqual({
      eventId: event.id,
      eventType: "order.created",
      timestamp: expect.any(String),
      tenantId: tenant.storeCode,
      sequence: Number(stored.sequence),
      data: ORDER,
    });
    expect(envelope.sequence).toBeGreaterThan(0);
    expect(new Date(envelope.timestamp as string).toISOString()).toBe(envelope.timestamp);

    const header = req.headers["x-service-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, req.body, endpoint.secret)).toBe(true);
    expect(verifySignature(header, req.body, `${endpoint.secret}x`)).toBe(false);
    expect(verifySignature(header, `${req.body} `, endpoint.secret)).toBe(false);

    // Tolerance: the timestamp is the sending time, and a receiver 301 s later must reject it.
    const { t } = signatureParts(header);
    expect(Math.abs(t - req.at / 1000)).toBeLessThan(5);
    expect(verifySignature(header, req.body, endpoint.secret, t + 300)).toBe(true);
    expect(verifySignature(header, req.body, endpoint.secret, t + 301)).toBe(false);

    // Standard Webhooks: the official library verifies the delivery with the secret as the partner received it.
    expect(req.headers["webhook-id"]).toBe(event.id);
    expect(req.headers["webhook-timestamp"]).toBe(String(t));
    expect(new Webhook(endpoint.secret).verify(req.body, req.headers as Record<string, string>)).toEqual(envelope);
    expect(() => new Webhook(endpoint.secret).verify(`${req.body} `, req.headers as Record<string, string>)).toThrow();

    expect(delivery).toMatchObject({ attempts: 1, httpStatus: 200, lastError: null, nextAttemptAt: null });
    expect(delivery.requestDurationMs).toBeGreaterThanOrEqual(0);
    const [attempt] = await attemptsOf(delivery.id);
    expect(attempt).toMatchObject({ number: 1, trigger: "SCHEDULED", succeeded: true, httpStatus: 200, requestBody: req.body, responseExcerpt: "{}" });
    expect(JSON.stringify(attempt.requestHeaders)).not.toContain(endpoint.secret);
    const ep = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(ep).toMatchObject({ status: "ACTIVE", failureCount: 0 });
    expect(ep.lastSuccessAt).not.toBeNull();
  });
});

describe("retries", () => {
  it("retries on the schedule until a 2xx: DELIVERED after 3 attempts, same eventId and body every time", async () => {
    receiver.on("/flaky", (_req, n) => (n < 3 ? { status: 500, body: "try later" } : { status: 204 }));
    const endpoint = await register("/flaky");
    const event = await emit("order.created", ORDER);
    const delivery = await settles(event.id, endpoint.id, "DELIVERED");

    const requests = receiver.requests("/flaky");
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.headers["x-service-event-id"]).toBe(event.id);
      expect(r.body).toBe(requests[0].body);
      expect(verifySignature(r.headers["x-service-signature"] as string, r.body, endpoint.secret)).toBe(true);
    }
    expect(delivery).toMatchObject({ attempts: 3, httpStatus: 204, lastError: null, nextAttemptAt: null });
    const attempts = await attemptsOf(delivery.id);
    expect(attempts.map((a) => [a.number, a.trigger, a.succeeded, a.httpStatus])).toEqual([
      [1, "SCHEDULED", false, 500],
      [2, "SCHEDULED", false, 500],
      [3, "SCHEDULED", true, 204],
    ]);
    expect(attempts[0].responseExcerpt).toBe("try later");
    // The retry waited for the schedule (50 ms) before going again.
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(45);
    const ep = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(ep).toMatchObject({ status: "ACTIVE", failureCount: 0 });
  });

  it("always failing: DEAD_LETTER after exactly 10 attempts and the endpoint FAILED; replay can recover it", async () => {
    let healthy = false;
    receiver.on("/down", () => (healthy ? { status: 200 } : { status: 503, body: "maintenance" }));
    const endpoint = await register("/down");
    const event = await emit("order.created", ORDER);
    // Nine retries due 50 ms apart each wait for the worker's next poll (1 s): about 10 s on an idle machine.
    const dead = await settles(event.id, endpoint.id, "DEAD_LETTER", 30_000);
    expect(dead).toMatchObject({ attempts: 10, httpStatus: 503, nextAttemptAt: null, lastError: "HTTP 503: maintenance" });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests("/down")).toHaveLength(10);
    let ep = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(ep).toMatchObject({ status: "FAILED", failureCount: 10 });

    // A replay that fails again leaves it a dead letter.
    const first = await call<Record<string, unknown>>(app, "POST", `/public/v1/webhooks/deliveries/${dead.id}/replay`, { token: tenant.token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: dead.id, eventId: event.id, status: "PENDING", endpointId: endpoint.id, tenantId: tenant.storeCode });
    await waitFor("11th attempt", async () => (await deliveryOf(event.id, endpoint.id))?.attempts === 11);
    expect((await deliveryOf(event.id, endpoint.id))?.status).toBe("DEAD_LETTER");

    // FAILED endpoints still receive their deliveries; one success brings the endpoint back.
    healthy = true;
    const second = await call<Record<string, unknown>>(app, "POST", `/public/v1/webhooks/deliveries/${dead.id}/replay`, { token: tenant.token });
    expect(second.body).toMatchObject({ status: "PENDING" });
    const recovered = await settles(event.id, endpoint.id, "DELIVERED");
    expect(recovered).toMatchObject({ attempts: 12, httpStatus: 200, lastError: null });
    const requests = receiver.requests("/down");
    expect(requests).toHaveLength(12);
    expect(new Set(requests.map((r) => JSON.parse(r.body).eventId))).toEqual(new Set([event.id]));
    const attempts = await attemptsOf(dead.id);
    expect(attempts.map((a) => a.trigger)).toEqual([...Array<string>(10).fill("SCHEDULED"), "REPLAY", "REPLAY"]);
    ep = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(ep).toMatchObject({ status: "ACTIVE", failureCount: 0 });
  }, 60_000);

  it("a timeout and a redirect are failures, and the redirect is not followed", async () => {
    receiver.on("/slow", (_req, n) => (n === 1 ? { status: 200, delayMs: 1500 } : { status: 200 }));
    receiver.on("/moved", (_req, n) => (n === 1 ? { status: 302, headers: { location: receiver.url("/elsewhere") } } : { status: 200 }));
    const slow = await register("/slow");
    const moved = await register("/moved");
    const event = await emit("order.created", ORDER);
    const [a, b] = await Promise.all([settles(event.id, slow.id, "DELIVERED"), settles(event.id, moved.id, "DELIVERED")]);
    expect(a.attempts).toBe(2);
    expect(b.attempts).toBe(2);
    expect((await attemptsOf(a.id))[0]).toMatchObject({ succeeded: false, httpStatus: null, error: "timeout after 500ms" });
    expect((await attemptsOf(b.id))[0]).toMatchObject({ succeeded: false, httpStatus: 302, error: "redirect (302) not followed" });
    expect(receiver.requests("/elsewhere")).toHaveLength(0);
  });
});

describe("who receives nothing", () => {
  it("an INACTIVE endpoint gets no delivery, and a pending delivery stops when its endpoint is disabled", async () => {
    const off = await register("/inactive");
    const set = await graphql(app, `mutation($id: ID!) { setWebhookEndpointStatus(id: $id, status: INACTIVE) { id status } }`, { id: off.id });
    expect(set.data).toEqual({ setWebhookEndpointStatus: { id: off.id, status: "INACTIVE" } });
    const event = await emit("order.created", ORDER);
    await fannedOut(event.id);
    expect(await deliveryOf(event.id, off.id)).toBeNull();

    // Disabled between its first (failed) attempt and its retry: the retry does not go out.
    const later = await register("/disabled-later");
    receiver.on("/disabled-later", async () => {
      await app.services.db.webhookEndpoint.update({ where: { id: later.id }, data: { status: "INACTIVE" } });
      return { status: 500 };
    });
    const second = await emit("order.created", ORDER);
    const stopped = await waitFor("the retry chain to stop", async () => {
      const d = await deliveryOf(second.id, later.id);
      return d?.lastError === "endpoint inactive" ? d : null;
    });
    expect(stopped).toMatchObject({ status: "FAILED", attempts: 1, nextAttemptAt: null });
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests("/disabled-later")).toHaveLength(1);
    expect(receiver.requests("/inactive")).toHaveLength(0);

    const replay = await call(app, "POST", `/public/v1/webhooks/deliveries/${stopped.id}/replay`, { token: tenant.token });
    expect(replay.status).toBe(422);
    const test = await call(app, "POST", `/public/v1/webhooks/${off.id}/test`, { token: tenant.token });
    expect(test.status).toBe(422);
  });

  it("unsubscribed event types, Applications without the event's scope or grant, and other stores get nothing", async () => {
    const orders = await register("/orders-only", ["order.created"]);
    const scoped = await createTenant(app, { scopes: ["customers:read", "webhooks:manage"] });
    const descoped = await register("/descoped", ["customer.created"], scoped);
    const revokedTenant = await createTenant(app, { scopes: ["customers:read", "webhooks:manage"] });
    const revoked = await register("/revoked", ["customer.created"], revokedTenant);
    const other = await createTenant(app);
    const otherStore = await register("/other-store", ["customer.created"], other);

    // The first Application loses customers:read; the second loses its grant.
    const scopedApp = await app.services.db.application.findUniqueOrThrow({ where: { clientId: scoped.clientId } });
    await app.services.db.application.update({ where: { id: scopedApp.id }, data: { scopes: ["webhooks:manage"] } });
    await app.services.db.grant.updateMany({ where: { application: { clientId: revokedTenant.clientId } }, data: { status: "REVOKED" } });

    // All four endpoints' apps are granted on their own stores; emit on the descoped/revoked stores and ours.
    const events = await Promise.all([
      emit("customer.created", { customerId: randomUUID(), name: "Ana", phone: "+5511999990000" }),
      emit("customer.created", { customerId: randomUUID(), name: "Bia", phone: "+5511999990001" }, scoped.storeId),
      emit("customer.created", { customerId: randomUUID(), name: "Caio", phone: "+5511999990002" }, revokedTenant.storeId),
    ]);
    await Promise.all(events.map((e) => fannedOut(e.id)));
    const deliveries = await app.services.db.webhookDelivery.findMany({ where: { eventId: { in: events.map((e) => e.id) } } });
    expect(deliveries).toEqual([]);
    for (const path of ["/orders-only", "/descoped", "/revoked", "/other-store"]) expect(receiver.requests(path)).toHaveLength(0);
    expect([orders.id, descoped.id, revoked.id, otherStore.id]).toHaveLength(4);
  });

  it("a rolled-back change sends nothing", async () => {
    const endpoint = await register("/rollback");
    let rolledBack = "";
    await expect(
      app.services.db.$transaction(async (tx) => {
        rolledBack = (await emitEvent(tx, tenant.storeId, "order.created", ORDER)).id;
        throw new Error("the order write failed");
      }),
    ).rejects.toThrow("the order write failed");
    const committed = await emit("order.created", ORDER);
    await settles(committed.id, endpoint.id, "DELIVERED");
    expect(receiver.requests("/rollback").map((r) => r.headers["x-service-event-id"])).toEqual([committed.id]);
    expect(await app.services.db.webhookDelivery.count({ where: { eventId: rolledBack } })).toBe(0);
  });
});

describe("test events and secret rotation", () => {
  it("POST /webhooks/{id}/test answers with the delivery once the attempt has ended; with a key, a retry replays it", async () => {
    const endpoint = await register("/test-ok");
    const keyed = { token: tenant.token, headers: { "idempotency-key": `test-${endpoint.id}` } };
    const ok = await call<Record<string, unknown>>(app, "POST", `/public/v1/webhooks/${endpoint.id}/test`, keyed);
    expect(ok.status).toBe(200);
    const again = await call<Record<string, unknown>>(app, "POST", `/public/v1/webhooks/${endpoint.id}/test`, keyed);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(ok.body);
    expect(receiver.requests("/test-ok")).toHaveLength(1);
    expect(ok.body).toMatchObject({
      eventType: "webhook.test",
      status: "DELIVERED",
      attempts: 1,
      httpStatus: 200,
      endpointId: endpoint.id,
      nextAttemptAt: null,
    });
    const [req] = receiver.requests("/test-ok");
    expect(JSON.parse(req.body)).toMatchObject({ eventType: "webhook.test", eventId: ok.body.eventId, data: { message: expect.any(String) } });
    expect(verifySignature(req.headers["x-service-signature"] as string, req.body, endpoint.secret)).toBe(true);

    receiver.on("/test-fail", () => ({ status: 500, body: "nope" }));
    const failing = await register("/test-fail");
    const bad = await call<Record<string, unknown>>(app, "POST", `/public/v1/webhooks/${failing.id}/test`, { token: tenant.token });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ status: "FAILED", attempts: 1, httpStatus: 500, lastError: "HTTP 500: nope", nextAttemptAt: null });
  });

  it("rotate-secret returns a new secret once; for 24 h deliveries carry both signatures", async () => {
    const endpoint = await register("/rotating");
    const rotated = await call<{ id: string; secret: string; secretPrefix: string; previousSecretExpiresAt: string; message: string }>(
      app,
      "POST",
      `/public/v1/webhooks/${endpoint.id}/rotate-secret`,
      { token: tenant.token },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.secretPrefix).toBe(rotated.body.secret.slice(0, 12));
    const overlap = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(overlap).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
    const got = await call<Record<string, unknown>>(app, "GET", `/public/v1/webhooks/${endpoint.id}`, { token: tenant.token });
    expect(got.body.secretPrefix).toBe(rotated.body.secretPrefix);
    expect(got.body).not.toHaveProperty("secret");

    const event = await emit("order.created", ORDER);
    await settles(event.id, endpoint.id, "DELIVERED");
    const [req] = receiver.requests("/rotating");
    const header = req.headers["x-service-signature"] as string;
    expect(signatureParts(header).v1).toHaveLength(2);
    expect(verifySignature(header, req.body, rotated.body.secret)).toBe(true);
    expect(verifySignature(header, req.body, endpoint.secret)).toBe(true);
    const standardHeaders = req.headers as Record<string, string>;
    expect(standardHeaders["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(rotated.body.secret).verify(req.body, standardHeaders)).toBeTruthy();
    expect(new Webhook(endpoint.secret).verify(req.body, standardHeaders)).toBeTruthy();

    // Once the overlap is over only the new secret signs.
    await app.services.db.webhookEndpoint.update({ where: { id: endpoint.id }, data: { previousSecretExpiresAt: new Date(Date.now() - 1000) } });
    const next = await emit("order.created", ORDER);
    await settles(next.id, endpoint.id, "DELIVERED");
    const last = receiver.requests("/rotating")[1];
    expect(signatureParts(last.headers["x-service-signature"] as string).v1).toHaveLength(1);
    expect(verifySignature(last.headers["x-service-signature"] as string, last.body, rotated.body.secret)).toBe(true);
    expect(verifySignature(last.headers["x-service-signature"] as string, last.body, endpoint.secret)).toBe(false);
  });
});

describe("administrators in GraphQL", () => {
  it("list deliveries across tenants with their attempts, replay several at once", async () => {
    receiver.on("/admin-a", (_req, n) => (n === 1 ? { status: 500, body: "first try fails" } : { status: 200, body: "ok" }));
    const a = await register("/admin-a");
    const otherTenant = await createTenant(app);
    const b = await register("/admin-b", ["order.created"], otherTenant);
    const [ea, eb] = await Promise.all([emit("order.created", ORDER), emit("order.created", ORDER, otherTenant.storeId)]);
    const da = await settles(ea.id, a.id, "DELIVERED");
    const db = await settles(eb.id, b.id, "DELIVERED");

    const list = await graphql<{ webhookDeliveries: { data: { id: string; tenantId: string; attemptLog: Record<string, unknown>[] }[] } }>(
      app,
      `query($storeId: ID) { webhookDeliveries(storeId: $storeId, limit: 100) { data { id tenantId status
         attemptLog { number trigger succeeded httpStatus error requestHeaders requestBody responseExcerpt } } hasMore nextCursor } }`,
      { storeId: tenant.storeId },
    );
    expect(list.errors).toBeUndefined();
    const ids = list.data?.webhookDeliveries.data.map((d) => d.id) ?? [];
    expect(ids).toContain(da.id);
    expect(ids).not.toContain(db.id);
    const row = list.data?.webhookDeliveries.data.find((d) => d.id === da.id);
    expect(row?.tenantId).toBe(tenant.storeCode);
    expect(row?.attemptLog).toMatchObject([
      { number: 1, trigger: "SCHEDULED", succeeded: false, httpStatus: 500, error: "HTTP 500", responseExcerpt: "first try fails" },
      { number: 2, succeeded: true, responseExcerpt: "ok" },
    ]);
    expect(row?.attemptLog[0].requestHeaders).toMatchObject({ "X-Service-Event-Id": ea.id, "User-Agent": "PartnerWebhooks/1.0" });
    expect(JSON.parse(row?.attemptLog[0].requestBody as string)).toMatchObject({ eventId: ea.id });

    const all = await graphql<{ webhookDeliveries: { data: { id: string }[] } }>(app, `{ webhookDeliveries(limit: 100) { data { id } } }`);
    expect(all.data?.webhookDeliveries.data.map((d) => d.id)).toEqual(expect.arrayContaining([da.id, db.id]));

    const replay = await graphql<{ replayWebhookDeliveries: { id: string; status: string }[] }>(
      app,
      `mutation($ids: [ID!]!) { replayWebhookDeliveries(ids: $ids) { id status } }`,
      { ids: [da.id, db.id] },
    );
    expect(replay.errors).toBeUndefined();
    expect(replay.data?.replayWebhookDeliveries.map((d) => d.status)).toEqual(["PENDING", "PENDING"]);
    await waitFor("both replays", async () => {
      const [ra, rb] = await Promise.all([deliveryOf(ea.id, a.id), deliveryOf(eb.id, b.id)]);
      return ra?.status === "DELIVERED" && ra.attempts === 3 && rb?.status === "DELIVERED" && rb.attempts === 2;
    });
    expect(receiver.requests("/admin-b")).toHaveLength(2);

    // A partner token cannot use the administrator filters or fields.
    const partner = await graphql(
      app,
      `query($storeId: ID) { webhookDeliveries(storeId: $storeId) { data { id } } }`,
      { storeId: otherTenant.storeId },
      tenant.token,
    );
    expect(partner.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    const toggle = await graphql(app, `mutation($id: ID!) { setWebhookEndpointStatus(id: $id, status: INACTIVE) { id } }`, { id: a.id }, tenant.token);
    expect(toggle.errors?.[0].extensions?.code).toBe("FORBIDDEN");
  });
});
