import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { customerCreatedData } from "../helpers/fixtures.js";
import { startReceiver, waitFor, type Receiver } from "./receiver.js";

/**
 * Ordered delivery (`ordering: "store"`): the store's events reach the endpoint one at a time in sequence order, each
 * after the one before succeeded or was dead-lettered; an unordered endpoint beside it is not held. Real service, real
 * worker, real receiver.
 */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "300ms" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  t = await createTenant(app);
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

const register = async (path: string, ordering?: "store") => {
  const res = await call<{ id: string; ordering: string | null }>(app, "POST", "/public/v1/webhooks", {
    token: t.token,
    body: { url: receiver.url(path), events: ["customer.created"], ...(ordering ? { ordering } : {}) },
  });
  expect(res.status).toBe(201);
  expect(res.body.ordering).toBe(ordering ?? null);
  return res.body;
};

/** The sequences a path answered 2xx to, in the order they arrived. */
const accepted = (path: string, failed: Set<string>) =>
  receiver
    .requests(path)
    .filter((r) => !failed.has(`${r.at}:${r.headers["webhook-id"]}`))
    .map((r) => (JSON.parse(r.body) as { sequence: number }).sequence);

const heldGauge = async () => Number(/^webhook_deliveries_held (\d+)/m.exec(await app.services.metrics.metrics())?.[1] ?? "0");

describe("ordering: store", () => {
  it("a receiver failing the first of 10 events three times gets all 10 in sequence order, none early; an unordered neighbour is not held", async () => {
    await register("/ordered", "store");
    await register("/free");
    const sequences: number[] = [];
    const failed = new Set<string>();
    const sequenceOf = (body: string) => (JSON.parse(body) as { sequence: number }).sequence;
    for (const path of ["/ordered", "/free"]) {
      receiver.on(path, (req) => {
        const sequence = sequenceOf(req.body);
        const tries = receiver.requests(path).filter((r) => sequenceOf(r.body) === sequence).length;
        if (sequence === sequences[0] && tries <= 3) {
          failed.add(`${req.at}:${req.headers["webhook-id"]}`);
          return { status: 503 };
        }
        return {};
      });
    }
    // One transaction: the sequences are known before any delivery can start.
    await app.services.db.$transaction(async (tx) => {
      for (let i = 0; i < 10; i++) sequences.push(Number((await emitEvent(tx, t.storeId, "customer.created", customerCreatedData())).sequence));
    });
    // While the first is being retried, the later ones wait and /metrics says so.
    await waitFor("deliveries held behind the first", async () => (await heldGauge()) > 0);
    // The unordered endpoint got the later events while the first still failed.
    await waitFor("the unordered endpoint's later events", () => accepted("/free", failed).length >= 9);
    expect(accepted("/ordered", failed)).toEqual([]);

    await waitFor("all 10 on the ordered endpoint", () => accepted("/ordered", failed).length >= 10, 15_000);
    expect(accepted("/ordered", failed)).toEqual(sequences);
    // None early: nothing but the first reached the ordered endpoint before the first succeeded.
    const ordered = receiver.requests("/ordered").map((r) => (JSON.parse(r.body) as { sequence: number }).sequence);
    expect(ordered.slice(0, 4)).toEqual([sequences[0], sequences[0], sequences[0], sequences[0]]);
    expect(ordered).toHaveLength(13);
    await waitFor("nothing held", async () => (await heldGauge()) === 0);
  });

  it("a backfill of an ordered endpoint arrives in sequence order, one at a time", async () => {
    const endpoint = await register("/backfilled", "store");
    const kept = await app.services.db.event.findMany({ where: { storeId: t.storeId, type: "customer.created" }, orderBy: { sequence: "asc" } });
    const res = await call<{ count: number }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/backfill`, { token: t.token, body: { afterSequence: 0 } });
    expect(res.status).toBe(202);
    expect(res.body.count).toBe(kept.length);
    await waitFor("the backfill", () => receiver.requests("/backfilled").length >= kept.length);
    const arrived = receiver.requests("/backfilled").map((r) => (JSON.parse(r.body) as { sequence: number }).sequence);
    expect(arrived).toEqual(kept.map((e) => Number(e.sequence)));
  });
});
