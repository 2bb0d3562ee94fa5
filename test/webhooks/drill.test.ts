import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { orderCreatedData } from "../helpers/fixtures.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { startReceiver, waitFor, type Received, type Receiver } from "./receiver.js";

/**
 * Fault drills on SANDBOX endpoints, against the real service, a real worker and a real local receiver: duplicates
 * (each signed), releases out of order, delays, every drilled attempt marked; PATCH's validation and PRODUCTION's 422
 * with nothing changed. Windows and delays are kept to a few seconds.
 */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let sandbox: Tenant;
let production: Tenant;

beforeAll(async () => {
  // A 2 s retry leaves time to look at an endpoint between a failed first attempt and its retry; a 5 s timeout keeps a
  // loaded machine's slow answer from turning into a retry that would blur the counts.
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: "2s", WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  sandbox = await createTenant(app);
  production = await createTenant(app, { environment: "PRODUCTION" });
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

interface Drill {
  duplicateRate: number;
  reorderWindowSeconds: number;
  maxDelaySeconds: number;
}

interface Endpoint {
  id: string;
  url: string;
  secret: string;
  rateLimit: number;
  drill: Drill | null;
}

interface Attempt {
  attempt: number;
  trigger: string;
  httpStatus: number | null;
  drill: string | null;
  startedAt: string;
}

interface Envelope {
  eventId: string;
  sequence: number;
  timestamp: string;
}

async function register(path: string, t: Tenant = sandbox): Promise<Endpoint> {
  const res = await call<Endpoint>(app, "POST", "/public/v1/webhooks", { token: t.token, body: { url: receiver.url(path), events: ["order.created"] } });
  expect(res.status).toBe(201);
  return res.body;
}

function patch(id: string, body: unknown, t: Tenant = sandbox) {
  return call<Endpoint & { errors?: { field: string; code: string }[] }>(app, "PATCH", `/public/v1/webhooks/${id}`, { token: t.token, body });
}

async function drillOn(id: string, drill: Partial<Drill>): Promise<void> {
  const res = await patch(id, { drill });
  expect(res.status).toBe(200);
}

/** `n` order.created events on the sandbox store, each committed on its own (so each has its own, higher sequence). */
async function emit(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const event = await app.services.db.$transaction((tx) => emitEvent(tx, sandbox.storeId, "order.created", orderCreatedData()));
    ids.push(event.id);
  }
  return ids;
}

const envelope = (r: Received): Envelope => JSON.parse(r.body) as Envelope;

function arrived(path: string, n: number, timeoutMs = 15_000): Promise<Received[]> {
  return waitFor(`${n} requests at ${path}`, () => (receiver.requests(path).length >= n ? receiver.requests(path) : null), timeoutMs);
}

async function attemptsOf(eventId: string, endpointId: string): Promise<Attempt[]> {
  const delivery = await app.services.db.webhookDelivery.findUniqueOrThrow({ where: { eventId_endpointId: { eventId, endpointId } } });
  const res = await call<{ data: Attempt[] }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, { token: sandbox.token });
  expect(res.status).toBe(200);
  return res.body.data;
}

function endpointRow(id: string) {
  return app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
}

