import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, graphql, type Tenant } from "../helpers/tenants.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import type { EventData, EventType } from "../../src/platform/events/declaration.js";
import { createApplication, createGrant } from "../../src/modules/admin/operations.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { retryAfterMs } from "../../src/modules/webhooks/policy.js";
import { runAttempt } from "../../src/modules/webhooks/attempt.js";
import { removeExpiredEvents } from "../../workers/tasks/cleanup-events.js";
import { startWorker } from "../../workers/runner.js";
import { startReceiver, verifySignature, waitFor, type Receiver } from "./receiver.js";

/**
 * What a partner sees of its webhooks and how it steers them: payloads and attempt logs, PATCH, recover, the
 * receiver's signals (410, Retry-After), endpoint health and the operational events. Real worker, real receiver.
 */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
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
  orderNumber: 7,
  version: 1,
  total: 12.5,
  type: "PICKUP",
  status: "PENDING",
};

interface Endpoint {
  id: string;
  secret: string;
  events: string[];
}

async function register(path: string, events: string[] = ["order.created"], t: Tenant = tenant): Promise<Endpoint> {
  const res = await call<Endpoint>(app, "POST", "/public/v1/webhooks", { token: t.token, body: { url: receiver.url(path), events } });
  expect(res.status).toBe(201);
  return res.body;
}

function emit<T extends EventType>(type: T, data: EventData<T>, storeId = tenant.storeId) {
  return app.services.db.$transaction((tx) => emitEvent(tx, storeId, type, data));
}

function deliveryOf(eventId: string, endpointId: string) {
  return app.services.db.webhookDelivery.findUnique({ where: { eventId_endpointId: { eventId, endpointId } } });
}

function settles(eventId: string, endpointId: string, status: string, timeoutMs = 15_000) {
  return waitFor(
    `delivery of ${eventId} to become ${status}`,
    async () => {
      const d = await deliveryOf(eventId, endpointId);
      return d?.status === status ? d : null;
    },
    timeoutMs,
  );
}

/**
 * `n` dead letters of the endpoint (10 failed scheduled attempts each), with their events, written directly: what matters
 * is what recover and replay do with them.
 */
async function deadLetters(endpointId: string, n: number): Promise<{ deliveries: string[]; events: string[] }> {
  const { rows } = await app.services.pool.query<{ id: string; eventId: string }>(
    `with ev as (
       insert into "Event" (id, "storeId", type, data) select gen_random_uuid(), $1::uuid, 'order.created', $3::jsonb from generate_series(1, $4::int) returning id
     ), d as (
       insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, attempts, "updatedAt")
       select gen_random_uuid(), ev.id, e.id, e."applicationId", e."storeId", 'order.created', 'DEAD_LETTER', 10, now() from ev, "WebhookEndpoint" e where e.id = $2::uuid
       returning id, "eventId"
     ), a as (
       insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody", "startedAt")
       select gen_random_uuid(), d.id, n, 'SCHEDULED', false, 500, 1, 'HTTP 500', '{}'::jsonb, '', now() from d, generate_series(1, 10) n
     )
     select id, "eventId" from d`,
    [tenant.storeId, endpointId, JSON.stringify(ORDER), n],
  );
  expect(rows).toHaveLength(n);
  return { deliveries: rows.map((r) => r.id), events: rows.map((r) => r.eventId) };
}

function endpointRow(id: string) {
  return app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
}

/** The operational events a path received, parsed. */
function operational(path: string) {
  return receiver
    .requests(path)
    .map((r) => JSON.parse(r.body) as { eventType: string; data: Record<string, unknown> })
    .filter((e) => e.eventType.startsWith("webhook."));
}

/** Waits until a path has received at least `n` operational events, and returns them. */
function operationalAt(path: string, n = 1) {
  return waitFor(`${n} operational event(s) at ${path}`, () => {
    const seen = operational(path);
    return seen.length >= n ? seen : null;
  });
}

