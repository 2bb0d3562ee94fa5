import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { startReceiver, verifySignature, waitFor, type Receiver } from "./receiver.js";

/**
 * POST /public/v1/webhooks/{id}/backfill: a new endpoint gets the store's past events it subscribes to, exactly those
 * after the sequence given, paged by WEBHOOK_RECOVER_MAX. Real service, real worker, real receiver.
 */

const MAX = 3;
let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let t: Tenant;
/** The customer.created events written before the endpoint existed, in sequence order. */
let customers: { eventId: string; sequence: number }[];

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RECOVER_MAX: String(MAX), WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "50ms" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  t = await createTenant(app);
  customers = [];
  for (let i = 0; i < 6; i++) {
    const res = await call(app, "POST", "/public/v1/customers", { token: t.token, body: { name: `Backfill ${i}` } });
    expect(res.status).toBe(201);
    customers.push({ eventId: res.headers.get("event-ids") ?? "", sequence: Number(res.headers.get("event-sequence")) });
    // Events of a type the endpoint does not subscribe to, between them: the backfill must pass them over.
    const order = await call(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cancelled" } });
    expect(order.status).toBe(201);
  }
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

async function register(path: string, events = ["customer.created"]): Promise<{ id: string; secret: string }> {
  const res = await call<{ id: string; secret: string }>(app, "POST", "/public/v1/webhooks", { token: t.token, body: { url: receiver.url(path), events } });
  expect(res.status).toBe(201);
  return res.body;
}

type Backfill = { count: number; hasMore: boolean; nextAfterSequence: number; code?: string; errors?: { field: string; code: string }[] };
const backfill = (id: string, body: unknown) => call<Backfill>(app, "POST", `/public/v1/webhooks/${id}/backfill`, { token: t.token, body });
const receivedIds = (path: string) => receiver.requests(path).map((r) => r.headers["x-service-event-id"]);

describe("POST /public/v1/webhooks/{id}/backfill", () => {
  it("delivers exactly the subscribed events after the sequence, in pages of WEBHOOK_RECOVER_MAX, signed, as BACKFILL attempts", async () => {
    const endpoint = await register("/new");
    const expected = customers.slice(1).map((c) => c.eventId);

    const first = await backfill(endpoint.id, { afterSequence: customers[0].sequence });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ count: MAX, hasMore: true, nextAfterSequence: customers[MAX].sequence });
    await waitFor(
      "the first page",
      () =>
        receiver.requests("/new").length >= MAX &&
        app.services.db.webhookDelivery.count({ where: { endpointId: endpoint.id, status: "PENDING" } }).then((n) => n === 0),
    );

    const second = await backfill(endpoint.id, { afterSequence: first.body.nextAfterSequence });
    expect(second.body).toEqual({ count: expected.length - MAX, hasMore: false, nextAfterSequence: customers[customers.length - 1].sequence });
    await waitFor("every event", () => receiver.requests("/new").length >= expected.length);
    // Give a wrong extra delivery the time to show up.
    await new Promise((r) => setTimeout(r, 300));
    // Each exactly once; like any deliveries they may arrive in any order (a receiver orders by sequence).
    expect(receivedIds("/new").sort()).toEqual([...expected].sort());
    for (const r of receiver.requests("/new")) expect(verifySignature(r.headers["x-service-signature"] as string, r.body, endpoint.secret)).toBe(true);

    const delivery = await app.services.db.webhookDelivery.findUniqueOrThrow({
      where: { eventId_endpointId: { eventId: expected[0], endpointId: endpoint.id } },
    });
    expect(delivery.status).toBe("DELIVERED");
    const attempts = await call<{ data: { trigger: string }[] }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, { token: t.token });
    expect(attempts.body.data.map((a) => a.trigger)).toEqual(["BACKFILL"]);

    // Nothing left after the last event: a call queues nothing.
    expect((await backfill(endpoint.id, { afterSequence: second.body.nextAfterSequence })).body).toEqual({
      count: 0,
      hasMore: false,
      nextAfterSequence: second.body.nextAfterSequence,
    });
  });

  it("sends again what the endpoint was already delivered, with the same eventId", async () => {
    const endpoint = await register("/again");
    const last = customers[customers.length - 1];
    const once = await backfill(endpoint.id, { afterSequence: last.sequence - 1 });
    expect(once.body.count).toBe(1);
    await waitFor("the first send", () => receiver.requests("/again").length === 1);
    await waitFor("DELIVERED", async () => (await app.services.db.webhookDelivery.findFirst({ where: { endpointId: endpoint.id } }))?.status === "DELIVERED");
    const twice = await backfill(endpoint.id, { afterSequence: last.sequence - 1 });
    expect(twice.body.count).toBe(1);
    await waitFor("the second send", () => receiver.requests("/again").length === 2);
    expect(receivedIds("/again")).toEqual([last.eventId, last.eventId]);
  });

  it("validates afterSequence and the endpoint, changing nothing on a refusal", async () => {
    const endpoint = await register("/refused");
    const latest = Number((await app.services.db.event.aggregate({ where: { storeId: t.storeId }, _max: { sequence: true } }))._max.sequence);
    for (const body of [{}, { afterSequence: -1 }, { afterSequence: 1.5 }, { afterSequence: "3" }, { afterSequence: null }]) {
      const res = await backfill(endpoint.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors?.[0].field).toBe("afterSequence");
    }
    // The store's latest sequence is accepted (nothing follows it); one past it is refused.
    expect((await backfill(endpoint.id, { afterSequence: latest })).body).toMatchObject({ count: 0, hasMore: false });
    const past = await backfill(endpoint.id, { afterSequence: latest + 1 });
    expect(past.status).toBe(400);
    expect(past.body.errors?.[0]).toMatchObject({ field: "afterSequence", code: "OUT_OF_RANGE" });
    expect((await backfill("00000000-0000-4000-8000-000000000000", { afterSequence: 0 })).status).toBe(404);
    await call(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, { token: t.token, body: { status: "INACTIVE" } });
    expect((await backfill(endpoint.id, { afterSequence: 0 })).status).toBe(422);
    expect(await app.services.db.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
    expect(receiver.requests("/refused")).toHaveLength(0);
  });
});
