import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { hashingStats } from "./crypto/hash.js";
import { FALLBACK_REASONS } from "./db/replicas.js";
import type { Services } from "./services.js";

/**
 * Prometheus metrics (prom-client): one registry per process, on which each area registers its own series (this
 * file the platform's, src/modules/<domain>/metrics.ts a domain's, workers/metrics.ts the worker's, the HTTP adapter
 * its requests'); the HTTP adapter only exposes the registry at /metrics.
 */
export type MetricsRegistry = Registry;

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * A series a second registration would duplicate (a second HTTP app on one process's services, as tests build)
 * keeps its first source: prom-client refuses a name twice.
 */
const taken = (registry: MetricsRegistry, name: string): boolean => registry.getSingleMetric(name) !== undefined;

interface Series<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

/** A count kept by its owner with plain increments on the hot path, copied out at scrape time. */
export function copiedCounter<L extends string>(
  registry: MetricsRegistry,
  series: Series<L>,
  read: (set: (value: number, labels?: Partial<Record<L, string>>) => void) => void,
): void {
  if (taken(registry, series.name)) return;
  new Counter({
    ...series,
    labelNames: series.labelNames ?? [],
    registers: [registry],
    collect() {
      this.reset();
      read((value, labels) => (labels ? this.inc(labels, value) : this.inc(value)));
    },
  });
}

/** A level read off its owner at scrape time. */
export function readGauge<L extends string>(
  registry: MetricsRegistry,
  series: Series<L>,
  read: (set: (value: number, labels?: Partial<Record<L, string>>) => void) => void,
): void {
  if (taken(registry, series.name)) return;
  new Gauge({
    ...series,
    labelNames: series.labelNames ?? [],
    registers: [registry],
    collect() {
      read((value, labels) => (labels ? this.set(labels, value) : this.set(value)));
    },
  });
}

/**
 * A gauge read from the database at scrape time (so any process reports the whole cluster's): a scrape must still
 * answer when the database is away, and the gap in the series shows it.
 */
export function scrapedGauge<L extends string, R extends object>(
  registry: MetricsRegistry,
  services: Pick<Services, "pool" | "log">,
  series: Series<L>,
  sql: string,
  apply: (set: (value: number, labels?: Partial<Record<L, string>>) => void, rows: R[]) => void,
): void {
  if (taken(registry, series.name)) return;
  new Gauge({
    ...series,
    labelNames: series.labelNames ?? [],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const { rows } = await services.pool.query<R>(sql);
        apply((value, labels) => (labels ? this.set(labels, value) : this.set(value)), rows);
      } catch (err) {
        services.log.warn({ err }, `metrics: ${series.name} unavailable`);
      }
    },
  });
}

/**
 * graphile-worker jobs still to run (permanently failed ones excluded) by task and state. Plain SQL: Prisma has no
 * model for graphile-worker's tables, and one pass counts every state (FILTER).
 */
const JOBS_BY_TASK_AND_STATE = `
SELECT task_identifier AS task,
  count(*) FILTER (WHERE locked_at IS NULL AND run_at <= now())::int AS ready,
  count(*) FILTER (WHERE locked_at IS NULL AND run_at > now())::int AS scheduled,
  count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running
FROM graphile_worker.jobs WHERE attempts < max_attempts GROUP BY task_identifier`;

/** How long the oldest due job has waited for a worker, in seconds (0 when none waits). */
const QUEUE_LAG = `
SELECT coalesce(extract(epoch FROM now() - min(run_at)), 0)::float8 AS lag
FROM graphile_worker.jobs WHERE locked_at IS NULL AND run_at <= now() AND attempts < max_attempts`;

