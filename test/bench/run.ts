import { execFileSync } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openBenchDatabase, type BenchDatabase } from "./lib/database.js";
import { DEFAULT_DATASET, generateDataset, type DatasetOptions } from "./lib/dataset.js";
import { serviceCommand, startService, stopAll } from "./lib/processes.js";
import { createApplications, createSandboxStores, fetchTokens, type TenantPlan } from "./lib/tenants.js";
import { markdown, verdictTable, writeReport, type Report } from "./lib/report.js";
import { prepareDeliveries } from "./lib/webhooks.js";
import { startReceiver } from "./lib/receiver.js";
import type { BenchContext, ModuleResult, Settings } from "./context.js";
import { benchReads } from "./reads.js";
import { benchReplicaReads } from "./replica-reads.js";
import { benchDeepPage } from "./deep-page.js";
import { benchEventFeed } from "./event-feed.js";
import { benchSequenceWrite } from "./sequence-write.js";
import { benchDeliveryLatency, queueLatency } from "./delivery-latency.js";
import { benchDeliveryThroughput, queueThroughput } from "./delivery-throughput.js";
import { profileApi } from "./profile.js";
import { readRoutes, someOrders } from "./lib/read-routes.js";
import { benchMemory, peakRssVerdict } from "./memory.js";
import { benchLimiter } from "./limiter.js";
import { ABUSE_KINDS, benchFairness, type FairnessOptions } from "./fairness.js";
import { benchExport } from "./export.js";
import { benchDestinations } from "./destinations.js";

/**
 * `npm run bench`: one run of every benchmark on this machine, side by side, in a few minutes. Builds a fresh
 * database with the data set, starts the API (and later a worker and the baselines) as real processes, runs the
 * modules, prints the table and writes test/bench/results/latest.{json,md}. Everything it starts it stops, and
 * its temporary directories go with it, also on Ctrl-C.
 *
 *   npm run bench -- --quick          smaller data set and shorter loads, to try the harness (not for figures)
 *   npm run bench -- --only reads,deep,profile,feed,sequence,writes,tracing,memory,limiter,latency,throughput,destinations,fairness,export
 *   npm run bench -- --only reads --replica   also the reads on a streaming replica of the embedded database
 *   npm run bench -- --only reads,writes,throughput --before /tmp/before
 *                                     also another build (a checkout with its dist/ built, see prepare-before.sh) as a
 *                                     contender of these modules: a before/after in one run, alternating
 *
 * Environment: BENCH_DATABASE_URL (a server to create the database on instead of embedded PostgreSQL),
 * BENCH_CONNECTIONS (16), BENCH_SECONDS (6), BENCH_ROUNDS (2), BENCH_DELIVERY_RATE (9000),
 * BENCH_EMIT_MODE (events; events-prisma emits the latency benchmark's events with emitEvent itself, see emitter.ts),
 * BENCH_RATE_LIMIT_BACKEND (memory; postgres or redis, the latter with BENCH_REDIS_URL),
 * BENCH_ABUSE_RATE (50: the fairness module's abuser, requests per second),
 * BENCH_ABUSE (tests,documents,streams,recover,parallel: what the fairness module's abuser does; fewer to see which one hurts),
 * BENCH_KEEP_LOGS (set: keep the processes' logs and the API's CPU profile, and print where).
 */

const MODULES = [
  "reads",
  "deep",
  "profile",
  "feed",
  "sequence",
  "writes",
  "tracing",
  "memory",
  "limiter",
  "latency",
  "throughput",
  "destinations",
  "fairness",
  "export",
] as const;
type ModuleName = (typeof MODULES)[number];

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));
const TENANTS = 200;
const DEEP_TENANTS = 8;
const SANDBOX_TENANTS = 10;
/** Rate limits far above what two cores can serve: the limiter still counts every request. */
const UNLIMITED = "1000000000";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    replica: { type: "boolean", default: false },
    before: { type: "string" },
  },
});
const only = new Set((flags.only?.split(",") ?? MODULES).map((m) => m.trim()));
const unknown = [...only].filter((m) => !(MODULES as readonly string[]).includes(m));
if (unknown.length) throw new Error(`unknown module(s) ${unknown.join(", ")}; choose from ${MODULES.join(", ")}`);
const wants = (m: ModuleName) => only.has(m);
/** The modules that run the --before build beside this one. */
const BEFORE_MODULES: readonly ModuleName[] = ["reads", "writes", "throughput"];
const before = flags.before === undefined ? undefined : resolve(flags.before);
if (before && !BEFORE_MODULES.some(wants)) throw new Error(`--before is used by ${BEFORE_MODULES.join(", ")} only; add one of them to --only`);

