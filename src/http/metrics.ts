import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Runner } from "graphile-worker";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { ApiError } from "../platform/errors.js";
import { hashingStats, safeEqual } from "../platform/crypto/hash.js";
import type { Logger } from "../platform/log.js";
import { sendProblem, type ProblemContext } from "./problem.js";
import { httpServerOptions } from "./server-options.js";
import { send } from "../platform/http/response.js";
import type { SubjectKind } from "../platform/ratelimit/limiter.js";
import { planCacheStats } from "../platform/db/plan-cache.js";
import type { Admission, ShedReason } from "./admission.js";
import { WEBHOOK_DELIVERY_STATUSES } from "../modules/webhooks/statuses.js";
import { ATTEMPT_RESULTS, watchAttempts, type AttemptReport } from "../modules/webhooks/attempt.js";
import type { GrantCache } from "../platform/auth/grant-cache.js";
import type { LiveStreams } from "../platform/streams.js";
import type { KeptDocuments } from "../graphql/documents.js";
import type { OutsideCalls } from "../platform/outside.js";
import type { Pacer } from "../platform/pace/pacer.js";
import { FALLBACK_REASONS, type ReadRouter } from "../platform/db/replicas.js";
import type { Services } from "../platform/services.js";
import type { WorkerMetrics } from "../platform/worker-metrics.js";
import { assertReady } from "./readiness.js";
import { DELIVERIES_BY_STATUS, JOBS_BY_TASK_AND_STATE, QUEUE_LAG } from "./sql.js";
import { PORTAL_ASSETS } from "./portal.js";

/**
 * Prometheus metrics of one process (prom-client, a registry of its own). Request series are labelled by the
 * REST route's path template, never the raw path, so ids in URLs cannot grow the series count. Delivery and
 * queue gauges are read from the database at scrape time, so any API process reports the whole cluster's.
 */
