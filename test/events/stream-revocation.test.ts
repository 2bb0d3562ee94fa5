import { setTimeout as sleep } from "node:timers/promises";
import { createClient, type Client } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, getToken, type Tenant } from "../helpers/tenants.js";
import { customerCreatedData } from "../helpers/fixtures.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "../platform/support.js";
import { createAdminKey, createApplication, createGrant, createStore } from "../../src/modules/admin/operations.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { lastSequence } from "../../src/modules/events/feed.js";
import { SCOPES } from "../../src/platform/auth/scopes.js";

/**
 * A grant revoked, an Application disabled or an admin key revoked on one API process ends that credential's live
 * streams on another within 250 ms of the change, by the notification PostgreSQL sends at its commit: both
 * processes run GRAPHQL_STREAM_CHECK_MS at its most (5 s), so the periodic check cannot be what ends them. Streams
 * whose credential the change leaves alone go on.
 */

/** From the change's answer (sent a moment after its commit) to the stream's ending error, at most. */
const NOTIFIED_MS = 250;
/** An event committed this long after the change reaches the streams still open, and no ended one. */
const LATER_MS = 400;
const BACKSTOP_MS = 5000;

const SUBSCRIPTION = `subscription ($storeId: ID, $after: String) { storeEvents(storeId: $storeId, after: $after) { eventId } }`;

/** `app` serves the streams; `other`, a second API process on the same database, makes the changes. */
let app: TestApp;
let other: ApiProcess;
const clients: Client[] = [];

beforeAll(async () => {
  app = await startTestApp({ GRAPHQL_STREAM_CHECK_MS: String(BACKSTOP_MS) });
  other = await startApiProcess(app.databaseUrl, { GRAPHQL_STREAM_CHECK_MS: String(BACKSTOP_MS) });
}, 150_000);

afterAll(async () => {
  for (const c of clients) c.dispose();
  if (other) await stopApiProcess(other);
  await app?.close();
});

/** One stream as a dashboard reads it (graphql-sse's client), with when things happened (performance.now()). */
interface Followed {
  openedAt: number;
  /** The eventIds received, in order. */
  events: string[];
  /** The error items received. */
  errors: { code: unknown; message: string; at: number }[];
  /** When the server completed the stream; null while it is open. */
  endedAt: number | null;
  /** What the client reported as a transport failure (none expected). */
  failures: string[];
}

/**
 * Opens a stream of the store from its latest event (`after`: one committed while the subscription starts is not
 * missed); resolves once the server has answered it.
 */
async function follow(token: string, storeId: string): Promise<Followed> {
  const after = String(await lastSequence(app.services.db, storeId));
  const f: Followed = { openedAt: performance.now(), events: [], errors: [], endedAt: null, failures: [] };
  await new Promise<void>((answered) => {
    const client = createClient({
      url: `${app.baseUrl}/graphql`,
      headers: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      on: { connected: () => answered() },
    });
    clients.push(client);
    client.subscribe<{ storeEvents: { eventId: string } }>(
      { query: SUBSCRIPTION, variables: { storeId, after } },
      {
        next: (result) => {
          for (const e of result.errors ?? []) f.errors.push({ code: e.extensions?.code, message: e.message, at: performance.now() });
          if (result.data) f.events.push(result.data.storeEvents.eventId);
        },
        error: (err) => {
          f.failures.push(err instanceof Error ? err.message : JSON.stringify(err));
          f.endedAt = performance.now();
          answered();
        },
        complete: () => {
          f.endedAt = performance.now();
        },
      },
    );
  });
  expect(f.failures).toEqual([]);
  return f;
}

/** Commits an event on the store (a direct write, as any change would make one); its eventId. */
async function emit(storeId: string): Promise<string> {
  const event = await app.services.db.$transaction((tx) => emitEvent(tx, storeId, "customer.created", customerCreatedData()));
  return event.id;
}

/** An event of the store reaches the stream: it is open and delivering. */
async function delivers(f: Followed, storeId: string): Promise<void> {
  const id = await emit(storeId);
  await expect.poll(() => f.events, { timeout: 5000, interval: 5 }).toContain(id);
}