const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const quick = flags.quick;
const settings: Settings = {
  connections: envNumber("BENCH_CONNECTIONS", 16),
  seconds: envNumber("BENCH_SECONDS", quick ? 2 : 6),
  // At least two rounds, so contenders alternate (A B C, then B C A) and drift on the machine hits all alike.
  rounds: envNumber("BENCH_ROUNDS", 2),
  warmup: quick ? 1 : 2,
};
// The delivery benchmarks read no orders, and the fairness module only the deep store's first page: alone, they get just
// the stores their tenants need.
const readModules: ModuleName[] = ["reads", "deep", "profile"];
const deliveryOnly = !readModules.some(wants);
/** The export module alone reads one store: the largest store of production, about 133,700 orders (20,000 with --quick). */
const exportOnly = only.size === 1 && wants("export");
const datasetOptions: DatasetOptions = exportOnly
  ? { stores: 2, deepOrders: quick ? 20_000 : 133_700, ordersPerStore: 1 }
  : deliveryOnly
    ? { stores: TENANTS + 1, deepOrders: 100, ordersPerStore: 1 }
    : quick
      ? { stores: 250, deepOrders: 520_000, ordersPerStore: 100 }
      : DEFAULT_DATASET;
const latencySeconds = quick ? 5 : 15;
const throughputSeconds = quick ? 10 : 60;
const throughputBaselineSeconds = quick ? 5 : 10;
const deliveryRate = envNumber("BENCH_DELIVERY_RATE", 9000);
const profileSeconds = quick ? 3 : 8;
const limiterTakes = quick ? 5_000 : 30_000;
const sequenceSeconds = quick ? 2 : 5;
/** Token burst of the memory module: concurrent clients × requests each. */
const tokenBurst = { clients: 200, perClient: quick ? 2 : 5 };
/**
 * The noisy-neighbour module: the victim reads at 50 requests a second; the abuser sends as many as a PRODUCTION
 * Application may by default (RATE_LIMIT_PRODUCTION_APP, 3,000 a minute), which the run's API does not enforce.
 */
const abuse = (process.env.BENCH_ABUSE ?? ABUSE_KINDS.join(",")).split(",").map((k) => k.trim());
const unknownAbuse = abuse.filter((k) => !(ABUSE_KINDS as readonly string[]).includes(k));
if (unknownAbuse.length) throw new Error(`unknown BENCH_ABUSE kind(s) ${unknownAbuse.join(", ")}; choose from ${ABUSE_KINDS.join(", ")}`);
const fairness: FairnessOptions = {
  seconds: quick ? 5 : 20,
  victimRate: 50,
  abuseRate: envNumber("BENCH_ABUSE_RATE", 50),
  abuse: new Set(ABUSE_KINDS.filter((k) => abuse.includes(k))),
};

/** The commit a checkout is at, for the report: /tmp/before names no build once the run is over. */
function checkoutCommit(dir: string): string {
  try {
    return execFileSync("git", ["-C", dir, "log", "-1", "--format=%h %s"], { encoding: "utf8" }).trim().slice(0, 100);
  } catch {
    return "an unknown commit (not a git checkout)";
  }
}

const say = (line: string) => process.stdout.write(`${line}\n`);

