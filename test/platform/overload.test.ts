import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";

/**
 * Past capacity the service sheds load: a request it cannot take answers 503 (or 429) with Retry-After at once,
 * never 500, and health, readiness and metrics still answer.
 */

const UNLIMITED = { RATE_LIMIT_SANDBOX_STORE: "100000", RATE_LIMIT_SANDBOX_APP: "100000" };

interface Answer {
  status: number;
  retryAfter: string | null;
  code?: string;
}

async function answer(res: Response): Promise<Answer> {
  const body = (await res.json()) as { code?: string; errors?: { extensions?: { code?: string } }[] };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code: body.code ?? body.errors?.[0]?.extensions?.code };
}

const rest = (app: TestApp, tenant: Tenant) =>
  fetch(`${app.baseUrl}/public/v1/sandbox/orders`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
    body: JSON.stringify({ scenario: "delivery" }),
  }).then(answer);

const gql = (app: TestApp, tenant: Tenant) =>
  fetch(`${app.baseUrl}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
    body: JSON.stringify({ query: "mutation { sandboxCreateOrder(scenario: PICKUP) { id } }" }),
  }).then(answer);

/** Every answer is a success, or 503/429 with Retry-After; returns the 503s. */
function expectShedOrServed(answers: Answer[]): Answer[] {
  for (const a of answers) {
    expect([200, 201, 429, 503]).toContain(a.status);
    if (a.status === 429 || a.status === 503) expect(a.retryAfter).toMatch(/^\d+$/);
  }
  const shed = answers.filter((a) => a.status === 503);
  expect(shed.every((a) => a.code === "SERVICE_UNAVAILABLE")).toBe(true);
  expect(answers.filter((a) => a.status === 201 || a.status === 200).length).toBeGreaterThan(0);
  return shed;
}

describe("a burst of writes far past the admission limit", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    // A tiny admission limit, so a burst of a few dozen writes of one Application is far past capacity.
    app = await startTestApp({ HTTP_MAX_IN_FLIGHT: "2", HTTP_MAX_QUEUED: "2", HTTP_QUEUE_TIMEOUT_MS: "300", ...UNLIMITED });
    tenant = await createTenant(app);
  });
  afterAll(() => app?.close());

  it("gets only successes and 503/429 with Retry-After, never a 500, while health, readiness and metrics answer", async () => {
    const burst = Promise.all(Array.from({ length: 36 }, (_, i) => (i % 3 === 2 ? gql(app, tenant) : rest(app, tenant))));
    const [health, ready, metrics] = await Promise.all(["/healthz", "/readyz", "/metrics"].map((p) => fetch(`${app.baseUrl}${p}`)));
    const answers = await burst;

    expect([health.status, metrics.status]).toEqual([200, 200]);
    // Readiness answers, never shed: 200, or 503 saying the process refused most requests of the last seconds, which
    // it may have by the time it is asked (whether it has depends on how the machine interleaves the burst).
    if (ready.status !== 200) {
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toMatch(/capacity: it refused most requests/);
    }
    expect(expectShedOrServed(answers).length).toBeGreaterThan(0);

    const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^http_requests_shed_total\{reason="queue_full"\} [1-9]/m);
    // Once the burst is over, the service takes writes again.
    expect((await rest(app, tenant)).status).toBe(201);
  });
});

describe("a burst of writes past what the database pool serves in time", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    // Admission lets everything in; one connection and a short wait make requests give up in the pool.
    app = await startTestApp({ DB_POOL_SIZE: "1", DB_CONNECTION_TIMEOUT_MS: "200", HTTP_MAX_IN_FLIGHT: "100", ...UNLIMITED });
    tenant = await createTenant(app);
  });
  afterAll(() => app?.close());

  it("answers 503 with Retry-After to the requests that waited too long, never a 500", async () => {
    // 90 writes of a few milliseconds each on one connection: far more than 200 ms of work, however fast a write is.
    const answers = await Promise.all(Array.from({ length: 90 }, (_, i) => (i % 3 === 2 ? gql(app, tenant) : rest(app, tenant))));
    expect(expectShedOrServed(answers).length).toBeGreaterThan(0);
  });
});

describe("slow uploads", () => {
  let app: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    app = await startTestApp({ HTTP_MAX_IN_FLIGHT: "1", HTTP_MAX_QUEUED: "0", ...UNLIMITED });
    tenant = await createTenant(app);
  });
  afterAll(() => app?.close());

  /** A token request whose body never finishes arriving. */
  function trickle(): Promise<Socket> {
    const { port } = new URL(app.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(`POST /partner/auth/token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"grant_type":`);
        resolve(socket);
      });
      socket.on("error", reject);
    });
  }

  it("hold no admission slot while their bodies arrive", async () => {
    const uploads = await Promise.all([trickle(), trickle(), trickle()]);
    try {
      await new Promise((r) => setTimeout(r, 200));
      const res = await fetch(`${app.baseUrl}/public/v1/store`, { headers: { authorization: `Bearer ${tenant.token}` } });
      expect(res.status).toBe(200);
    } finally {
      for (const socket of uploads) socket.destroy();
    }
  });
});