/** A GraphQL mutation with the admin key on the other process; when its answer arrived (the change committed). */
async function changeOnOther(query: string, variables: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${other.baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_KEY}` },
    body: JSON.stringify({ query, variables }),
  });
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body).not.toHaveProperty("errors");
  return performance.now();
}

/** The stream's last item is the error naming why, within NOTIFIED_MS of the change, and the server ended it. */
async function endsWithin(f: Followed, changedAt: number, code: string, reason: RegExp): Promise<void> {
  await expect.poll(() => f.endedAt, { timeout: BACKSTOP_MS, interval: 5 }).not.toBeNull();
  expect(f.failures).toEqual([]);
  expect(f.errors).toEqual([{ code, message: expect.stringMatching(reason), at: expect.any(Number) }]);
  expect(f.errors[0].at - changedAt).toBeLessThan(NOTIFIED_MS);
  // The periodic check's first turn after the one at the stream's start had not come yet.
  expect((f.endedAt ?? Number.POSITIVE_INFINITY) - f.openedAt).toBeLessThan(BACKSTOP_MS);
}

interface Stream {
  f: Followed;
  storeId: string;
}

/** Until LATER_MS after the change. */
const untilLater = (changedAt: number) => sleep(Math.max(0, changedAt + LATER_MS - performance.now()));

/** Each stream gets an event of its store committed now, and is still open. */
async function stillOpen(streams: Stream[]): Promise<void> {
  for (const { f, storeId } of streams) await delivers(f, storeId);
  for (const { f } of streams) expect({ errors: f.errors, endedAt: f.endedAt, failures: f.failures }).toEqual({ errors: [], endedAt: null, failures: [] });
}

/**
 * Events committed LATER_MS after the change, on the ended stream's store and on each open stream's: every open one
 * gets its event and is still open; the ended one got nothing after it ended.
 */
async function laterEvents(changedAt: number, ended: Stream, open: Stream[]): Promise<void> {
  const before = [...ended.f.events];
  await untilLater(changedAt);
  await emit(ended.storeId);
  await stillOpen(open);
  expect(ended.f.events).toEqual(before);
}

/** A SANDBOX store, and a token of the tenant's Application on it. */
async function secondStore(t: Tenant): Promise<{ storeId: string; token: string }> {
  const store = await createStore(app.services.db, { name: "Second store", environment: "SANDBOX" });
  await createGrant(app.services.db, { clientId: t.clientId, storeId: store.id });
  return { storeId: store.id, token: await getToken(app, t.clientId, t.clientSecret, { tenant_id: store.code }) };
}

/** A token of another Application granted on the tenant's store. */
async function secondApplication(t: Tenant): Promise<string> {
  const { application, clientSecret } = await createApplication(app.services.db, { name: "Second app", environment: "SANDBOX", scopes: [...SCOPES] });
  await createGrant(app.services.db, { clientId: application.clientId, storeId: t.storeId });
  return getToken(app, application.clientId, clientSecret);
}

describe("a change on another process ends the live streams it concerns within 250 ms", () => {
  it("a revoked grant ends that grant's stream with FORBIDDEN, and not the same Application's stream on another store", async () => {
    const t = await createTenant(app);
    const second = await secondStore(t);
    const [revoked, bystander] = await Promise.all([follow(t.token, t.storeId), follow(second.token, second.storeId)]);
    await Promise.all([delivers(revoked, t.storeId), delivers(bystander, second.storeId)]);

    const changedAt = await changeOnOther("mutation ($input: GrantInput!) { revokeGrant(input: $input) { status } }", {
      input: { clientId: t.clientId, storeId: t.storeId },
    });
    await endsWithin(revoked, changedAt, "FORBIDDEN", /revoked this Application's access/);
    await laterEvents(changedAt, { f: revoked, storeId: t.storeId }, [{ f: bystander, storeId: second.storeId }]);
  });

  it("a disabled Application ends its stream with FORBIDDEN, and not another Application's stream on the same store", async () => {
    const t = await createTenant(app);
    const [disabled, bystander] = await Promise.all([follow(t.token, t.storeId), follow(await secondApplication(t), t.storeId)]);
    await Promise.all([delivers(disabled, t.storeId), delivers(bystander, t.storeId)]);

    const changedAt = await changeOnOther("mutation ($c: String!) { setApplicationStatus(clientId: $c, status: DISABLED) { status } }", { c: t.clientId });
    await endsWithin(disabled, changedAt, "FORBIDDEN", /Application is disabled/);
    await laterEvents(changedAt, { f: disabled, storeId: t.storeId }, [{ f: bystander, storeId: t.storeId }]);
  });

  it("a revoked admin key ends its stream with INVALID_TOKEN, and not another admin key's stream of the same store", async () => {
    const t = await createTenant(app);
    const [doomed, kept] = await Promise.all([
      createAdminKey(app.services.db, { name: "dashboard", role: "VIEWER" }),
      createAdminKey(app.services.db, { name: "wallboard", role: "VIEWER" }),
    ]);
    const [revoked, bystander] = await Promise.all([follow(doomed.key, t.storeId), follow(kept.key, t.storeId)]);
    await Promise.all([delivers(revoked, t.storeId), delivers(bystander, t.storeId)]);

    const changedAt = await changeOnOther("mutation ($id: ID!) { revokeAdminKey(id: $id) { id } }", { id: doomed.adminKey.id });
    await endsWithin(revoked, changedAt, "INVALID_TOKEN", /admin key was revoked/);
    await laterEvents(changedAt, { f: revoked, storeId: t.storeId }, [{ f: bystander, storeId: t.storeId }]);
  });

  it("changes to other stores, Applications and admin keys end no stream", async () => {
    const t = await createTenant(app);
    const key = await createAdminKey(app.services.db, { name: "ops", role: "VIEWER" });
    const [partner, admin] = await Promise.all([follow(t.token, t.storeId), follow(key.key, t.storeId)]);
    await Promise.all([delivers(partner, t.storeId), delivers(admin, t.storeId)]);

    const [revokedElsewhere, disabledElsewhere] = await Promise.all([createTenant(app), createTenant(app)]);
    const otherKey = await createAdminKey(app.services.db, { name: "other", role: "VIEWER" });
    await changeOnOther("mutation ($input: GrantInput!) { revokeGrant(input: $input) { status } }", {
      input: { clientId: revokedElsewhere.clientId, storeId: revokedElsewhere.storeId },
    });
    await changeOnOther("mutation ($c: String!) { setApplicationStatus(clientId: $c, status: DISABLED) { status } }", { c: disabledElsewhere.clientId });
    const changedAt = await changeOnOther("mutation ($id: ID!) { revokeAdminKey(id: $id) { id } }", { id: otherKey.adminKey.id });

    await untilLater(changedAt);
    await stillOpen([
      { f: partner, storeId: t.storeId },
      { f: admin, storeId: t.storeId },
    ]);
  });
});
