import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { randomUUID } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import { createCatalog, fakeAddress, type FixtureProduct } from "../helpers/fixtures.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";

/**
 * Write receipts: each REST write answers `Event-Ids` and `Event-Sequence` for the events it committed, which must
 * be exactly what the feed and the webhooks show for that write. Real service, real worker, real receiver.
 */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let t: Tenant;
let products: FixtureProduct[];

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", CATALOG_EVENT_WINDOW_MS: "100" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
  const endpoint = await call(app, "POST", "/public/v1/webhooks", { token: t.token, body: { url: receiver.url("/receipts"), events: ["*"] } });
  expect(endpoint.status).toBe(201);
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

interface Receipt {
  ids: string[];
  sequence: number;
}

function receiptOf(res: ApiResponse): Receipt {
  const ids = res.headers.get("event-ids");
  const sequence = res.headers.get("event-sequence");
  expect(ids, `Event-Ids on ${res.status}`).toBeTruthy();
  expect(sequence).toMatch(/^\d+$/);
  return { ids: (ids ?? "").split(","), sequence: Number(sequence) };
}

interface FeedEvent {
  eventId: string;
  eventType: string;
  sequence: number;
  data: Record<string, unknown>;
}

/**
 * The receipt against the feed and the webhooks: the feed after the first receipted event's predecessor starts with
 * exactly the receipted events, in that order, the last at Event-Sequence; each one reaches the receiver.
 */
async function matchesFeedAndWebhooks(receipt: Receipt): Promise<FeedEvent[]> {
  const last = await call<{ data: FeedEvent[] }>(app, "GET", `/public/v1/events?after=${receipt.sequence - 1}`, { token: t.token });
  expect(last.status).toBe(200);
  expect(last.body.data.map((e) => e.eventId)).toEqual([receipt.ids[receipt.ids.length - 1]]);
  const first = await call<FeedEvent>(app, "GET", `/public/v1/events/${receipt.ids[0]}`, { token: t.token });
  const page = await call<{ data: FeedEvent[] }>(app, "GET", `/public/v1/events?after=${first.body.sequence - 1}&limit=100`, { token: t.token });
  const events = page.body.data.slice(0, receipt.ids.length);
  expect(events.map((e) => e.eventId)).toEqual(receipt.ids);
  expect(events[events.length - 1].sequence).toBe(receipt.sequence);
  const delivered = await waitFor(`deliveries of ${receipt.ids.join(",")}`, () => {
    const seen = new Set(receiver.requests("/receipts").map((r) => r.headers["x-service-event-id"]));
    return receipt.ids.every((id) => seen.has(id)) ? seen : null;
  });
  expect(receipt.ids.every((id) => delivered.has(id))).toBe(true);
  return events;
}

const expectNoReceipt = (res: ApiResponse) => {
  expect(res.headers.get("event-ids")).toBeNull();
  expect(res.headers.get("event-sequence")).toBeNull();
};

