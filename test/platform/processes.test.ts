import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { startApiProcess, startOfFreshMinute, stopApiProcess, type ApiProcess } from "./support.js";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.js";

const hasRedis = await redisReachable();

/** Two API processes (`--role api`) against one database, as behind a load balancer. */
let app: TestApp;
let a: ApiProcess;
let b: ApiProcess;

beforeAll(async () => {
  app = await startTestApp();
  // `a` is the one SIGTERM drains: its waits for a slot and for the secret hash are long, so a slow moment of a busy
  // machine never turns a request it accepted into a 503 (capacity refusals have tests of their own).
  const patient = { HTTP_QUEUE_TIMEOUT_MS: "10000", SECRET_HASH_WAIT_MS: "10000" };
  [a, b] = await Promise.all([startApiProcess(app.databaseUrl, patient), startApiProcess(app.databaseUrl)]);
}, 150_000);
afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map(stopApiProcess));
  await app.close();
});

async function getStore(base: string, token: string): Promise<Response> {
  return fetch(`${base}/public/v1/store`, { headers: { authorization: `Bearer ${token}` } });
}

/** 110 requests at once for one store, alternating between two processes, of which exactly 100 pass. */
async function sharedLimit(a: ApiProcess, b: ApiProcess): Promise<void> {
  const hot = await createTenant(app, { scopes: ["merchant:read"] });
  const calm = await createTenant(app, { scopes: ["merchant:read"] });
  await startOfFreshMinute(6);
  // 110 at once, alternating between the processes: the counters are shared, so exactly 100 pass.
  const responses = await Promise.all(Array.from({ length: 110 }, (_, i) => getStore(i % 2 ? a.baseUrl : b.baseUrl, hot.token)));
  const statuses = responses.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(100);
  expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  const ok = responses.filter((r) => r.status === 200);
  expect(new Set(ok.map((r) => r.headers.get("x-ratelimit-remaining")))).toEqual(new Set(Array.from({ length: 100 }, (_, i) => String(i))));
  const refused = responses.find((r) => r.status === 429);
  if (!refused) throw new Error("no request was refused");
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(refused.headers.get("x-ratelimit-limit")).toBe("100");
  expect(((await refused.json()) as { code: string }).code).toBe("RATE_LIMIT_EXCEEDED");

  // The 101st in the minute is refused by either process.
  expect((await getStore(a.baseUrl, hot.token)).status).toBe(429);
  expect((await getStore(b.baseUrl, hot.token)).status).toBe(429);
  const other = await getStore(a.baseUrl, calm.token);
  expect(other.status).toBe(200);
  expect(other.headers.get("x-ratelimit-remaining")).toBe("99");
}

describe("limits shared by two API processes", () => {
  it("admits exactly 100 sandbox requests per store per minute across both processes (counters in PostgreSQL, the default with DATABASE_URL); another store is unaffected", async () => {
    await sharedLimit(a, b);
  });

  it.skipIf(!hasRedis)(
    "does the same with the counters in Redis (REDIS_URL)",
    async () => {
      const env = { REDIS_URL: TEST_REDIS_URL };
      // One after the other, and each stopped whatever happens: two starting at once on a busy machine took longer
      // than startApiProcess waits.
      const started: ApiProcess[] = [];
      try {
        for (let i = 0; i < 2; i++) started.push(await startApiProcess(app.databaseUrl, env));
        await sharedLimit(started[0], started[1]);
      } finally {
        await Promise.all(started.map(stopApiProcess));
      }
    },
    180_000,
  );
});