describe("PATCH drill", () => {
  it("shows the drill on the endpoint (fields left out are 0), and drill: null ends it", async () => {
    const endpoint = await register("/show");
    expect(endpoint).not.toHaveProperty("drill");
    const read = await call<Endpoint>(app, "GET", `/public/v1/webhooks/${endpoint.id}`, { token: sandbox.token });
    expect(read.body.drill).toBeNull();

    const on = await patch(endpoint.id, { drill: { duplicateRate: 0.25, reorderWindowSeconds: 4 } });
    expect(on.status).toBe(200);
    expect(on.body.drill).toEqual({ duplicateRate: 0.25, reorderWindowSeconds: 4, maxDelaySeconds: 0 });
    const listed = await call<Endpoint[]>(app, "GET", "/public/v1/webhooks", { token: sandbox.token });
    expect(listed.body.find((e) => e.id === endpoint.id)?.drill).toEqual({ duplicateRate: 0.25, reorderWindowSeconds: 4, maxDelaySeconds: 0 });

    // Another change leaves the drill as it is; null ends it.
    expect((await patch(endpoint.id, { rateLimit: 20 })).body.drill).toEqual({ duplicateRate: 0.25, reorderWindowSeconds: 4, maxDelaySeconds: 0 });
    const off = await patch(endpoint.id, { drill: null });
    expect(off.status).toBe(200);
    expect(off.body.drill).toBeNull();
    expect((await endpointRow(endpoint.id)).drill).toBeNull();
  });

  it("refuses bad values with 400 and changes nothing", async () => {
    const endpoint = await register("/invalid");
    await drillOn(endpoint.id, { maxDelaySeconds: 7 });
    const before = await endpointRow(endpoint.id);
    const bad: [unknown, string][] = [
      [{ duplicateRate: -0.1 }, "drill.duplicateRate"],
      [{ duplicateRate: 1.1 }, "drill.duplicateRate"],
      [{ reorderWindowSeconds: 301 }, "drill.reorderWindowSeconds"],
      [{ maxDelaySeconds: -1 }, "drill.maxDelaySeconds"],
      [{ maxDelaySeconds: 1.5 }, "drill.maxDelaySeconds"],
      [{ maxDelaySeconds: "5" }, "drill.maxDelaySeconds"],
      [{ duplicateRate: "half" }, "drill.duplicateRate"],
      [{ duplicates: 1 }, "drill.duplicates"],
      [{}, "drill"],
      [{ duplicateRate: 0, reorderWindowSeconds: 0 }, "drill"],
      ["on", "drill"],
    ];
    for (const [drill, field] of bad) {
      const res = await patch(endpoint.id, { drill, url: receiver.url("/elsewhere") });
      expect(res.status, JSON.stringify(drill)).toBe(400);
      expect(
        res.body.errors?.map((e) => e.field),
        JSON.stringify(drill),
      ).toContain(field);
    }
    const after = await endpointRow(endpoint.id);
    expect(after.drill).toEqual({ duplicateRate: 0, reorderWindowSeconds: 0, maxDelaySeconds: 7 });
    expect(after.url).toBe(before.url);
    expect(after.updatedAt).toEqual(before.updatedAt);
  });

  it("is 422 on a PRODUCTION endpoint, with nothing changed; null is accepted there (no drill to end)", async () => {
    const endpoint = await call<Endpoint>(app, "POST", "/public/v1/webhooks", {
      token: production.token,
      // https, as PRODUCTION requires; nothing is delivered to it here.
      body: { url: receiver.url("/production").replace("http:", "https:"), events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    const before = await endpointRow(endpoint.body.id);
    const res = await patch(endpoint.body.id, { drill: { duplicateRate: 1 }, rateLimit: 5 }, production);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "drill", code: "SANDBOX_ONLY" })]);
    const after = await endpointRow(endpoint.body.id);
    expect(after).toEqual(before);
    expect((await patch(endpoint.body.id, { drill: null }, production)).status).toBe(200);
  });
});

