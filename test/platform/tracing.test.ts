import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createOrder } from "../helpers/fixtures.js";
import { createTestDatabase } from "../helpers/database.js";
import { bundled, freePort, runProcess } from "../helpers/process.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js";
import { pino } from "pino";
import { tracer } from "../../src/platform/tracing/tracer.js";

/**
 * One trace from a partner's write to each delivery, exported over OTLP/HTTP to a receiver in this file: the API
 * and a worker in this process (protobuf), then a worker process of its own (JSON). Spans leave in batches every
 * 50 ms (OTEL_BSP_SCHEDULE_DELAY, read by the SDK).
 */

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let otlp: OtlpReceiver;
let receiver: Receiver;
let app: TestApp;
let worker: Runner | null = null;
let tenant: Tenant;

let untraced: Promise<{ stdout: string; stderr: string }>;

beforeAll(async () => {
  untraced = runUntraced();
  // Awaited by the last test; a failure before then must not count as unhandled.
  untraced.catch(() => undefined);
  process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
  [otlp, receiver] = await Promise.all([startOtlpReceiver(), startReceiver()]);
  app = await startTestApp({
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_SERVICE_NAME: "partner-api",
    WEBHOOK_SEND_TRACEPARENT: "true",
    WEBHOOK_RETRY_SCHEDULE: "50ms",
    WEBHOOK_TIMEOUT_MS: "2000",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  });
  worker = await startWorker(app.services, app.databaseUrl);
  tenant = await createTenant(app);
  // The first attempt to /retry fails: its retry is a deliver_webhook job of its own.
  receiver.on("/retry", (_req, n) => ({ status: n === 1 ? 500 : 200 }));
  for (const path of ["/ok", "/retry"]) {
    const res = await call(app, "POST", "/public/v1/webhooks", { token: tenant.token, body: { url: receiver.url(path), events: ["order.confirmed"] } });
    expect(res.status).toBe(201);
  }
}, 30_000);

afterAll(async () => {
  await worker?.stop();
  destroyWebhookAgents();
  await app?.close();
  await Promise.all([receiver?.close(), otlp?.close()]);
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
});

const hexId = (bytes: number) => randomBytes(bytes).toString("hex");
const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
/** A delivery's request (SQL statements are CLIENT spans too). */
const isDelivery = (s: ReceivedSpan) => s.kind === CLIENT && s.attributes["http.request.method"] === "POST";
const spanWhere = (what: string, pick: () => ReceivedSpan | undefined) => waitFor(what, pick, 10_000);

/** A PATCH of an order's status with the caller's traceparent; answers the trace id it sent. */
async function confirmOrder(): Promise<string> {
  const order = await createOrder(app.services.db, tenant.storeId, { status: "PENDING" });
  const traceId = hexId(16);
  const res = await call(app, "PATCH", `/public/v1/orders/${order.id}/status`, {
    token: tenant.token,
    body: { status: "CONFIRMED" },
    headers: { traceparent: `00-${traceId}-${hexId(8)}-01` },
  });
  expect(res.status).toBe(200);
  return traceId;
}

