import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { removeExpiredEvents } from "../../workers/tasks/cleanup-events.js";

let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp({ EVENT_RETENTION_DAYS: "30" });
  t = await createTenant(app);
});

afterAll(async () => {
  await app?.close();
});

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);

it("removes events past EVENT_RETENTION_DAYS and their deliveries' bodies, keeping the delivery records, newer events and any with an attempt still scheduled or queued", async () => {
  const { db } = app.services;
  const event = (createdAt: Date) =>
    db.event.create({ data: { storeId: t.storeId, type: "store.updated", data: { storeId: t.storeId, changed: ["name"] }, createdAt } });
  const expired = await event(daysAgo(31));
  const recent = await event(daysAgo(29));
  const scheduled = await event(daysAgo(40));
  const replaying = await event(daysAgo(40));
  const application = await db.application.findUniqueOrThrow({ where: { clientId: t.clientId } });
  const endpoint = await db.webhookEndpoint.create({
    data: {
      storeId: t.storeId,
      applicationId: application.id,
      url: "https://example.com/hooks",
      events: ["store.updated"],
      secretCiphertext: "x",
      secretPrefix: "whsec_x",
    },
  });
  const delivery = (eventId: string, nextAttemptAt: Date | null, status: "PENDING" | "FAILED" | "DEAD_LETTER") =>
    db.webhookDelivery.create({
      data: { eventId, endpointId: endpoint.id, applicationId: application.id, storeId: t.storeId, eventType: "store.updated", nextAttemptAt, status },
    });
  const kept = await delivery(expired.id, null, "DEAD_LETTER");
  await db.webhookAttempt.create({
    data: {
      deliveryId: kept.id,
      number: 1,
      trigger: "SCHEDULED",
      succeeded: false,
      httpStatus: 500,
      durationMs: 12,
      error: "HTTP 500",
      requestHeaders: { "content-type": "application/json" },
      requestBody: '{"eventId":"…"}',
      responseExcerpt: "oops",
      startedAt: daysAgo(31),
    },
  });
  await delivery(scheduled.id, new Date(Date.now() + 60_000), "FAILED");
  // A replay or recover queued (PENDING) before the sweep still finds its event.
  await delivery(replaying.id, null, "PENDING");

  expect(await removeExpiredEvents(app.services)).toBe(1);

  const left = await db.event.findMany({ where: { storeId: t.storeId }, select: { id: true } });
  expect(left.map((e) => e.id).sort()).toEqual([recent.id, scheduled.id, replaying.id].sort());
  expect(await db.webhookDelivery.findUnique({ where: { id: kept.id } })).toMatchObject({ eventId: expired.id, eventType: "store.updated" });
  const [attempt] = await db.webhookAttempt.findMany({ where: { deliveryId: kept.id } });
  expect(attempt).toMatchObject({
    number: 1,
    succeeded: false,
    httpStatus: 500,
    error: "HTTP 500",
    requestBody: "",
    requestHeaders: {},
    responseExcerpt: null,
  });
});
