import { createClient, type Client } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, type FixtureProduct } from "../helpers/fixtures.js";

/**
 * Live dashboards: `subscription { storeEvents }` over Server-Sent Events, read with graphql-sse's client (the
 * reference implementation of GraphQL over SSE) against the real server.
 */

interface StoreEvent {
  eventId: string;
  eventType: string;
  tenantId: string;
  sequence: number;
  timestamp: string;
  data: { orderId?: string } & Record<string, unknown>;
}

const SUBSCRIPTION = `subscription ($storeId: ID, $types: [String!], $after: String) {
  storeEvents(storeId: $storeId, types: $types, after: $after) { eventId eventType tenantId sequence timestamp data }
}`;

let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];
const clients: Client[] = [];

function client(token: string): Client {
  const c = createClient({ url: `${app.baseUrl}/graphql`, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
  clients.push(c);
  return c;
}

/** Subscribes and collects events until `count` arrived (then unsubscribes), or the subscription fails. */
function collect(c: Client, variables: Record<string, unknown>, count: number) {
  const events: StoreEvent[] = [];
  let dispose: () => void = () => undefined;
  const done = new Promise<StoreEvent[]>((resolve, reject) => {
    dispose = c.subscribe<{ storeEvents: StoreEvent }>(
      { query: SUBSCRIPTION, variables },
      {
        next: (result) => {
          if (result.errors?.length) return reject(new Error(JSON.stringify(result.errors)));
          if (result.data) events.push(result.data.storeEvents);
          if (events.length >= count) {
            dispose();
            resolve(events);
          }
        },
        error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
        complete: () => resolve(events),
      },
    );
  });
  return { done, events, stop: () => dispose() };
}

/** The first error a subscription answers with. */
function firstError(c: Client, variables: Record<string, unknown>): Promise<{ message: string; extensions?: { code?: string } }> {
  return new Promise((resolve, reject) => {
    c.subscribe(
      { query: SUBSCRIPTION, variables },
      {
        next: (result) =>
          result.errors?.length ? resolve(result.errors[0] as { message: string; extensions?: { code?: string } }) : reject(new Error("an event arrived")),
        error: (err) => resolve(Array.isArray(err) ? err[0] : { message: String(err) }),
        complete: () => undefined,
      },
    );
  });
}

async function newOrder(tenant: Tenant): Promise<string> {
  const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
    token: tenant.token,
    body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Waits until the subscription is live: the server reads from "now" once it has subscribed. */
async function untilSubscribed(): Promise<void> {
  await new Promise((r) => setTimeout(r, 300));
}

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
});

afterAll(async () => {
  for (const c of clients) c.dispose();
  await app?.close();
});

describe("storeEvents over Server-Sent Events", () => {
  it("delivers every event of the store as it commits, in sequence order, with the webhooks' eventIds", async () => {
    const sub = collect(client(t.token), {}, 1 + 12 * 2);
    await untilSubscribed();
    const first = await newOrder(t);
    // Concurrent writers: the stream still comes in commit order with no gap.
    const ids = await Promise.all(Array.from({ length: 12 }, () => newOrder(t)));
    await Promise.all(ids.map((id) => call(app, "PATCH", `/public/v1/orders/${id}/status`, { token: t.token, body: { status: "CONFIRMED" } })));
    const events = await sub.done;

    const sequences = events.map((e) => e.sequence);
    expect(sequences).toEqual(Array.from({ length: events.length }, (_, i) => sequences[0] + i));
    expect(events[0]).toMatchObject({ eventType: "order.created", tenantId: t.storeCode, data: expect.objectContaining({ orderId: first }) });
    for (const id of ids) {
      const types = events.filter((e) => e.data.orderId === id).map((e) => e.eventType);
      expect(types).toEqual(["order.created", "order.confirmed"]);
    }
    const stored = await app.services.db.event.findMany({ where: { storeId: t.storeId }, orderBy: { sequence: "asc" } });
    expect(events.map((e) => e.eventId)).toEqual(stored.slice(-events.length).map((e) => e.id));
  });

  it("resumes after a reconnect from the last sequence seen, missing nothing and repeating nothing", async () => {
    const first = collect(client(t.token), { types: ["order.created"] }, 2);
    await untilSubscribed();
    await newOrder(t);
    await newOrder(t);
    const seen = await first.done;
    const last = seen[seen.length - 1].sequence;

    // Disconnected: these commit while nobody listens.
    const missed = [await newOrder(t), await newOrder(t), await newOrder(t)];
    const resumed = collect(client(t.token), { types: ["order.created"], after: String(last) }, 4);
    await untilSubscribed();
    const live = await newOrder(t);
    const events = await resumed.done;
    expect(events.map((e) => e.data.orderId)).toEqual([...missed, live]);
    expect(events[0].sequence).toBeGreaterThan(last);
  });

  it("keeps streaming when the database drops its listening connection", async () => {
    const sub = collect(client(t.token), { types: ["order.created"] }, 2);
    await untilSubscribed();
    const before = await newOrder(t);
    const { rowCount } = await app.services.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = 'LISTEN "store_events"'`,
    );
    expect(rowCount).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 300));
    const after = await newOrder(t);
    const started = Date.now();
    const events = await sub.done;
    expect(events.map((e) => e.data.orderId)).toEqual([before, after]);
    // Woken by the reconnected listener, not by the 15 s safety poll.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("gives a partner only its own store and the types its scopes allow", async () => {
    const other = await createTenant(app, { scopes: ["orders:read", "orders:write"] });
    const error = await firstError(client(other.token), { storeId: t.storeId });
    expect(error.extensions?.code).toBe("NOT_FOUND");

    // Without customers:read, customer.created is left out even when asked for.
    await createCatalog(app.services.db, other.storeId);
    const catalog = await app.services.db.product.findFirstOrThrow({ where: { storeId: other.storeId } });
    const sub = collect(client(other.token), { types: ["customer.created", "order.created"] }, 1);
    await untilSubscribed();
    const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
      token: other.token,
      body: { type: "PICKUP", customer: { name: "New customer" }, items: [{ productId: catalog.id, quantity: 1 }] },
    });
    expect(res.status).toBe(201);
    const events = await sub.done;
    expect(events.map((e) => e.eventType)).toEqual(["order.created"]);
    expect(await app.services.db.event.count({ where: { storeId: other.storeId, type: "customer.created" } })).toBe(1);
  });

  it("lets administrators follow any store they name, and refuses anonymous callers and unknown types", async () => {
    expect((await firstError(client(ADMIN_KEY), {})).extensions?.code).toBe("INVALID_REQUEST");
    expect((await firstError(client(t.token), { types: ["order.exploded"] })).extensions?.code).toBe("INVALID_REQUEST");
    const anonymous = await fetch(`${app.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(anonymous.status).toBe(401);

    const sub = collect(client(ADMIN_KEY), { storeId: t.storeId }, 1);
    await untilSubscribed();
    const id = await newOrder(t);
    expect((await sub.done)[0]).toMatchObject({ eventType: "order.created", data: expect.objectContaining({ orderId: id }) });
  });
});