let database: BenchDatabase | null = null;
let logDir: string | null = null;
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    await database?.close();
    if (logDir && process.env.BENCH_KEEP_LOGS) say(`logs and CPU profile kept in ${logDir}`);
    else if (logDir) await rm(logDir, { recursive: true, force: true });
  })();
  return cleaning;
}
// A signal must stop our processes and database first.
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    say(`\n${sig}: stopping processes and removing temporary files`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const phase: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await work();
    } finally {
      phase[name] = (performance.now() - t) / 1000;
    }
  };
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  // Checked before the data set is made, which takes minutes.
  if (before) {
    await access(join(before, "dist/cli/start.mjs")).catch(() => {
      throw new Error(`--before ${before}: no dist/cli/start.mjs there; prepare the checkout with test/bench/prepare-before.sh <commit> ${before}`);
    });
  }
  logDir = await mkdtemp(join(tmpdir(), "partner-bench-"));

  database = await timed("database", () => openBenchDatabase({ replication: flags.replica }));
  say(`database: ${database.description}`);
  say(`data set: ${datasetOptions.stores} stores, ${datasetOptions.deepOrders} orders in store 1, ${datasetOptions.ordersPerStore} in each other store`);
  const dataset = await timed("data set", () => generateDataset(database!.url, datasetOptions, say));
  say(
    `  ${Object.entries(dataset.counts)
      .map(([k, v]) => `${k} ${v.toLocaleString("en-US")}`)
      .join(", ")} in ${dataset.seconds.toFixed(0)} s`,
  );

  // Made after the data set is loaded: copying its files is quicker than streaming the whole load's WAL.
  const replica = database.replica ? await timed("replica", () => database!.replica!()) : undefined;
  if (replica) say(`replica: a streaming replica of it (base backup of the loaded data set), ${replica.url.replace(/:[^:@/]*@/, "@")}`);
  const apiEnv: Record<string, string> = {
    DATABASE_URL: database.url,
    HOST: "127.0.0.1",
    PORT: "0",
    PUBLIC_BASE_URL: "http://bench.local",
    LOG_LEVEL: "info",
    DB_POOL_SIZE: "10",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    RATE_LIMIT_SANDBOX_STORE: UNLIMITED,
    RATE_LIMIT_SANDBOX_APP: UNLIMITED,
    RATE_LIMIT_PRODUCTION_STORE: UNLIMITED,
    RATE_LIMIT_PRODUCTION_APP: UNLIMITED,
    // One API process, as `npm start` runs: its counters in memory unless BENCH_RATE_LIMIT_BACKEND names another.
    RATE_LIMIT_BACKEND: process.env.BENCH_RATE_LIMIT_BACKEND ?? "memory",
    ...(process.env.BENCH_REDIS_URL ? { REDIS_URL: process.env.BENCH_REDIS_URL } : {}),
  };
  const api = await startService({ name: "api", ...serviceCommand("api", apiEnv), logDir, ready: /"msg":"listening"/ });
  const ctxBase = await timed("tenants", async () => {
    const regular = dataset.stores.slice(1, 1 + TENANTS);
    const plans: TenantPlan[] = [
      ...regular.map((s) => ({ storeId: s.id, storeCode: s.code, environment: "PRODUCTION" as const })),
      ...Array.from({ length: DEEP_TENANTS }, () => ({ storeId: dataset.deep.id, storeCode: dataset.deep.code, environment: "PRODUCTION" as const })),
      ...(await createSandboxStores(database!.url, SANDBOX_TENANTS)),
    ];
    const { secret, credentials } = await createApplications(database!.url, plans);
    const all = await fetchTokens(api.baseUrl, secret, credentials);
    return {
      clientSecret: secret,
      tenants: all.slice(0, regular.length),
      deepTenants: all.slice(regular.length, regular.length + DEEP_TENANTS),
      sandboxTenants: all.slice(regular.length + DEEP_TENANTS),
    };
  });
  if (before) say(`before: ${before} (${checkoutCommit(before)}), beside this build in ${BEFORE_MODULES.filter(wants).join(", ")}`);
  say(
    `tenants: ${ctxBase.tenants.length} production stores, ${ctxBase.deepTenants.length} Applications on the deep store, ${ctxBase.sandboxTenants.length} sandbox stores, each with its own token`,
  );
  const ctx: BenchContext = {
    databaseUrl: database.url,
    databaseCpuSeconds: database.cpuSeconds,
    replica,
    logDir,
    api,
    apiEnv,
    before,
    dataset,
    ...ctxBase,
    settings,
    say,
  };

  const results: ModuleResult[] = [];
  const profiles: Report["profiles"] = [];
  if (wants("reads")) results.push(await timed("reads", () => benchReads(ctx)));
  if (wants("reads") && ctx.replica) results.push(await timed("reads on a replica", () => benchReplicaReads(ctx)));
  if (wants("deep")) results.push(await timed("deep page", () => benchDeepPage(ctx)));
  if (wants("profile")) {
    await timed("profile", async () => {
      for (const route of readRoutes(ctx, await someOrders(ctx))) {
        const { top, byArea } = await profileApi(ctx, route, profileSeconds);
        profiles.push({ route: route.name, top, byArea });
      }
    });
  }
  if (wants("feed")) results.push(await timed("event feed", () => benchEventFeed(ctx)));
  if (wants("sequence")) results.push(await timed("sequence trigger", () => benchSequenceWrite(ctx, sequenceSeconds)));
  if (wants("writes")) results.push(await timed("writes", async () => (await import("./writes.js")).benchWrites(ctx)));
  if (wants("tracing")) results.push(await timed("tracing", async () => (await import("./tracing.js")).benchTracing(ctx)));
  if (wants("memory")) results.push(await timed("memory", () => benchMemory(ctx, tokenBurst.clients, tokenBurst.perClient)));
  if (wants("limiter")) results.push(await timed("rate-limit take", () => benchLimiter(ctx, limiterTakes)));
  if (wants("latency") || wants("throughput")) {
    const receiver = await startReceiver();
    try {
      // The queue baselines first: the service's worker, once started, would treat their locked jobs as abandoned.
      const queueLatencyRun = wants("latency") ? await timed("queue latency", () => queueLatency(ctx, receiver, latencySeconds)) : null;
      const queueThroughputRun = wants("throughput")
        ? await timed("queue throughput", () => queueThroughput(ctx, receiver, throughputBaselineSeconds, deliveryRate))
        : null;
      const setup = await prepareDeliveries(ctx, receiver);
      if (queueLatencyRun) results.push(await timed("delivery latency", () => benchDeliveryLatency(ctx, receiver, setup, latencySeconds, queueLatencyRun)));
      if (queueThroughputRun)
        results.push(
          await timed("delivery throughput", () => benchDeliveryThroughput(ctx, receiver, setup, throughputSeconds, deliveryRate, queueThroughputRun)),
        );
      if (setup.available) await setup.worker.stop();
      if (receiver.badSignatures || receiver.duplicates) {
        results.push({
          verdicts: [],
          measurements: [],
          notes: [`receiver: ${receiver.badSignatures} deliveries with a bad signature, ${receiver.duplicates} duplicates`],
        });
      }
    } finally {
      await receiver.close();
    }
  }
  // After the delivery modules, whose worker is stopped by then: two workers would share the jobs.
  if (wants("destinations")) results.push(await timed("destinations", () => benchDestinations(ctx, settings.seconds, deliveryRate)));
  if (wants("export")) results.push(await timed("export", () => benchExport(ctx)));
  // Last: the abuse may leave the API process larger, or gone, for any module after it.
  if (wants("fairness")) results.push(await timed("fairness", () => benchFairness(ctx, fairness)));
  results.push(peakRssVerdict());
  phase.total = (performance.now() - t0) / 1000;

  const report: Report = {
    startedAt,
    machine: { cpus: availableParallelism(), node: process.versions.node, database: database.description },
    dataset: {
      stores: datasetOptions.stores,
      ...dataset.counts,
      "orders in the deep store": dataset.deep.orders,
      "generated in (s)": Math.round(dataset.seconds),
    },
    settings: {
      ...settings,
      tenants: ctx.tenants.length,
      "API LOG_LEVEL": apiEnv.LOG_LEVEL,
      "DB_POOL_SIZE per process": apiEnv.DB_POOL_SIZE,
      ...(quick ? { mode: "quick (not for figures)" } : {}),
      ...(before ? { "before build": `${before} at ${checkoutCommit(before)}` } : {}),
    },
    verdicts: results.flatMap((r) => r.verdicts),
    measurements: results.flatMap((r) => r.measurements),
    profiles,
    notes: results.flatMap((r) => r.notes),
    seconds: phase,
  };
  const files = await writeReport(RESULTS_DIR, report);
  say(`\n${verdictTable(report.verdicts)}\n`);
  if (report.notes.length) say(report.notes.map((n) => `note: ${n}`).join("\n"));
  say(`\n${markdown(report).split("\n").length} lines written to ${files.join(" and ")}; total ${phase.total.toFixed(0)} s`);
}

main()
  .catch(async (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    if (logDir) {
      for (const name of [
        "api",
        "worker",
        "api-before",
        "worker-before",
        "fairness-worker",
        "baseline-pg-sql",
        "baseline-pg-js",
        "baseline-fastify-prisma",
        "baseline-prisma-route",
        "api-profiled-list",
        "api-profiled-detail",
        "queue-baseline",
        "destinations-worker",
      ]) {
        const text = await readFile(join(logDir, `${name}.log`), "utf8").catch(() => "");
        if (text) process.stderr.write(`--- last lines of ${name}.log\n${text.split("\n").slice(-15).join("\n")}\n`);
      }
    }
    process.exitCode = 1;
  })
  // Exit even if a timer or socket of a failed module is still open.
  .finally(() => cleanup().finally(() => process.exit()));