describe("write receipts: Event-Ids and Event-Sequence", () => {
  it("order create and status changes answer their events, as the feed and the webhooks show them", async () => {
    const created = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
      token: t.token,
      body: { type: "DELIVERY", items: [{ productId: products[0].id, quantity: 1 }], deliveryAddress: fakeAddress() },
    });
    expect(created.status).toBe(201);
    const createdEvents = await matchesFeedAndWebhooks(receiptOf(created));
    expect(createdEvents.map((e) => e.eventType)).toEqual(["order.created"]);

    const moves: [string, string[]][] = [
      ["CONFIRMED", ["order.confirmed"]],
      ["READY", ["order.ready"]],
      ["DISPATCHED", ["order.dispatched"]],
      // One move, two events: Event-Ids lists both in sequence order.
      ["DELIVERED", ["order.delivered", "order.completed"]],
    ];
    for (const [status, types] of moves) {
      const moved = await call(app, "PATCH", `/public/v1/orders/${created.body.id}/status`, { token: t.token, body: { status } });
      expect(moved.status).toBe(200);
      const receipt = receiptOf(moved);
      expect(receipt.ids).toHaveLength(types.length);
      const events = await matchesFeedAndWebhooks(receipt);
      expect(events.map((e) => e.eventType)).toEqual(types);
      expect(events.every((e) => e.data.orderId === created.body.id)).toBe(true);
    }

    // A refused move commits nothing and answers no receipt.
    const refused = await call(app, "PATCH", `/public/v1/orders/${created.body.id}/status`, { token: t.token, body: { status: "CONFIRMED" } });
    expect(refused.status).toBe(422);
    expectNoReceipt(refused);
  });

  it("customer create and update answer customer.created and customer.updated", async () => {
    const created = await call<{ id: string }>(app, "POST", "/public/v1/customers", {
      token: t.token,
      body: { name: "Receipt Customer", phone: "+55 11 95555-0101" },
    });
    expect(created.status).toBe(201);
    const [c] = await matchesFeedAndWebhooks(receiptOf(created));
    expect(c).toMatchObject({ eventType: "customer.created", data: { customerId: created.body.id } });

    const updated = await call(app, "PATCH", `/public/v1/customers/${created.body.id}`, { token: t.token, body: { name: "Renamed" } });
    expect(updated.status).toBe(200);
    const [u] = await matchesFeedAndWebhooks(receiptOf(updated));
    expect(u).toMatchObject({ eventType: "customer.updated", data: { customerId: created.body.id } });
  });

  it("a sandbox order answers every event its scenario emitted", async () => {
    const generated = await call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: t.token, body: { scenario: "cancelled" } });
    expect(generated.status).toBe(201);
    const events = await matchesFeedAndWebhooks(receiptOf(generated));
    expect(events.map((e) => e.eventType)).toEqual(["order.created", "order.cancelled"]);
    expect(events.every((e) => e.data.orderId === generated.body.id)).toBe(true);
  });

  it("a catalog write emits its catalog.updated only after the aggregation window, so it answers no receipt", async () => {
    const before = await app.services.db.event.count({ where: { storeId: t.storeId } });
    const paused = await call(app, "PATCH", `/public/v1/catalog/products/${products[1].id}/status`, { token: t.token, body: { isActive: false } });
    expect(paused.status).toBe(200);
    expectNoReceipt(paused);
    // The event does come, from the aggregation job: it was not this write's to report.
    await waitFor("catalog.updated", async () => (await app.services.db.event.count({ where: { storeId: t.storeId, type: "catalog.updated" } })) > 0);
    expect(await app.services.db.event.count({ where: { storeId: t.storeId } })).toBe(before + 1);
  });

  it("a write that emits nothing answers neither header", async () => {
    const endpoint = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
      token: t.token,
      body: { url: receiver.url("/quiet"), events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    expectNoReceipt(endpoint);
    const patched = await call(app, "PATCH", `/public/v1/webhooks/${endpoint.body.id}`, { token: t.token, body: { status: "INACTIVE" } });
    expect(patched.status).toBe(200);
    expectNoReceipt(patched);
  });

  it("a replay with the same Idempotency-Key answers the recorded receipt; a new write its own", async () => {
    const key = randomUUID();
    const body = { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] };
    const first = await call<{ id: string }>(app, "POST", "/public/v1/orders", { token: t.token, body, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    const receipt = receiptOf(first);
    await matchesFeedAndWebhooks(receipt);
    // Another write in between: the replay must still answer the first one's events, not the latest.
    const other = await call(app, "POST", "/public/v1/customers", { token: t.token, body: { name: "In between" } });
    expect(receiptOf(other).sequence).toBeGreaterThan(receipt.sequence);

    const again = await call<{ id: string }>(app, "POST", "/public/v1/orders", { token: t.token, body, headers: { "idempotency-key": key } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect(receiptOf(again)).toEqual(receipt);

    // A keyed status change (the whole request in one transaction with its record) answers its receipt too.
    const moveKey = randomUUID();
    const move = () =>
      call(app, "PATCH", `/public/v1/orders/${first.body.id}/status`, {
        token: t.token,
        body: { status: "CONFIRMED" },
        headers: { "idempotency-key": moveKey },
      });
    const moved = await move();
    const moveReceipt = receiptOf(moved);
    const [confirmed] = await matchesFeedAndWebhooks(moveReceipt);
    expect(confirmed.eventType).toBe("order.confirmed");
    expect(receiptOf(await move())).toEqual(moveReceipt);
  });
});