/** The platform's series: the database pool and queue, secret hashing, grants, replicas, streams and calls out. */
export function registerPlatformMetrics(registry: MetricsRegistry, services: Services): void {
  const { pool, grants, reads, streams, outsideCalls } = services;
  readGauge(
    registry,
    {
      name: "db_pool_connections",
      help: "This process's database pool: connections open (total), idle, and requests waiting for one (waiting).",
      labelNames: ["state"],
    },
    (set) => {
      set(pool.totalCount, { state: "total" });
      set(pool.idleCount, { state: "idle" });
      set(pool.waitingCount, { state: "waiting" });
    },
  );
  scrapedGauge<"task" | "state", { task: string; ready: number; scheduled: number; running: number }>(
    registry,
    services,
    {
      name: "job_queue_jobs",
      help: "graphile-worker jobs by task and state: ready (due, waiting for a worker), scheduled (due later), running.",
      labelNames: ["task", "state"],
    },
    JOBS_BY_TASK_AND_STATE,
    (set, rows) => {
      for (const r of rows) for (const state of ["ready", "scheduled", "running"] as const) set(r[state], { task: r.task, state });
    },
  );
  scrapedGauge<never, { lag: number }>(
    registry,
    services,
    { name: "job_queue_lag_seconds", help: "How long the oldest due job has waited for a worker (0 when none waits)." },
    QUEUE_LAG,
    (set, rows) => set(rows[0]?.lag ?? 0),
  );
  copiedCounter(
    registry,
    { name: "secret_hashes_total", help: "Slow secret hashes (scrypt) this process started: token requests and Application creations." },
    (set) => set(hashingStats().started),
  );
  copiedCounter(
    registry,
    { name: "secret_hash_rejections_total", help: "Secret hashes refused with 503 because the bound on concurrent hashing and its queue were full." },
    (set) => set(hashingStats().refused),
  );
  readGauge(registry, { name: "secret_hashes", help: "Secret hashes now running, or waiting for a slot.", labelNames: ["state"] }, (set) => {
    const { running, waiting } = hashingStats();
    set(running, { state: "running" });
    set(waiting, { state: "waiting" });
  });

  readGauge(registry, { name: "grant_cache_entries", help: "Grants this process holds to admit partner tokens by." }, (set) => set(grants.size));
  copiedCounter(
    registry,
    {
      name: "grant_cache_admits_total",
      help: "Partner token admits by how the grant was found: from the cache (hit) or read from the database (miss).",
      labelNames: ["result"],
    },
    (set) => {
      set(grants.stats.hits, { result: "hit" });
      set(grants.stats.misses, { result: "miss" });
    },
  );
  copiedCounter(
    registry,
    {
      name: "grant_cache_clears_total",
      help: "Times the grant cache was emptied: a grant, Application or store changed (notified at commit), or the LISTEN connection was lost or regained.",
    },
    (set) => set(grants.stats.clears),
  );

  readGauge(
    registry,
    {
      name: "webhook_calls_out_in_flight",
      help: "Calls out to partners' webhook receivers or their hosts' DNS (webhook tests, URL checks) requests of this process wait on, holding no admission slot.",
    },
    (set) => set(outsideCalls.size),
  );
  readGauge(registry, { name: "graphql_live_streams", help: "Live GraphQL subscriptions (storeEvents) this process serves (GRAPHQL_MAX_STREAMS)." }, (set) =>
    set(streams.size),
  );

  if (!reads.enabled) return;
  readGauge(
    registry,
    {
      name: "db_replica_lag_seconds",
      help: "How far each read replica's replay is behind the primary: the age of the oldest primary WAL position it has not replayed (0 while it keeps up).",
      labelNames: ["replica"],
    },
    (set) => {
      for (const r of reads.replicaStates) set(r.lagMs / 1000, { replica: r.name });
    },
  );
  readGauge(
    registry,
    { name: "db_replica_up", help: "Whether a read replica takes reads (1): it answered lately and lags at most REPLICA_MAX_LAG_MS.", labelNames: ["replica"] },
    (set) => {
      for (const r of reads.replicaStates) set(r.up ? 1 : 0, { replica: r.name });
    },
  );
  copiedCounter(
    registry,
    { name: "db_reads_total", help: "Partner and GraphQL reads by where they ran: a replica (host:port/database) or the primary.", labelNames: ["target"] },
    (set) => {
      set(reads.stats.primaryReads, { target: "primary" });
      for (const r of reads.replicaStates) set(r.reads, { target: r.name });
    },
  );
  copiedCounter(
    registry,
    {
      name: "db_read_fallbacks_total",
      help:
        "Reads sent to the primary although replicas are configured, by reason: unavailable (none answers), lagging (all past REPLICA_MAX_LAG_MS), " +
        "behind_write (none has replayed the caller's last write yet), marks_unavailable (the write positions could not be read), failed (a replica failed mid-read; the read ran again on the primary).",
      labelNames: ["reason"],
    },
    (set) => {
      for (const reason of FALLBACK_REASONS) set(reads.stats.fallbacks[reason], { reason });
    },
  );
}