/** Another Application granted on the tenant's store, with only these scopes. */
async function otherApplication(scopes: ("webhooks:manage" | "orders:read")[]): Promise<Tenant> {
  const { application, clientSecret } = await createApplication(app.services.db, {
    name: "Other app",
    environment: "SANDBOX",
    scopes,
    apiVersion: FIRST_API_VERSION,
  });
  await createGrant(app.services.db, { clientId: application.clientId, storeId: tenant.storeId });
  const token = await getToken(app, application.clientId, clientSecret);
  return { ...tenant, clientId: application.clientId, clientSecret, token };
}

describe("a delivery's payload and attempts", () => {
  it("GET a delivery includes the envelope sent; GET its attempts lists them oldest first with the response body", async () => {
    receiver.on("/seen", (_req, n) => (n === 1 ? { status: 500, body: "x".repeat(5000) } : { status: 200, body: '{"ok":true}' }));
    const endpoint = await register("/seen");
    const event = await emit("order.created", ORDER);
    const delivery = await settles(event.id, endpoint.id, "DELIVERED");

    const got = await call<{ payload: unknown; status: string }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}`, { token: tenant.token });
    expect(got.status).toBe(200);
    expect(got.body.payload).toEqual(JSON.parse(receiver.requests("/seen")[0].body));

    const res = await call<{ data: Record<string, unknown>[] }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, {
      token: tenant.token,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    const [first, second] = res.body.data;
    expect(Object.keys(first).sort()).toEqual([
      "attempt",
      "drill",
      "durationMs",
      "error",
      "httpStatus",
      "requestHeaders",
      "responseBody",
      "startedAt",
      "trigger",
    ]);
    expect(first).toMatchObject({ attempt: 1, trigger: "SCHEDULED", httpStatus: 500, error: "HTTP 500", drill: null });
    expect(String(first.responseBody)).toHaveLength(4096);
    expect(second).toMatchObject({ attempt: 2, trigger: "SCHEDULED", httpStatus: 200, error: null, responseBody: '{"ok":true}' });
    expect((second.requestHeaders as Record<string, string>)["X-Service-Event-Id"]).toBe(event.id);
    expect(new Date(String(first.startedAt)).getTime()).toBeLessThanOrEqual(new Date(String(second.startedAt)).getTime());

    const other = await otherApplication(["webhooks:manage"]);
    expect((await call(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, { token: other.token })).status).toBe(404);
  });
});

describe("PATCH /public/v1/webhooks/{id}", () => {
  it("changes url and events, keeping the secret and the delivery log; INACTIVE stops deliveries and ACTIVE resumes them", async () => {
    const endpoint = await register("/before");
    const first = await emit("order.created", ORDER);
    await settles(first.id, endpoint.id, "DELIVERED");

    const patched = await call<Record<string, unknown>>(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, {
      token: tenant.token,
      body: { url: receiver.url("/after"), events: ["*"] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: endpoint.id, url: receiver.url("/after"), events: ["*"], status: "ACTIVE", disabledReason: null });

    // "*": every type the scopes allow, operational ones included; the same secret signs.
    const second = await emit("store.updated", { storeId: tenant.storeId, changed: ["name"] });
    await settles(second.id, endpoint.id, "DELIVERED");
    const [req] = receiver.requests("/after");
    expect(JSON.parse(req.body).eventType).toBe("store.updated");
    expect(verifySignature(req.headers["x-service-signature"] as string, req.body, endpoint.secret)).toBe(true);
    expect(await deliveryOf(first.id, endpoint.id)).not.toBeNull();

    const off = await call<Record<string, unknown>>(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, { token: tenant.token, body: { status: "INACTIVE" } });
    expect(off.body).toMatchObject({ status: "INACTIVE", disabledReason: "Set INACTIVE on request." });
    const third = await emit("order.created", ORDER);
    const watcher = await register("/patch-watcher");
    const fourth = await emit("order.created", ORDER);
    await settles(fourth.id, watcher.id, "DELIVERED");
    expect(await deliveryOf(third.id, endpoint.id)).toBeNull();

    const on = await call<Record<string, unknown>>(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, { token: tenant.token, body: { status: "ACTIVE" } });
    expect(on.body).toMatchObject({ status: "ACTIVE", disabledReason: null });
    const fifth = await emit("order.created", ORDER);
    await settles(fifth.id, endpoint.id, "DELIVERED");
  });

  it("checks its input: URL rules as on create, scopes of each type, an empty body", async () => {
    const endpoint = await register("/patch-checks");
    const path = `/public/v1/webhooks/${endpoint.id}`;
    // Private networks are allowed here, cloud metadata services never are, in any encoding; refused from the URL
    // alone (nothing listens at these addresses on this machine, and nothing is contacted).
    for (const url of [
      "http://169.254.169.254/latest",
      "http://100.100.100.200/latest/meta-data/",
      "http://0x646464c8/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://metadata.google.internal./",
    ]) {
      const patched = await call<{ errors: { field: string; code: string }[] }>(app, "PATCH", path, { token: tenant.token, body: { url } });
      expect(patched.status, url).toBe(422);
      expect(patched.body.errors[0]).toMatchObject({ field: "url", code: "PRIVATE_NETWORK" });
      const created = await call(app, "POST", "/public/v1/webhooks", { token: tenant.token, body: { url, events: ["order.created"] } });
      expect(created.status, url).toBe(422);
    }
    expect((await endpointRow(endpoint.id)).url).toBe(receiver.url("/patch-checks"));
    expect((await call(app, "PATCH", path, { token: tenant.token, body: {} })).status).toBe(400);
    expect((await call(app, "PATCH", path, { token: tenant.token, body: { status: "FAILED" } })).status).toBe(400);
    expect((await call(app, "PATCH", path, { token: tenant.token, body: { events: ["order.nope"] } })).status).toBe(400);

    const limited = await otherApplication(["webhooks:manage"]);
    const own = await register("/patch-limited", ["*"], limited);
    const denied = await call(app, "PATCH", `/public/v1/webhooks/${own.id}`, { token: limited.token, body: { events: ["order.created"] } });
    expect(denied.status).toBe(403);
    expect((await call(app, "PATCH", path, { token: limited.token, body: { status: "INACTIVE" } })).status).toBe(404);
  });

  it("an endpoint an administrator set INACTIVE stays so until an administrator changes it: the partner's ACTIVE is 403", async () => {
    const endpoint = await register("/admin-off");
    const path = `/public/v1/webhooks/${endpoint.id}`;
    const setStatus = (status: string) =>
      graphql<{ setWebhookEndpointStatus: { status: string } }>(
        app,
        "mutation($id: ID!, $status: WebhookEndpointSwitch!) { setWebhookEndpointStatus(id: $id, status: $status) { status } }",
        {
          id: endpoint.id,
          status,
        },
      );
    expect((await setStatus("INACTIVE")).data).toEqual({ setWebhookEndpointStatus: { status: "INACTIVE" } });

    const refused = await call<{ code: string; detail: string }>(app, "PATCH", path, {
      token: tenant.token,
      body: { status: "ACTIVE", url: receiver.url("/admin-off-2") },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");
    expect(refused.body.detail).toMatch(/administrator/);
    // Nothing of the refused request was applied.
    expect(await endpointRow(endpoint.id)).toMatchObject({
      status: "INACTIVE",
      url: receiver.url("/admin-off"),
      disabledReason: "Set INACTIVE by an administrator.",
    });

    // The partner still changes its URL and events, and may say INACTIVE again: the administrator's word stays.
    const moved = await call<Record<string, unknown>>(app, "PATCH", path, { token: tenant.token, body: { url: receiver.url("/admin-off-2"), events: ["*"] } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: "INACTIVE", url: receiver.url("/admin-off-2"), events: ["*"] });
    expect((await call(app, "PATCH", path, { token: tenant.token, body: { status: "INACTIVE" } })).status).toBe(200);
    expect((await call(app, "PATCH", path, { token: tenant.token, body: { status: "ACTIVE" } })).status).toBe(403);
    const recover = await call<{ detail: string }>(app, "POST", `${path}/recover`, {
      token: tenant.token,
      body: { since: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(recover.status).toBe(422);
    expect(recover.body.detail).toMatch(/administrator/);

    // An administrator's ACTIVE ends it; from then on the partner's own INACTIVE and ACTIVE work as before.
    expect((await setStatus("ACTIVE")).data).toEqual({ setWebhookEndpointStatus: { status: "ACTIVE" } });
    expect((await call(app, "PATCH", path, { token: tenant.token, body: { status: "INACTIVE" } })).status).toBe(200);
    const back = await call<Record<string, unknown>>(app, "PATCH", path, { token: tenant.token, body: { status: "ACTIVE" } });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: "ACTIVE", disabledReason: null });
  });

  it('"*" follows the scopes the Application holds at delivery time', async () => {
    const limited = await otherApplication(["webhooks:manage"]);
    const all = await register("/star-limited", ["*"], limited);
    const event = await emit("order.created", ORDER);
    const check = await register("/star-check");
    const later = await emit("order.created", ORDER);
    await settles(later.id, check.id, "DELIVERED");
    expect(await deliveryOf(event.id, all.id)).toBeNull();
  });
});

describe("recover", () => {
  it("re-sends the endpoint's FAILED and DEAD_LETTER deliveries of the window as RECOVER attempts", async () => {
    let up = false;
    receiver.on("/recover", () => (up ? { status: 200 } : { status: 500 }));
    const endpoint = await register("/recover");
    const since = new Date();
    const events = [await emit("order.created", ORDER), await emit("order.created", ORDER)];
    for (const e of events) await settles(e.id, endpoint.id, "DEAD_LETTER");

    up = true;
    const before = receiver.requests("/recover").length;
    const res = await call<{ count: number }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: since.toISOString() },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ count: 2, hasMore: false, expired: 0 });
    for (const e of events) {
      const d = await settles(e.id, endpoint.id, "DELIVERED");
      const attempts = await app.services.db.webhookAttempt.findMany({ where: { deliveryId: d.id }, orderBy: { number: "asc" } });
      expect(attempts.at(-1)).toMatchObject({ trigger: "RECOVER", succeeded: true });
    }
    expect(receiver.requests("/recover").length - before).toBe(2);

    // An empty window counts nothing; a window must be a window.
    const later = await call<{ count: number }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: new Date(Date.now() - 60_000).toISOString(), until: since.toISOString() },
    });
    expect(later.body).toEqual({ count: 0, hasMore: false, expired: 0 });
    const backwards = await call(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: new Date().toISOString(), until: since.toISOString() },
    });
    expect(backwards.status).toBe(400);
  });

  it("re-sends at most WEBHOOK_RECOVER_MAX per call with hasMore; calling again continues after them, never the same ones, until done", async () => {
    receiver.on("/recover-many", () => ({ status: 500 }));
    const endpoint = await register("/recover-many");
    const since = new Date(Date.now() - 1000);
    const ids = await deadLetters(endpoint.id, 160);
    const recover = () =>
      call<{ count: number; hasMore: boolean; expired: number }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
        token: tenant.token,
        body: { since: since.toISOString() },
      });
    const sentOnce = async (n: number) => {
      await waitFor(`${n} recover attempts`, () => receiver.requests("/recover-many").length >= n, 30_000);
      await waitFor(
        "the attempts to be recorded",
        async () => (await app.services.db.webhookDelivery.count({ where: { endpointId: endpoint.id, status: "PENDING" } })) === 0,
      );
      return new Set(receiver.requests("/recover-many").map((r) => JSON.parse(r.body).eventId as string));
    };

    // The receiver keeps failing: each recovered delivery returns to DEAD_LETTER, and still the second call sends the rest.
    const first = await recover();
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ count: 100, hasMore: true, expired: 0 });
    // Called again while the 100 wait for the endpoint's pace (50 a second): nothing more is queued.
    const early = await call<{ code: string }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: since.toISOString() },
    });
    expect(early.status).toBe(429);
    expect(early.body.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const firstSent = await sentOnce(100);
    expect(firstSent.size).toBe(100);
    const second = await recover();
    expect(second.body).toEqual({ count: 60, hasMore: false, expired: 0 });
    const allSent = await sentOnce(160);
    expect(allSent).toEqual(new Set(ids.events));
    expect(receiver.requests("/recover-many")).toHaveLength(160);
    // A walk that ended starts again from the window's beginning.
    expect((await recover()).body).toEqual({ count: 100, hasMore: true, expired: 0 });
    await sentOnce(260);

    await call(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, { token: tenant.token, body: { status: "INACTIVE" } });
    const refused = await call<{ errors: { code: string }[] }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: since.toISOString() },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].code).toBe("ENDPOINT_INACTIVE");
  }, 90_000);
});

describe("deliveries whose event is past retention", () => {
  it("replay is 422 EVENT_EXPIRED and changes nothing; recover skips and counts them, and is 422 when nothing else is left", async () => {
    const endpoint = await register("/expired");
    const since = new Date(Date.now() - 1000);
    const { deliveries, events } = await deadLetters(endpoint.id, 3);
    // All three past retention and swept (the sweep keeps no event of a dead letter).
    await app.services.db.event.updateMany({ where: { id: { in: events } }, data: { createdAt: new Date(Date.now() - 31 * 86_400_000) } });
    expect(await removeExpiredEvents(app.services)).toBe(3);

    for (const id of deliveries) {
      const replay = await call<{ code: string; title: string; detail: string }>(app, "POST", `/public/v1/webhooks/deliveries/${id}/replay`, {
        token: tenant.token,
      });
      expect(replay.status).toBe(422);
      expect(replay.body).toMatchObject({ code: "EVENT_EXPIRED", title: "Event past retention" });
      expect(replay.body.detail).toContain(id);
    }
    const batch = await graphql(app, "mutation($ids: [ID!]!) { replayWebhookDeliveries(ids: $ids) { id } }", { ids: deliveries });
    expect(batch.errors?.[0]?.extensions?.code).toBe("EVENT_EXPIRED");
    const rows = await app.services.db.webhookDelivery.findMany({ where: { id: { in: deliveries } } });
    expect(rows.map((d) => d.status)).toEqual(["DEAD_LETTER", "DEAD_LETTER", "DEAD_LETTER"]);

    // Only expired deliveries in the window: nothing can be sent.
    const body = { since: since.toISOString() };
    const none = await call<{ code: string }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, { token: tenant.token, body });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe("EVENT_EXPIRED");

    // With a live one beside them, recover sends it and counts the others.
    const live = await deadLetters(endpoint.id, 1);
    const mixed = await call(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, { token: tenant.token, body });
    expect(mixed.status).toBe(202);
    expect(mixed.body).toEqual({ count: 1, hasMore: false, expired: 3 });
    await settles(live.events[0], endpoint.id, "DELIVERED");
    expect(receiver.requests("/expired").map((r) => JSON.parse(r.body).eventId)).toEqual(live.events);
  });

  it("a replay whose event is swept after it was requested ends with that reason, not another", async () => {
    const endpoint = await register("/swept");
    const { deliveries, events } = await deadLetters(endpoint.id, 1);
    await app.services.db.webhookDelivery.update({ where: { id: deliveries[0] }, data: { status: "PENDING" } });
    await app.services.db.event.delete({ where: { id: events[0] } });
    const outcome = await runAttempt(app.services, { deliveryId: deliveries[0], trigger: "REPLAY" });
    expect(outcome).toEqual({ kind: "skipped", reason: "event expired" });
    expect(await app.services.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveries[0] } })).toMatchObject({
      status: "DEAD_LETTER",
      lastError: "event past retention",
    });
    expect(receiver.requests("/swept")).toHaveLength(0);
  });
});

describe("receiver signals", () => {
  it("410 Gone stops the endpoint, fires webhook.endpoint.disabled to the Application's other endpoints only, and recover works once it is ACTIVE", async () => {
    let gone = true;
    receiver.on("/gone", () => (gone ? { status: 410 } : { status: 200 }));
    await register("/gone-watcher", ["webhook.endpoint.disabled"]);
    const stranger = await otherApplication(["webhooks:manage", "orders:read"]);
    const strangerEndpoint = await register("/gone-stranger", ["*"], stranger);
    const endpoint = await register("/gone", ["*"]);
    const since = new Date();
    const event = await emit("order.created", ORDER);
    const delivery = await settles(event.id, endpoint.id, "FAILED");
    expect(delivery).toMatchObject({ attempts: 1, nextAttemptAt: null, httpStatus: 410 });
    const row = await endpointRow(endpoint.id);
    expect(row).toMatchObject({ status: "INACTIVE", disabledReason: "The receiver answered 410 Gone." });

    const [disabled] = await operationalAt("/gone-watcher");
    expect(disabled).toMatchObject({
      eventType: "webhook.endpoint.disabled",
      data: { endpointId: endpoint.id, url: receiver.url("/gone"), reason: "The receiver answered 410 Gone." },
    });
    await emit("order.created", ORDER);
    await waitFor("the stranger to get an order", () => receiver.requests("/gone-stranger").length >= 2);
    expect(operational("/gone-stranger")).toEqual([]);
    expect(operational("/gone")).toEqual([]);
    expect(strangerEndpoint.events).toEqual(["*"]);

    gone = false;
    await call(app, "PATCH", `/public/v1/webhooks/${endpoint.id}`, { token: tenant.token, body: { status: "ACTIVE" } });
    const res = await call<{ count: number }>(app, "POST", `/public/v1/webhooks/${endpoint.id}/recover`, {
      token: tenant.token,
      body: { since: since.toISOString() },
    });
    expect(res.body.count).toBeGreaterThanOrEqual(1);
    await settles(event.id, endpoint.id, "DELIVERED");
  });

  it("429 and 503 with Retry-After hold the next attempt back at least that long", async () => {
    const at = new Date(Date.now() + 3000).toUTCString();
    receiver.on("/slow-down", (_req, n) => (n === 1 ? { status: 429, headers: { "Retry-After": "2" } } : { status: 200 }));
    receiver.on("/unavailable", (_req, n) => (n === 1 ? { status: 503, headers: { "Retry-After": at } } : { status: 200 }));
    const a = await register("/slow-down");
    const b = await register("/unavailable");
    const event = await emit("order.created", ORDER);
    await settles(event.id, a.id, "DELIVERED");
    await settles(event.id, b.id, "DELIVERED");
    const [a1, a2] = receiver.requests("/slow-down");
    expect(a2.at - a1.at).toBeGreaterThanOrEqual(1900);
    const [, b2] = receiver.requests("/unavailable");
    // An HTTP date has a one-second resolution.
    expect(b2.at).toBeGreaterThanOrEqual(Date.parse(at) - 1000);
  });

  it("reads Retry-After as seconds or an HTTP date, capped at an hour", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs("99999", now)).toBe(3_600_000);
    expect(retryAfterMs("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBe(0);
    expect(retryAfterMs(null, now)).toBe(0);
  });
});

describe("endpoint health", () => {
  it("an endpoint failing for WEBHOOK_DISABLE_AFTER turns INACTIVE with a reason and webhook.endpoint.disabled fires", async () => {
    receiver.on("/sick", () => ({ status: 500 }));
    await register("/sick-watcher", ["webhook.endpoint.disabled"]);
    const endpoint = await register("/sick", ["order.created"]);
    const first = await emit("order.created", ORDER);
    await waitFor("a first failure", async () => (await endpointRow(endpoint.id)).failingSince !== null);
    // Six days of failures, as the clock would have them (the default limit is five).
    await app.services.db.webhookEndpoint.update({ where: { id: endpoint.id }, data: { failingSince: new Date(Date.now() - 6 * 86_400_000) } });
    await waitFor("the endpoint to stop", async () => (await endpointRow(endpoint.id)).status === "INACTIVE");
    const row = await endpointRow(endpoint.id);
    expect(row.disabledReason).toMatch(/^Every attempt has failed since .* \(longer than WEBHOOK_DISABLE_AFTER\)\.$/);
    const d = await settles(first.id, endpoint.id, "FAILED");
    expect(d.nextAttemptAt).toBeNull();
    const [disabled] = await operationalAt("/sick-watcher");
    expect(disabled.data).toMatchObject({ endpointId: endpoint.id, reason: row.disabledReason });
  });

  it("a dead letter turns the endpoint FAILED: webhook.endpoint.failed and webhook.delivery.dead_lettered go to the other endpoints", async () => {
    receiver.on("/dying", () => ({ status: 500 }));
    const watcher = await register("/dying-watcher", ["webhook.endpoint.failed", "webhook.delivery.dead_lettered"]);
    const endpoint = await register("/dying", ["order.created", "webhook.endpoint.failed", "webhook.delivery.dead_lettered"]);
    const event = await emit("order.created", ORDER);
    const delivery = await settles(event.id, endpoint.id, "DEAD_LETTER");
    expect((await endpointRow(endpoint.id)).status).toBe("FAILED");
    const seen = await operationalAt("/dying-watcher", 2);
    expect(seen.map((e) => e.eventType).sort()).toEqual(["webhook.delivery.dead_lettered", "webhook.endpoint.failed"]);
    expect(seen.find((e) => e.eventType === "webhook.delivery.dead_lettered")?.data).toMatchObject({
      endpointId: endpoint.id,
      url: receiver.url("/dying"),
      deliveryId: delivery.id,
      eventId: event.id,
      eventType: "order.created",
      reason: expect.stringContaining("HTTP 500"),
    });
    expect(operational("/dying")).toEqual([]);
    expect(watcher.id).not.toBe(endpoint.id);
  });
});

describe("an endpoint's last 24 hours (extension)", () => {
  it("counts its deliveries of the last day by status, with their success rate, on the list and the detail", async () => {
    const own = await createTenant(app);
    receiver.on("/day", (req) => ({ status: req.body.includes('"orderNumber":102') ? 400 : 200 }));
    const endpoint = await register("/day", ["order.created"], own);
    const quiet = await register("/quiet", ["order.created"], own);
    await app.services.db.webhookEndpoint.update({ where: { id: quiet.id }, data: { events: ["store.updated"] } });
    const fresh = await call<{ deliveriesLast24h: unknown }>(app, "GET", `/public/v1/webhooks/${endpoint.id}`, { token: own.token });
    expect(fresh.body.deliveriesLast24h).toEqual({ delivered: 0, failed: 0, pending: 0, successRate: null });

    const events = [];
    for (let i = 0; i < 4; i++) events.push(await emit("order.created", { ...ORDER, orderNumber: 100 + i }, own.storeId));
    await settles(events[0].id, endpoint.id, "DELIVERED");
    await settles(events[1].id, endpoint.id, "DELIVERED");
    // The retry schedule is 50 ms: the third fails at every attempt and dead-letters.
    await settles(events[2].id, endpoint.id, "DEAD_LETTER");
    const old = await settles(events[3].id, endpoint.id, "DELIVERED");
    // A delivery created more than a day ago is left out.
    await app.services.db.webhookDelivery.update({ where: { id: old.id }, data: { createdAt: new Date(Date.now() - 25 * 3_600_000) } });

    const detail = await call<{ deliveriesLast24h: unknown }>(app, "GET", `/public/v1/webhooks/${endpoint.id}`, { token: own.token });
    expect(detail.body.deliveriesLast24h).toEqual({ delivered: 2, failed: 1, pending: 0, successRate: 2 / 3 });
    const list = await call<{ id: string; deliveriesLast24h: unknown }[]>(app, "GET", "/public/v1/webhooks", { token: own.token });
    expect(list.body.find((e) => e.id === endpoint.id)?.deliveriesLast24h).toEqual(detail.body.deliveriesLast24h);
    expect(list.body.find((e) => e.id === quiet.id)?.deliveriesLast24h).toEqual({ delivered: 0, failed: 0, pending: 0, successRate: null });
  });
});