describe("request logs", () => {
  it("carry the trace id of a W3C traceparent", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const res = await fetch(`${b.baseUrl}/public/v1/unknown`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    expect(((await res.json()) as { traceId: string }).traceId).toBe(traceId);
    const deadline = Date.now() + 3000;
    while (!b.output().includes(traceId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const line = b
      .output()
      .split("\n")
      .find((l) => l.includes(traceId));
    expect(JSON.parse(line ?? "{}")).toMatchObject({ traceId, path: "/public/v1/unknown", status: 404, msg: "request" });
  });
});

describe("--role worker", () => {
  it("runs jobs without an API, and serves its metrics, /healthz and /readyz on METRICS_PORT", async () => {
    const worker = await startApiProcess(app.databaseUrl, {}, "worker");
    try {
      expect((await fetch(`${worker.baseUrl}/public/v1/store`)).status).toBe(404);
      expect(await (await fetch(`${worker.baseUrl}/healthz`)).json()).toEqual({ status: "ok" });
      expect(await (await fetch(`${worker.baseUrl}/readyz`)).json()).toEqual({ status: "ready" });
      await app.services.pool.query(`SELECT graphile_worker.add_job('cleanup_rate_limits', '{}'::json)`);
      const deadline = Date.now() + 10_000;
      let text = "";
      while (Date.now() < deadline) {
        text = await (await fetch(`${worker.baseUrl}/metrics`)).text();
        if (/worker_jobs_total\{task="cleanup_rate_limits",outcome="success"\} 1/.test(text)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(text).toMatch(/^worker_jobs_total\{task="cleanup_rate_limits",outcome="success"\} 1$/m);
      expect(text).toMatch(/^job_queue_lag_seconds 0$/m);
    } finally {
      await stopApiProcess(worker);
    }
    expect(await worker.exited).toBe(0);
  }, 120_000);

  it("answers /healthz and /readyz on PORT when METRICS_PORT is not set", async () => {
    const worker = await startApiProcess(app.databaseUrl, {}, "worker", "PORT");
    try {
      const ready = await fetch(`${worker.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready" });
      expect((await fetch(`${worker.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await stopApiProcess(worker);
    }
  }, 120_000);
});

/** The JSON lines of a process's standard output (what a log collector reads). */
function jsonLines(p: ApiProcess): Record<string, unknown>[] {
  return p
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("log lines", () => {
  it("carry a lost connection's error as { type, message, code }, never the client that held it", async () => {
    // node-postgres names its connections after PGAPPNAME: the worker's can be told from everyone else's.
    const name = `lost_${randomBytes(4).toString("hex")}`;
    const worker = await startApiProcess(app.databaseUrl, { PGAPPNAME: name }, "worker");
    try {
      const { rows } = await app.services.pool.query<{ pid: number }>("select pid from pg_stat_activity where application_name = $1", [name]);
      expect(rows.length).toBeGreaterThan(1);
      await app.services.pool.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [name]);
      const deadline = Date.now() + 10_000;
      while (!/idle database connection lost/.test(worker.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(worker.output()).toMatch(/idle database connection lost/);
      // Its connections come back: still ready.
      await expect.poll(async () => (await fetch(`${worker.baseUrl}/readyz`)).status, { timeout: 10_000 }).toBe(200);
    } finally {
      await stopApiProcess(worker);
    }
    const lines = jsonLines(worker);
    const idle = lines.find((l) => l.msg === "idle database connection lost; the pool replaces it");
    expect(idle?.err).toEqual({ type: "DatabaseError", message: "terminating connection due to administrator command", code: "57P01" });
    expect(JSON.stringify(idle).length).toBeLessThan(500);
    // Every other line about the lost connections (the LISTENs, the liveness lock) carries its error the same way.
    for (const line of lines.filter((l) => "err" in l || "error" in l)) {
      expect(line).not.toHaveProperty("error");
      expect(
        Object.keys(line.err ?? {}).every((k) => ["type", "message", "code", "stack"].includes(k)),
        JSON.stringify(line),
      ).toBe(true);
      expect(JSON.stringify(line).length).toBeLessThan(2000);
    }
  }, 120_000);
});

describe("the demo store", () => {
  it("is not created on DATABASE_URL (no secret printed) unless DEMO=true, which prints it to standard error only", async () => {
    for (const p of [a, b]) expect(p.output()).not.toContain("client_secret");
    const demo = () => app.services.db.store.count({ where: { name: "Demo Sandbox Store" } });
    expect(await demo()).toBe(0);
    const withDemo = await startApiProcess(app.databaseUrl, { DEMO: "true" });
    try {
      await expect.poll(() => withDemo.output(), { timeout: 10_000 }).toMatch(/client_secret: cs_\S+/);
      expect(await demo()).toBe(1);
    } finally {
      await stopApiProcess(withDemo);
    }
    const secret = /client_secret: (\S+)/.exec(withDemo.output())?.[1] ?? "";
    expect(withDemo.stderr()).toContain(secret);
    expect(withDemo.stdout()).not.toContain(secret);
  }, 120_000);
});

interface Outcome {
  connected: boolean;
  status?: number;
  body?: string;
  error?: string;
  finishedAt?: number;
}

/**
 * One request on its own connection; `hold` keeps the body's second half until released, `onConnect` hears when the
 * connection is open.
 */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  opts: { hold?: Promise<void>; onConnect?: () => void } = {},
): Promise<Outcome> {
  const { hold, onConnect } = opts;
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const outcome: Outcome = { connected: false };
    const req = request(url, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ ...outcome, status: res.statusCode, body: text, finishedAt: Date.now() }));
      res.on("error", (e) => resolve({ ...outcome, error: e.message }));
    });
    req.on("socket", (s) =>
      s.on("connect", () => {
        outcome.connected = true;
        onConnect?.();
      }),
    );
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ ...outcome, error: e.code ?? e.message }));
    if (body === undefined) {
      req.end();
    } else if (!hold) {
      req.end(body);
    } else {
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half));
      void hold.then(() => req.end(body.slice(half)));
    }
  });
}

