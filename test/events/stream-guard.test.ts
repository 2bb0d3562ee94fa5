import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, type FixtureProduct } from "../helpers/fixtures.js";

/**
 * A live stream lives no longer than its credential, and one Application cannot hold every stream of a process.
 * Streams are read as a dashboard reads them: POST /graphql with Accept: text/event-stream, over a real socket.
 */

const SUBSCRIPTION = `subscription ($storeId: ID) { storeEvents(storeId: $storeId) { eventId eventType sequence data } }`;

interface Frame {
  data?: { storeEvents: { eventId: string; eventType: string; data: Record<string, unknown> } } | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** One open stream: its HTTP answer, the `next` frames read so far, and whether the server ended it. */
interface Stream {
  status: number;
  headers: Headers;
  frames: Frame[];
  ended: Promise<void>;
  close(): void;
}

/** Opens a stream with a POST, or with a GET (the query in the URL) when `get` is set. */
async function open(app: TestApp, token: string, variables: Record<string, unknown> = {}, get = false): Promise<Stream> {
  const controller = new AbortController();
  const headers = { accept: "text/event-stream", authorization: `Bearer ${token}` };
  const query = new URLSearchParams({ query: SUBSCRIPTION, variables: JSON.stringify(variables) });
  const res = get
    ? await fetch(`${app.baseUrl}/graphql?${query}`, { headers, signal: controller.signal })
    : await fetch(`${app.baseUrl}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query: SUBSCRIPTION, variables }),
        signal: controller.signal,
      });
  const frames: Frame[] = [];
  const ended = (async () => {
    if (!res.body || !res.headers.get("content-type")?.includes("text/event-stream")) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const lines = block.split("\n");
          if (!lines.includes("event: next")) continue;
          const data = lines.find((l) => l.startsWith("data: "));
          if (data) frames.push(JSON.parse(data.slice(6)) as Frame);
        }
      }
    } catch {
      // Closed by this side.
    }
  })();
  return { status: res.status, headers: res.headers, frames, ended, close: () => controller.abort() };
}

let app: TestApp;
let products: FixtureProduct[];

async function newOrder(tenant: Tenant): Promise<void> {
  const res = await call(app, "POST", "/public/v1/orders", {
    token: tenant.token,
    body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }], customer: { name: "Ada Lovelace", phone: "+15550100" } },
  });
  expect(res.status).toBe(201);
}

/** Resolves once the stream has a frame (or fails after `ms`). */
async function firstFrame(stream: Stream, ms = 10_000): Promise<Frame> {
  await expect.poll(() => stream.frames.length, { timeout: ms, interval: 20 }).toBeGreaterThan(0);
  return stream.frames[0];
}

/** The stream ends on its own (the server closed it) within `ms`; answers how long that took. */
async function endsWithin(stream: Stream, ms: number): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream was still open after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([stream.ended, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return performance.now() - started;
}

describe("live streams end with their credential", () => {
  beforeAll(async () => {
    app = await startTestApp();
    const tenant = await createTenant(app);
    products = (await createCatalog(app.services.db, tenant.storeId)).products;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  async function tenantWithCatalog(): Promise<Tenant> {
    const tenant = await createTenant(app);
    products = (await createCatalog(app.services.db, tenant.storeId)).products;
    return tenant;
  }

  /** A stream that has delivered one event (so it is certainly open), after which `end` runs. */
  async function streamingThen(tenant: Tenant, token: string, variables: Record<string, unknown> = {}): Promise<Stream> {
    const stream = await open(app, token, variables);
    expect(stream.status).toBe(200);
    // The subscription is in place once the server has answered its headers; an order made now reaches it.
    await newOrder(tenant);
    const first = await firstFrame(stream);
    expect(first.data?.storeEvents.eventType).toMatch(/^(customer|order)\.created$/);
    return stream;
  }

  it("a revoked grant ends the partner's stream within 5 s with FORBIDDEN: the server closes it", async () => {
    const tenant = await tenantWithCatalog();
    const stream = await streamingThen(tenant, tenant.token);
    const revoked = await graphql(app, "mutation ($input: GrantInput!) { revokeGrant(input: $input) { status } }", {
      input: { clientId: tenant.clientId, storeId: tenant.storeId },
    });
    expect(revoked.errors).toBeUndefined();
    const took = await endsWithin(stream, 5000);
    const last = stream.frames.at(-1);
    expect(last?.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(last?.errors?.[0]?.message).toMatch(/revoked/);
    expect(took).toBeLessThan(5000);
  });

  it("a disabled Application ends its stream with FORBIDDEN", async () => {
    const tenant = await tenantWithCatalog();
    const stream = await streamingThen(tenant, tenant.token);
    const disabled = await graphql(app, "mutation ($c: String!) { setApplicationStatus(clientId: $c, status: DISABLED) { status } }", { c: tenant.clientId });
    expect(disabled.errors).toBeUndefined();
    await endsWithin(stream, 5000);
    expect(stream.frames.at(-1)?.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("a revoked admin key ends the administrator's stream with INVALID_TOKEN", async () => {
    const tenant = await tenantWithCatalog();
    const created = await graphql<{ createAdminKey: { key: string; adminKey: { id: string } } }>(
      app,
      'mutation { createAdminKey(input: { name: "dashboard", role: VIEWER }) { key adminKey { id } } }',
    );
    const { key, adminKey } = created.data?.createAdminKey ?? { key: "", adminKey: { id: "" } };
    const stream = await streamingThen(tenant, key, { storeId: tenant.storeId });
    const revoked = await graphql(app, "mutation ($id: ID!) { revokeAdminKey(id: $id) { id } }", { id: adminKey.id }, ADMIN_KEY);
    expect(revoked.errors).toBeUndefined();
    await endsWithin(stream, 5000);
    expect(stream.frames.at(-1)?.errors?.[0]?.extensions?.code).toBe("INVALID_TOKEN");
  });
});

describe("live streams: the token's expiry and the caps", () => {
  let capped: TestApp;
  beforeAll(async () => {
    capped = await startTestApp({ ACCESS_TOKEN_TTL_SECONDS: "3", GRAPHQL_MAX_STREAMS: "3", GRAPHQL_MAX_STREAMS_PER_APPLICATION: "2" });
  }, 60_000);
  afterAll(async () => {
    await capped?.close();
  });

  it("a stream ends at its token's expiry with INVALID_TOKEN", async () => {
    const tenant = await createTenant(capped);
    const issued = Date.now();
    const stream = await open(capped, tenant.token);
    expect(stream.status).toBe(200);
    await endsWithin(stream, 6000);
    // The token was issued for 3 s (whole seconds: it may end up to a second sooner).
    expect(Date.now() - issued).toBeGreaterThanOrEqual(1900);
    expect(stream.frames.at(-1)?.errors?.[0]?.extensions?.code).toBe("INVALID_TOKEN");
    expect(stream.frames.at(-1)?.errors?.[0]?.message).toMatch(/expired/);
  });

  it("one Application holds at most GRAPHQL_MAX_STREAMS_PER_APPLICATION (429), the process GRAPHQL_MAX_STREAMS (503), whatever the request's method", async () => {
    const a = await createTenant(capped);
    const b = await createTenant(capped);
    const first = await open(capped, a.token);
    // A stream opened with a GET is counted the same.
    const second = await open(capped, a.token, {}, true);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open(capped, a.token);
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("5");
    const fromB = await open(capped, b.token);
    expect(fromB.status).toBe(200);
    const full = await open(capped, b.token);
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("5");
    expect(capped.services.streams.size).toBe(3);
    // A stream that closes gives its place back.
    first.close();
    await expect.poll(() => capped.services.streams.size, { timeout: 5000 }).toBe(2);
    const again = await open(capped, a.token);
    expect(again.status).toBe(200);
    for (const s of [second, fromB, again]) s.close();
    await expect.poll(() => capped.services.streams.size, { timeout: 5000 }).toBe(0);
  });
});
