import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { Counter, Histogram } from "prom-client";
import { ApiError } from "../platform/errors.js";
import { safeEqual } from "../platform/crypto/hash.js";
import { readGauge, type MetricsRegistry } from "../platform/metrics.js";
import { sendProblem, type ProblemContext } from "./problem.js";
import { httpServerOptions } from "./server-options.js";
import { send } from "../platform/http/response.js";
import type { SubjectKind } from "../platform/ratelimit/limiter.js";
import type { Admission, FlowKind, ShedReason } from "./admission.js";
import type { KeptDocuments } from "../graphql/documents.js";
import type { Services } from "../platform/services.js";
import { assertReady } from "./readiness.js";
import { PORTAL_ASSETS } from "./portal.js";

/**
 * The HTTP adapter's series (requests by REST route template, never the raw path, so ids in URLs cannot grow the
 * series count; admission; rate-limit refusals; kept GraphQL documents) on the process's registry, which it exposes
 * at /metrics. The platform, the domains and the worker register their own series on the same registry.
 */
const created = new WeakMap<MetricsRegistry, Metrics>();

export class Metrics {
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route" | "status">;
  private readonly refusals: Counter<"subject">;
  private readonly shedCount: Counter<"reason">;
  private readonly flowRefusals: Counter<"flow">;

  /** The HTTP series of a registry: a second app on the same services (tests build some) counts into the first's. */
  static of(registry: MetricsRegistry): Metrics {
    const known = created.get(registry) ?? new Metrics(registry);
    created.set(registry, known);
    return known;
  }

  private constructor(readonly registry: MetricsRegistry) {
    const registers = [registry];
    this.requests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests by route template and status.",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency by route template and status.",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.refusals = new Counter({
      name: "rate_limit_rejections_total",
      help: "Requests refused with 429, by the limit that refused them.",
      labelNames: ["subject"],
      registers,
    });
    this.shedCount = new Counter({
      name: "http_requests_shed_total",
      help: "Requests refused with 503 because the process was at capacity: queue_full (refused at once) or queue_timeout (waited too long).",
      labelNames: ["reason"],
      registers,
    });
    this.flowRefusals = new Counter({
      name: "http_requests_concurrency_limited_total",
      help: "Requests refused with 429 CONCURRENCY_LIMIT_EXCEEDED because their flow had its share of the admission queue waiting (HTTP_MAX_QUEUED_PER_APPLICATION), by kind of flow: application, token, admin, anonymous.",
      labelNames: ["flow"],
      registers,
    });
  }

  /**
   * A /public/v1 request is labelled by the template of the route the router recognized it as (`template`), or
   * `unmatched`; other paths are a fixed handful, and unknown ones collapse.
   */
  routeOf(path: string, status: number, template: string | undefined): string {
    if (path.startsWith("/public/v1/")) return template ?? "unmatched";
    // The portal's asset names change with every build: one label for all of them.
    if (status !== 404 && path.startsWith(PORTAL_ASSETS)) return `${PORTAL_ASSETS}{name}`;
    return status === 404 ? "unmatched" : path;
  }

  observeRequest(method: string, path: string, status: number, seconds: number, template: string | undefined): void {
    const labels = { method, route: this.routeOf(path, status, template), status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  shed(reason: ShedReason): void {
    this.shedCount.inc({ reason });
  }

  concurrencyLimited(flow: FlowKind): void {
    this.flowRefusals.inc({ flow });
  }

  /** Reports how many requests run and wait under the admission limit. */
  watchAdmission(admission: Admission): void {
    readGauge(this.registry, { name: "http_requests_in_flight", help: "Requests needing the database that run now." }, (set) => set(admission.inFlight));
    readGauge(this.registry, { name: "http_requests_queued", help: "Requests needing the database that wait for a slot." }, (set) => set(admission.queued));
  }

  watchDocuments(documents: KeptDocuments): void {
    readGauge(this.registry, { name: "graphql_documents_kept", help: "Parsed GraphQL documents kept for reuse (accepted ones only)." }, (set) =>
      set(documents.count),
    );
    readGauge(
      this.registry,
      { name: "graphql_documents_kept_bytes", help: "Estimated memory the kept GraphQL documents take, against GRAPHQL_DOCUMENT_CACHE_BYTES." },
      (set) => set(documents.bytes),
    );
  }

  rateLimited(subject: SubjectKind): void {
    this.refusals.inc({ subject });
  }

  /** GET /metrics: every series of the process. */
  handle(req: IncomingMessage, res: ServerResponse, token: string | undefined): Promise<void> {
    return exposeMetrics(this.registry, req, res, token);
  }
}

/** GET /metrics in the Prometheus text format; with METRICS_TOKEN set, only for `Bearer <METRICS_TOKEN>`. */
async function exposeMetrics(registry: MetricsRegistry, req: IncomingMessage, res: ServerResponse, token: string | undefined): Promise<void> {
  if (token) {
    const given = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!given) throw new ApiError("UNAUTHORIZED", "Metrics need Authorization: Bearer <METRICS_TOKEN>.");
    if (!safeEqual(given, token)) throw new ApiError("INVALID_TOKEN", "Wrong metrics token.");
  }
  const text = await registry.metrics();
  res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
  res.end(text);
}

/**
 * For a worker-only process: /metrics (its job counters and the shared gauges), /healthz and /readyz (the database
 * and the worker, see assertReady), nothing else.
 */
export function createMetricsServer(registry: MetricsRegistry, services: Services, workerRunning: () => boolean): Server {
  const { config } = services;
  const ctx = (path: string): ProblemContext => {
    const requestId = randomUUID();
    return { baseUrl: config.publicBaseUrl, instance: path, requestId, traceId: requestId.replace(/-/g, "") };
  };
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>([
    ["/metrics", (req, res) => exposeMetrics(registry, req, res, config.METRICS_TOKEN)],
    ["/healthz", async (_req, res) => send(res, 200, { status: "ok" })],
    [
      "/readyz",
      async (_req, res) => {
        await assertReady(services, workerRunning);
        send(res, 200, { status: "ready" });
      },
    ],
  ]);
  return createServer(httpServerOptions(config), (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const route = req.method === "GET" ? routes.get(path) : undefined;
    const answer = route ? route(req, res) : Promise.reject(new ApiError("NOT_FOUND", `No route ${req.method} ${path}.`));
    answer.catch((err: unknown) => sendProblem(res, err, ctx(path)));
  });
}