describe("a running drill", () => {
  it("duplicateRate 1 sends every event exactly twice, same eventId and webhook-id, each verified by Stripe's and Standard Webhooks' libraries; the copy is marked duplicate", async () => {
    const stripe = new Stripe("sk_unused");
    const endpoint = await register("/duplicate");
    await drillOn(endpoint.id, { duplicateRate: 1 });
    const events = await emit(3);
    await arrived("/duplicate", 6);
    // Nothing more comes.
    await new Promise((r) => setTimeout(r, 1000));
    const received = receiver.requests("/duplicate");
    expect(received).toHaveLength(6);
    for (const eventId of events) {
      const copies = received.filter((r) => envelope(r).eventId === eventId);
      expect(copies).toHaveLength(2);
      expect(copies.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId]);
      expect(copies[0].body).toBe(copies[1].body);
      for (const r of copies) {
        expect(stripe.webhooks.constructEvent(r.body, String(r.headers["x-service-signature"]), endpoint.secret)).toEqual(JSON.parse(r.body));
        const headers = {
          "webhook-id": String(r.headers["webhook-id"]),
          "webhook-timestamp": String(r.headers["webhook-timestamp"]),
          "webhook-signature": String(r.headers["webhook-signature"]),
        };
        expect(new Webhook(endpoint.secret).verify(r.body, headers)).toEqual(JSON.parse(r.body));
      }
      const attempts = await attemptsOf(eventId, endpoint.id);
      expect(attempts.map((a) => [a.attempt, a.trigger, a.httpStatus, a.drill])).toEqual([
        [1, "SCHEDULED", 200, null],
        [2, "SCHEDULED", 200, "duplicate"],
      ]);
    }
    const delivery = await app.services.db.webhookDelivery.findUniqueOrThrow({
      where: { eventId_endpointId: { eventId: events[0], endpointId: endpoint.id } },
    });
    expect(delivery.status).toBe("DELIVERED");
  });

  it("a reorder window delivers every event, some out of sequence order, each first attempt marked reordered", async () => {
    const endpoint = await register("/reorder");
    await drillOn(endpoint.id, { reorderWindowSeconds: 3 });
    const events = await emit(20);
    const received = await arrived("/reorder", 20, 20_000);
    const sequences = received.map((r) => envelope(r).sequence);
    expect(new Set(received.map((r) => envelope(r).eventId))).toEqual(new Set(events));
    const inversions = sequences.filter((s, i) => i > 0 && s < sequences[i - 1]).length;
    expect(inversions).toBeGreaterThan(0);
    // The first attempt of each is the held one (on a loaded machine one may time out; its retry is not drilled).
    for (const eventId of events) {
      const [first, ...retries] = await attemptsOf(eventId, endpoint.id);
      expect(first.drill).toBe("reordered");
      for (const retry of retries) expect(retry.drill).toBeNull();
    }
  });

  it("a delay holds each delivery up to maxDelaySeconds, marked delayed", async () => {
    const endpoint = await register("/delay");
    await drillOn(endpoint.id, { maxDelaySeconds: 2 });
    const events = await emit(5);
    const received = await arrived("/delay", 5);
    for (const r of received) {
      const lateBy = r.at - Date.parse(envelope(r).timestamp);
      // The hold, plus the worker's poll (250 ms) and a loaded machine's slack.
      expect(lateBy).toBeLessThan(2000 + 1500);
    }
    for (const eventId of events) {
      const [first, ...retries] = await attemptsOf(eventId, endpoint.id);
      expect(first.drill).toBe("delayed");
      for (const retry of retries) expect(retry.drill).toBeNull();
    }
  });

  it("a held attempt that fails does not count against the endpoint; its retry delivers", async () => {
    const endpoint = await register("/held-fails");
    receiver.on("/held-fails", (_r, n) => ({ status: n === 1 ? 500 : 200 }));
    await drillOn(endpoint.id, { maxDelaySeconds: 1 });
    const [eventId] = await emit(1);
    await arrived("/held-fails", 1);
    const failed = await waitFor("the failed attempt recorded", async () => {
      const attempts = await attemptsOf(eventId, endpoint.id);
      return attempts.length === 1 ? attempts : null;
    });
    expect(failed.map((a) => [a.httpStatus, a.drill])).toEqual([[500, "delayed"]]);
    const row = await endpointRow(endpoint.id);
    expect([row.status, row.failureCount, row.failingSince]).toEqual(["ACTIVE", 0, null]);
    await arrived("/held-fails", 2);
    await waitFor("the retry recorded", async () => ((await attemptsOf(eventId, endpoint.id)).length === 2 ? true : null));
    expect((await attemptsOf(eventId, endpoint.id)).map((a) => [a.httpStatus, a.drill])).toEqual([
      [500, "delayed"],
      [200, null],
    ]);
  });

  it("a duplicate that fails changes neither its delivery nor the endpoint, and is not retried", async () => {
    const endpoint = await register("/duplicate-fails");
    receiver.on("/duplicate-fails", (_r, n) => ({ status: n === 2 ? 503 : 200 }));
    await drillOn(endpoint.id, { duplicateRate: 1 });
    const [eventId] = await emit(1);
    await arrived("/duplicate-fails", 2);
    const attempts = await waitFor("both attempts recorded", async () => {
      const all = await attemptsOf(eventId, endpoint.id);
      return all.length === 2 ? all : null;
    });
    expect(attempts.map((a) => [a.attempt, a.httpStatus, a.drill])).toEqual([
      [1, 200, null],
      [2, 503, "duplicate"],
    ]);
    const delivery = await app.services.db.webhookDelivery.findUniqueOrThrow({ where: { eventId_endpointId: { eventId, endpointId: endpoint.id } } });
    expect([delivery.status, delivery.nextAttemptAt, delivery.httpStatus]).toEqual(["DELIVERED", null, 200]);
    const row = await endpointRow(endpoint.id);
    expect([row.status, row.failureCount, row.failingSince]).toEqual(["ACTIVE", 0, null]);
    // Past the 2 s retry step: nothing more is sent.
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.requests("/duplicate-fails")).toHaveLength(2);
  });

  it("held deliveries survive a worker restart: PENDING meanwhile, they go once the next worker runs", async () => {
    const endpoint = await register("/held-restart");
    await drillOn(endpoint.id, { maxDelaySeconds: 2 });
    const events = await emit(5);
    const deliveries = () => app.services.db.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
    await waitFor("the deliveries created", async () => ((await deliveries()).length === 5 ? true : null));
    await worker.stop();
    // Five holds up to 2 s each: some are still held when the worker stops (all five under 100 ms: 1 in 3 million).
    const held = (await deliveries()).filter((d) => d.status === "PENDING" && d.attempts === 0);
    expect(held.length).toBeGreaterThan(0);
    worker = await startWorker(app.services, app.databaseUrl);
    const received = await arrived("/held-restart", 5);
    expect(new Set(received.map((r) => envelope(r).eventId))).toEqual(new Set(events));
    for (const eventId of events) {
      await waitFor("the held attempt recorded", async () => ((await attemptsOf(eventId, endpoint.id)).length === 1 ? true : null));
      expect((await attemptsOf(eventId, endpoint.id)).map((a) => [a.httpStatus, a.drill])).toEqual([[200, "delayed"]]);
    }
  });

  it("drill: null ends it: the next events go once, unmarked", async () => {
    const endpoint = await register("/ended");
    await drillOn(endpoint.id, { duplicateRate: 1, reorderWindowSeconds: 2 });
    expect((await patch(endpoint.id, { drill: null })).status).toBe(200);
    const events = await emit(2);
    await arrived("/ended", 2);
    await new Promise((r) => setTimeout(r, 800));
    expect(receiver.requests("/ended")).toHaveLength(2);
    for (const eventId of events) expect((await attemptsOf(eventId, endpoint.id)).map((a) => a.drill)).toEqual([null]);
  });
});