describe("SIGTERM", () => {
  it("stops accepting, finishes every accepted request (even one whose body is still arriving) and exits 0", async () => {
    const tenant: Tenant = await createTenant(app, { scopes: ["merchant:read"] });
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const tokenBody = JSON.stringify({ grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret });
    const json = { "content-type": "application/json", "content-length": String(Buffer.byteLength(tokenBody)) };
    let connected = 0;
    const onConnect = () => connected++;
    const requests = [
      ...Array.from({ length: 6 }, () => send(a.baseUrl, "POST", "/partner/auth/token", json, tokenBody, { hold: held, onConnect })),
      ...Array.from({ length: 12 }, () => send(a.baseUrl, "GET", "/public/v1/store", { authorization: `Bearer ${tenant.token}` }, undefined, { onConnect })),
    ];
    // Timed from the events rather than from the clock alone, so a busy machine's slow moment cannot reorder them:
    // every connection is open (and has had a moment to be accepted) before the signal; the probe follows the
    // process's own word that it is shutting down.
    await expect.poll(() => connected, { timeout: 20_000 }).toBe(requests.length);
    await new Promise((r) => setTimeout(r, 300));
    const signalledAt = Date.now();
    a.child.kill("SIGTERM");
    await a.waitFor(/shutting down/, 20_000);
    await new Promise((r) => setTimeout(r, 400));
    // The listener is closed by now: a new connection is refused rather than accepted and dropped.
    const late = await send(a.baseUrl, "GET", "/healthz", {});
    expect(late).toMatchObject({ connected: false, error: "ECONNREFUSED" });
    release();
    const outcomes = await Promise.all(requests);
    for (const o of outcomes) {
      expect(o.error).toBeUndefined();
      expect(o.status, o.body).toBe(200);
      expect(() => JSON.parse(o.body ?? "")).not.toThrow();
    }
    // The token requests were mid-flight: they completed after the signal.
    expect(outcomes.slice(0, 6).every((o) => (o.finishedAt ?? 0) > signalledAt)).toBe(true);
    expect(await a.exited).toBe(0);
    expect(a.output()).toMatch(/shutting down/);
  });
});