export class Metrics implements WorkerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route" | "status">;
  private readonly refusals: Counter<"subject">;
  private readonly jobs: Counter<"task" | "outcome">;
  private readonly shedCount: Counter<"reason">;
  private readonly attempts: Counter<"outcome">;
  private readonly attemptDuration: Histogram<"outcome">;

  constructor(
    private readonly pool: pg.Pool,
    private readonly log: Logger,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
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
    this.jobs = new Counter({
      name: "worker_jobs_total",
      help: "Jobs run by this process's worker, by task and outcome.",
      labelNames: ["task", "outcome"],
      registers,
    });
    this.shedCount = new Counter({
      name: "http_requests_shed_total",
      help: "Requests refused with 503 because the process was at capacity: queue_full (refused at once) or queue_timeout (waited too long).",
      labelNames: ["reason"],
      registers,
    });
    this.attempts = new Counter({
      name: "webhook_attempts_total",
      help: "Webhook delivery attempts this process sent, by outcome: succeeded, failed (answered, not 2xx), timeout, unreachable, refused (URL check).",
      labelNames: ["outcome"],
      registers,
    });
    for (const outcome of ATTEMPT_RESULTS) this.attempts.inc({ outcome }, 0);
    this.attemptDuration = new Histogram({
      name: "webhook_attempt_duration_seconds",
      help: "How long webhook attempts took, from connecting to the end of the response excerpt, by outcome.",
      labelNames: ["outcome"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    new Gauge({
      name: "db_pool_connections",
      help: "This process's database pool: connections open (total), idle, and requests waiting for one (waiting).",
      labelNames: ["state"],
      registers,
      collect() {
        this.set({ state: "total" }, pool.totalCount);
        this.set({ state: "idle" }, pool.idleCount);
        this.set({ state: "waiting" }, pool.waitingCount);
      },
    });
    const scrape = this.scrape.bind(this);
    new Gauge({
      name: "webhook_deliveries",
      help: "Webhook deliveries by status (whole database, read at scrape time).",
      labelNames: ["status"],
      registers,
      collect() {
        return scrape(this, DELIVERIES_BY_STATUS, (g: Gauge<"status">, rows: { status: string; n: number }[]) => {
          for (const s of WEBHOOK_DELIVERY_STATUSES) g.set({ status: s }, rows.find((r) => r.status === s)?.n ?? 0);
        });
      },
    });
    new Gauge({
      name: "job_queue_jobs",
      help: "graphile-worker jobs by task and state: ready (due, waiting for a worker), scheduled (due later), running.",
      labelNames: ["task", "state"],
      registers,
      collect() {
        return scrape(
          this,
          JOBS_BY_TASK_AND_STATE,
          (g: Gauge<"task" | "state">, rows: { task: string; ready: number; scheduled: number; running: number }[]) => {
            for (const r of rows) for (const state of ["ready", "scheduled", "running"] as const) g.set({ task: r.task, state }, r[state]);
          },
        );
      },
    });
    new Gauge({
      name: "prisma_plan_cache_shapes",
      help: "Query shapes and raw statements in this process's Prisma plan cache: cached, or refused (compiled on every call).",
      labelNames: ["state"],
      registers,
      collect() {
        const { shapes } = planCacheStats();
        this.set({ state: "cached" }, shapes.cached);
        this.set({ state: "refused" }, shapes.refused);
      },
    });
    new Counter({
      name: "prisma_query_plans_total",
      help: "Prisma query plans this process used, by source: the plan cache, or the query compiler.",
      labelNames: ["source"],
      registers,
      collect() {
        const { plans } = planCacheStats();
        this.reset();
        this.inc({ source: "cache" }, plans.cached);
        this.inc({ source: "compiler" }, plans.compiled);
      },
    });
    new Counter({
      name: "secret_hashes_total",
      help: "Slow secret hashes (scrypt) this process started: token requests and Application creations.",
      registers,
      collect() {
        this.reset();
        this.inc(hashingStats().started);
      },
    });
    new Counter({
      name: "secret_hash_rejections_total",
      help: "Secret hashes refused with 503 because the bound on concurrent hashing and its queue were full.",
      registers,
      collect() {
        this.reset();
        this.inc(hashingStats().refused);
      },
    });
    new Gauge({
      name: "secret_hashes",
      help: "Secret hashes now running, or waiting for a slot.",
      labelNames: ["state"],
      registers,
      collect() {
        const { running, waiting } = hashingStats();
        this.set({ state: "running" }, running);
        this.set({ state: "waiting" }, waiting);
      },
    });
    new Gauge({
      name: "job_queue_lag_seconds",
      help: "How long the oldest due job has waited for a worker (0 when none waits).",
      registers,
      collect() {
        return scrape(this, QUEUE_LAG, (g: Gauge, rows: { lag: number }[]) => g.set(rows[0]?.lag ?? 0));
      },
    });
  }

  private async scrape<G extends Gauge<string>, R>(gauge: G, sql: string, apply: (gauge: G, rows: R[]) => void): Promise<void> {
    try {
      const { rows } = await this.pool.query(sql);
      gauge.reset();
      apply(gauge, rows as R[]);
    } catch (err) {
      // A scrape must still answer when the database is away; the gap in these series shows it.
      gauge.reset();
      this.log.warn({ err }, "metrics: database gauges unavailable");
    }
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

  /** Reports how many requests run and wait under the admission limit. */
  watchAdmission(admission: Admission): void {
    const registers = [this.registry];
    new Gauge({
      name: "http_requests_in_flight",
      help: "Requests needing the database that run now.",
      registers,
      collect() {
        this.set(admission.inFlight);
      },
    });
    new Gauge({
      name: "http_requests_queued",
      help: "Requests needing the database that wait for a slot.",
      registers,
      collect() {
        this.set(admission.queued);
      },
    });
  }

  private pacer: Pacer | null = null;

  /**
   * Reports this process's webhook pace: deliveries put off to a later slot of their endpoint's pace, tests refused for
   * it, and the reservations it asked its store for. Once per process (an API and a worker in one share the pacer).
   */
  watchPace(pacer: Pacer): void {
    if (this.pacer) return;
    this.pacer = pacer;
    const registers = [this.registry];
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    counter(
      "webhook_paced_total",
      "Webhook attempts put off to a later slot of their endpoint's pace (rateLimit per second); they wait, they never fail for it.",
      () => pacer.stats.deferred,
    );
    counter(
      "webhook_pace_refusals_total",
      "Webhook tests refused with 429 because their endpoint had no slot of its pace left in the current second.",
      () => pacer.stats.refused,
    );
    counter(
      "webhook_pace_reservations_total",
      "Round trips to the pace store (WEBHOOK_PACE_BACKEND) for slots; about one a second per endpoint sent to steadily.",
      () => pacer.stats.reservations,
    );
  }

  /** Reports the calls out (webhook tests, webhook URL lookups) Applications have in flight in this process. */
  watchOutsideCalls(calls: OutsideCalls): void {
    new Gauge({
      name: "webhook_calls_out_in_flight",
      help: "Calls out to partners' webhook receivers or their hosts' DNS (webhook tests, URL checks) requests of this process wait on, holding no admission slot.",
      registers: [this.registry],
      collect() {
        this.set(calls.size);
      },
    });
  }

  watchStreams(streams: LiveStreams): void {
    new Gauge({
      name: "graphql_live_streams",
      help: "Live GraphQL subscriptions (storeEvents) this process serves (GRAPHQL_MAX_STREAMS).",
      registers: [this.registry],
      collect() {
        this.set(streams.size);
      },
    });
  }

  watchDocuments(documents: KeptDocuments): void {
    new Gauge({
      name: "graphql_documents_kept",
      help: "Parsed GraphQL documents kept for reuse (accepted ones only).",
      registers: [this.registry],
      collect() {
        this.set(documents.count);
      },
    });
    new Gauge({
      name: "graphql_documents_kept_bytes",
      help: "Estimated memory the kept GraphQL documents take, against GRAPHQL_DOCUMENT_CACHE_BYTES.",
      registers: [this.registry],
      collect() {
        this.set(documents.bytes);
      },
    });
  }

  /** Reports the grant cache: how many grants it holds, how admits were answered, how often it was cleared. */
  watchGrants(grants: GrantCache): void {
    const registers = [this.registry];
    new Gauge({
      name: "grant_cache_entries",
      help: "Grants this process holds to admit partner tokens by.",
      registers,
      collect() {
        this.set(grants.size);
      },
    });
    // Counters kept by the cache itself (plain increments on the hot path), copied out at scrape time.
    new Counter({
      name: "grant_cache_admits_total",
      help: "Partner token admits by how the grant was found: from the cache (hit) or read from the database (miss).",
      labelNames: ["result"],
      registers,
      collect() {
        this.reset();
        this.inc({ result: "hit" }, grants.stats.hits);
        this.inc({ result: "miss" }, grants.stats.misses);
      },
    });
    new Counter({
      name: "grant_cache_clears_total",
      help: "Times the grant cache was emptied: a grant, Application or store changed (notified at commit), or the LISTEN connection was lost or regained.",
      registers,
      collect() {
        this.reset();
        this.inc(grants.stats.clears);
      },
    });
  }

  /** Reports the read replicas (DATABASE_REPLICA_URLS): each one's lag and state, reads per target, and fallbacks. */
  watchReads(reads: ReadRouter): void {
    if (!reads.enabled) return;
    const registers = [this.registry];
    new Gauge({
      name: "db_replica_lag_seconds",
      help: "How far each read replica's replay is behind the primary: the age of the oldest primary WAL position it has not replayed (0 while it keeps up).",
      labelNames: ["replica"],
      registers,
      collect() {
        for (const r of reads.replicaStates) this.set({ replica: r.name }, r.lagMs / 1000);
      },
    });
    new Gauge({
      name: "db_replica_up",
      help: "Whether a read replica takes reads (1): it answered lately and lags at most REPLICA_MAX_LAG_MS.",
      labelNames: ["replica"],
      registers,
      collect() {
        for (const r of reads.replicaStates) this.set({ replica: r.name }, r.up ? 1 : 0);
      },
    });
    // Counters kept by the router itself (plain increments on the hot path), copied out at scrape time.
    new Counter({
      name: "db_reads_total",
      help: "Partner and GraphQL reads by where they ran: a replica (host:port/database) or the primary.",
      labelNames: ["target"],
      registers,
      collect() {
        this.reset();
        this.inc({ target: "primary" }, reads.stats.primaryReads);
        for (const r of reads.replicaStates) this.inc({ target: r.name }, r.reads);
      },
    });
    new Counter({
      name: "db_read_fallbacks_total",
      help:
        "Reads sent to the primary although replicas are configured, by reason: unavailable (none answers), lagging (all past REPLICA_MAX_LAG_MS), " +
        "behind_write (none has replayed the caller's last write yet), marks_unavailable (the write positions could not be read), failed (a replica failed mid-read; the read ran again on the primary).",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const reason of FALLBACK_REASONS) this.inc({ reason }, reads.stats.fallbacks[reason]);
      },
    });
  }

  rateLimited(subject: SubjectKind): void {
    this.refusals.inc({ subject });
  }

  private readonly onAttempt = (report: AttemptReport): void => {
    this.attempts.inc({ outcome: report.result });
    this.attemptDuration.observe({ outcome: report.result }, report.seconds);
  };

  /** Counts the webhook attempts these services run: the worker's, and the API's endpoint tests. */
  watchAttempts(services: Services): void {
    watchAttempts(services, this.onAttempt);
  }

  /** Counts the outcomes of the jobs a worker in this process runs. */
  watchWorker(runner: Runner): void {
    runner.events.on("job:success", ({ job }) => this.jobs.inc({ task: job.task_identifier, outcome: "success" }));
    runner.events.on("job:error", ({ job }) => this.jobs.inc({ task: job.task_identifier, outcome: "error" }));
  }

  /** GET /metrics in the Prometheus text format; with METRICS_TOKEN set, only for `Bearer <METRICS_TOKEN>`. */
  async handle(req: IncomingMessage, res: ServerResponse, token: string | undefined): Promise<void> {
    if (token) {
      const given = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
      if (!given) throw new ApiError("UNAUTHORIZED", "Metrics need Authorization: Bearer <METRICS_TOKEN>.");
      if (!safeEqual(given, token)) throw new ApiError("INVALID_TOKEN", "Wrong metrics token.");
    }
    const text = await this.registry.metrics();
    res.writeHead(200, { "content-type": this.registry.contentType, "cache-control": "no-store" });
    res.end(text);
  }
}

/**
 * For a worker-only process: /metrics (its job counters and the shared gauges), /healthz and /readyz (the database
 * and the worker, see assertReady), nothing else.
 */
export function createMetricsServer(metrics: Metrics, services: Services, workerRunning: () => boolean): Server {
  const { config } = services;
  const ctx = (path: string): ProblemContext => {
    const requestId = randomUUID();
    return { baseUrl: config.publicBaseUrl, instance: path, requestId, traceId: requestId.replace(/-/g, "") };
  };
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>([
    ["/metrics", (req, res) => metrics.handle(req, res, config.METRICS_TOKEN)],
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