describe("tracing on, API and worker in one process (OTLP protobuf)", () => {
  let traceId: string;

  it("a PATCH with a traceparent is one trace: SERVER span, GraphQL operation, SQL, commit, the job and each delivery's CLIENT span", async () => {
    traceId = await confirmOrder();
    const clients = await waitFor("both deliveries' CLIENT spans", () => {
      const found = inTrace(traceId).filter(isDelivery);
      // The job's span ends after its requests': it may come in a later batch.
      return found.length >= 2 && inTrace(traceId).some((s) => s.name === "fan_out_event process") ? found : null;
    });
    const server = await spanWhere("the SERVER span", () => inTrace(traceId).find((s) => s.kind === SERVER));
    expect(server.name).toBe("PATCH /public/v1/orders/{id}/status");
    expect(server.attributes).toMatchObject({
      "http.request.method": "PATCH",
      "http.route": "/public/v1/orders/{id}/status",
      "http.response.status_code": 200,
      "url.scheme": "http",
    });
    expect(server.serviceName).toBe("partner-api");
    expect(server.encoding).toBe("protobuf");

    const spans = inTrace(traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const operation = spans.find((s) => s.attributes["graphql.operation.type"] === "mutation");
    expect(operation?.parentSpanId).toBe(server.spanId);
    const commit = spans.find((s) => s.name === "commit");
    expect(commit?.attributes["events.count"]).toBe(1);
    const sql = spans.filter((s) => s.kind === CLIENT && s.attributes["db.system"] === "postgresql");
    // BEGIN, the change with its events and their jobs, the read of the result, COMMIT: the commit span's children.
    expect(sql.filter((s) => s.parentSpanId === commit?.spanId).map((s) => s.attributes["db.query.text"])).toEqual(
      expect.arrayContaining(["BEGIN", "COMMIT", expect.stringContaining('insert into "Event"')]),
    );
    // The job continues the trace as the commit's child: the traceparent travelled with the event.
    const job = spans.find((s) => s.kind === CONSUMER && s.name === "fan_out_event process");
    expect(job?.attributes["messaging.system"]).toBe("graphile_worker");
    expect(job?.parentSpanId).toBe(commit?.spanId);
    for (const client of clients) {
      expect(byId.get(client.parentSpanId)?.spanId).toBe(job?.spanId);
      expect(client.attributes["http.request.method"]).toBe("POST");
      expect(client.name).toBe("POST");
    }
    expect(clients.map((c) => c.attributes["http.response.status_code"]).sort()).toEqual([200, 500]);

    // WEBHOOK_SEND_TRACEPARENT=true: each receiver got the traceparent of its request's CLIENT span.
    const sent = receiver.all.map((r) => r.headers.traceparent);
    for (const client of clients) expect(sent).toContain(`00-${traceId}-${client.spanId}-01`);
  });

  it("the retry of a failed delivery is a trace of its own, linked to the write's", async () => {
    const retry = await spanWhere("the retry job's span", () =>
      otlp.spans.find((s) => s.name === "deliver_webhook process" && s.links.some((l) => l.traceId === traceId)),
    );
    expect(retry.traceId).not.toBe(traceId);
    expect(retry.attributes["webhook.trigger"]).toBe("SCHEDULED");
    const client = await spanWhere("the retry's CLIENT span", () => otlp.spans.find((s) => isDelivery(s) && s.parentSpanId === retry.spanId));
    expect(client.attributes["http.response.status_code"]).toBe(200);
  });

  it("a /graphql operation is a span of its own, the child of the request's", async () => {
    const traceId = hexId(16);
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}`, traceparent: `00-${traceId}-${hexId(8)}-01` },
      body: JSON.stringify({ query: "query StoreName { store { name } }" }),
    });
    expect(res.status).toBe(200);
    const operation = await spanWhere("the operation's span", () => inTrace(traceId).find((s) => s.name === "query StoreName"));
    const server = await spanWhere("the SERVER span", () => inTrace(traceId).find((s) => s.kind === SERVER));
    expect(server.name).toBe("POST /graphql");
    expect(operation.parentSpanId).toBe(server.spanId);
    expect(operation.attributes).toMatchObject({ "graphql.operation.type": "query", "graphql.operation.name": "StoreName" });
  });

  it("the event row keeps the traceparent of the transaction that committed it", async () => {
    const event = await app.services.db.event.findFirst({ where: { traceparent: { startsWith: `00-${traceId}-` } } });
    const commit = inTrace(traceId).find((s) => s.name === "commit");
    expect(event?.traceparent).toBe(`00-${traceId}-${commit?.spanId}-01`);
  });

  it("log lines written inside a span name it (trace_id, span_id)", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ mixin: () => tracer.logFields() }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    log.info("outside");
    await tracer.trace("inside", {}, async (span) => {
      log.info("inside");
      expect(lines[1]).toMatchObject(span.logFields());
    });
    expect(lines[0]).not.toHaveProperty("trace_id");
    expect(lines[1].trace_id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("a worker process of its own (OTLP JSON), WEBHOOK_SEND_TRACEPARENT unset", () => {
  let child: ChildProcess;

  beforeAll(async () => {
    await worker?.stop();
    worker = null;
    child = spawn(process.execPath, [bundled("worker-process")], {
      env: {
        ...process.env,
        DATABASE_URL: app.databaseUrl,
        LOG_LEVEL: "silent",
        DB_POOL_SIZE: "3",
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "partner-worker",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await waitFor("the worker process to start", () => out.includes("ready") || child.exitCode !== null, 20_000);
  }, 30_000);

  afterAll(async () => {
    child?.kill("SIGTERM");
  });

  it("continues the API's trace across processes; the receiver sees no traceparent", async () => {
    const before = receiver.all.length;
    const traceId = await confirmOrder();
    const clients = await waitFor("the worker process's CLIENT spans", () => {
      const found = inTrace(traceId).filter(isDelivery);
      // The job's span ends after its requests': it may come in a later batch.
      return found.length >= 2 && inTrace(traceId).some((s) => s.name === "fan_out_event process") ? found : null;
    });
    for (const c of clients) {
      expect(c.encoding).toBe("json");
      expect(c.serviceName).toBe("partner-worker");
    }
    const job = inTrace(traceId).find((s) => s.name === "fan_out_event process");
    expect(job?.encoding).toBe("json");
    expect(inTrace(traceId).find((s) => s.name === "commit")?.spanId).toBe(job?.parentSpanId);
    // The API's and the worker process's spans: scripts/trace-svg.mjs draws docs/images/trace.svg from these.
    if (process.env.TRACE_SPANS_OUT)
      writeFileSync(
        process.env.TRACE_SPANS_OUT,
        JSON.stringify(inTrace(traceId), (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
      );
    const delivered = receiver.all.slice(before);
    expect(delivered.length).toBeGreaterThanOrEqual(2);
    for (const r of delivered) expect(r.headers.traceparent).toBeUndefined();
  });
});

/**
 * `npm start`'s bundle with tracing off, on a database of its own, preloaded with a hook that lists the
 * @opentelemetry modules it loads (./loaded-modules.mjs): it serves two requests and stops. Started with the file,
 * beside the rest; the last test reads what it printed.
 */
async function runUntraced(): Promise<{ stdout: string; stderr: string }> {
  const database = await createTestDatabase();
  const port = await freePort();
  const hook = fileURLToPath(new URL("./loaded-modules.mjs", import.meta.url));
  const env: Record<string, string> = { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: "info", DB_POOL_SIZE: "3" };
  const p = runProcess(process.execPath, ["--import", hook, bundled("start")], env);
  try {
    await p.waitFor(/"msg":"listening"/, 30_000);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { traceparent: `00-${hexId(16)}-${hexId(8)}-01` } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/public/v1/store`)).status).toBe(401);
  } finally {
    p.child.kill("SIGTERM");
    await p.exited;
    await database.drop();
  }
  return { stdout: p.stdout(), stderr: p.stderr() };
}

it("tracing off: `npm start` serves without creating an exporter or loading OpenTelemetry's SDK, exporters or instrumentation", async () => {
  const { stdout, stderr } = await untraced;
  const line = /OPENTELEMETRY_MODULES (.*)/.exec(stderr);
  expect(line).not.toBeNull();
  const loaded = JSON.parse(line?.[1] ?? "null") as string[];
  // Only the API, which prom-client loads for its exemplars whatever tracing does: no SDK, exporter or instrumentation.
  expect(loaded.filter((m) => !m.includes("/@opentelemetry/api/"))).toEqual([]);
  expect(stdout).not.toContain("exporting traces");
  expect(stdout).not.toContain("trace_id");
}, 30_000);
