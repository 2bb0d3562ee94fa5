import http from "node:http";
import net from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import { percentile } from "./lib/load.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { fmt, type Verdict } from "./lib/report.js";
import { createApplications, createSandboxStores, fetchTokens, type BenchTenant } from "./lib/tenants.js";
import { startSilentReceiver } from "../webhooks/receiver.js";

/**
 * Noisy neighbour: one Application reads at a steady rate while another abuses the API, against the same reads with
 * nobody abusing, in one invocation. The victim is an Application on the deep store (PRODUCTION); the abuser is an
 * Application of its own on a SANDBOX store of its own (webhook endpoints on 127.0.0.1 need SANDBOX). While the
 * victim's abused window runs, the abuser, at about `abuseRate` requests a second in all (each kind its share; `abuse`
 * picks the kinds):
 * - keeps up to 10 POST /public/v1/webhooks/{id}/test in flight against a receiver that accepts the request and never
 *   answers (past WEBHOOK_TEST_CONCURRENCY the service answers 429);
 * - sends ~60 KB GraphQL documents of ~1,500 aliased `orders(limit: 100)`, each text distinct (refused for their cost,
 *   their tokens or their size: 400, 413, or 200 with `errors` as GraphQL over HTTP answers application/json);
 * - holds 50 `storeEvents` streams (Server-Sent Events), reopening any that is refused or ends;
 * - calls POST /public/v1/webhooks/{id}/recover, one at a time, on an endpoint with 1,000 dead-lettered deliveries
 *   whose URL refuses connections, so the worker re-sends them at the endpoint's pace and they fail again;
 * - reads its orders as a parallel sync client does: a burst of 20 at once, then 20 a second with up to 20 in flight
 *   (within its per-minute limits, every one should be served: 200).
 * The API process's resident memory is sampled every second throughout. Goals are verdicts, never a failed run.
 */

/** The abuser's kinds of abuse, as BENCH_ABUSE names them. */
export const ABUSE_KINDS = ["tests", "documents", "streams", "recover", "parallel"] as const;
export type AbuseKind = (typeof ABUSE_KINDS)[number];

export interface FairnessOptions {
  /** Seconds of each measured window (quiet, then abused). */
  seconds: number;
  /** The victim's requests per second, half list, half detail. */
  victimRate: number;
  /** The abuser's requests per second over all its kinds (streams held open are not counted again). */
  abuseRate: number;
  /** Which kinds the abuser runs (all by default; fewer to see which one hurts); each keeps its share of the rate. */
  abuse: ReadonlySet<AbuseKind>;
}

const HEAP_BUDGET_MIB = 256;
const STREAMS = 50;
const TESTS_IN_FLIGHT = 10;
const DOCUMENTS_IN_FLIGHT = 4;
const PARALLEL_IN_FLIGHT = 20;
const FAILED_DELIVERIES = 1000;
const DOCUMENT_BYTES = 60_000;
/** Seconds the abuser runs before the victim's abused window, so streams are open and tests held when it starts. */
const RAMP_SECONDS = 3;
const VICTIM_TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Counts = Map<string, number>;
const bump = (counts: Counts, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
const countsText = (counts: Counts) =>
  counts.size === 0
    ? "none"
    : [...counts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => `${fmt.int(n)}× ${k}`)
        .join(", ");

interface VictimRun {
  latencies: number[];
  errors: number;
  statuses: Counts;
  /**
   * CPU seconds the API, the worker and the database server (when measured) used during the window, and this
   * process's own event-loop delay (the victim's clock runs here: a late loop would show as the API's latency).
   */
  cpu: string;
}

/** One GET on the victim's own keep-alive agent: its latency to the last body byte, and its status (0: no answer). */
function timedGet(agent: http.Agent, baseUrl: URL, path: string, token: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      { host: baseUrl.hostname, port: baseUrl.port, path, agent, timeout: VICTIM_TIMEOUT_MS, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
        res.on("error", () => resolve({ status: 0, ms: performance.now() - t }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => resolve({ status: 0, ms: performance.now() - t }));
    req.end();
  });
}

/**
 * Open loop: requests leave on schedule whether or not earlier ones have been answered, so a slow server shows as
 * latency rather than as fewer requests.
 */
async function victimLoad(baseUrl: string, paths: readonly string[], token: string, rate: number, seconds: number): Promise<Omit<VictimRun, "cpu">> {
  const agent = new http.Agent({ keepAlive: true });
  const url = new URL(baseUrl);
  const run: Omit<VictimRun, "cpu"> = { latencies: [], errors: 0, statuses: new Map() };
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(
      timedGet(agent, url, paths[i % paths.length], token).then(({ status, ms }) => {
        bump(run.statuses, status === 0 ? "no answer" : String(status));
        if (status >= 200 && status < 300) run.latencies.push(ms);
        else run.errors++;
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  run.latencies.sort((a, b) => a - b);
  return run;
}

/**
 * A paced stream of one kind of abuse: a request every 1/rate s while fewer than `maxInFlight` are in flight (`burst`
 * leave at once first). `send` records the request's outcome and resolves when its slot frees (a stream: when it
 * ends).
 */
function abuse(rate: number, maxInFlight: number, burst: number, signal: AbortSignal, send: (record: (outcome: string) => void) => Promise<void>) {
  const outcomes: Counts = new Map();
  const record = (outcome: string) => bump(outcomes, outcome);
  const inFlight = new Set<Promise<void>>();
  const launch = () => {
    const p = send(record).catch((e: unknown) => {
      // fetch names every failure to connect or to read an answer "fetch failed": what it means here is no answer.
      if (!signal.aborted) record(e instanceof Error && e.message !== "fetch failed" ? `no answer (${e.message})` : "no answer");
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  const aborted = new Promise((r) => signal.addEventListener("abort", r, { once: true }));
  const done = (async () => {
    for (let i = 0; i < burst; i++) launch();
    const t0 = performance.now();
    for (let i = 1; !signal.aborted; i++) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
      if (signal.aborted) break;
      if (inFlight.size >= maxInFlight) await Promise.race([...inFlight, aborted]);
      if (!signal.aborted && inFlight.size < maxInFlight) launch();
    }
    await Promise.allSettled([...inFlight]);
  })();
  return { outcomes, done };
}

/** A port nothing listens on: connections to it are refused at once. */
async function refusingPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no TCP address for the refusing port");
  return address.port;
}

/**
 * `n` dead letters of the endpoint, each with its event and its ten failed attempts, written directly as the webhook
 * tests write them: failing them through the worker would take the endpoint's pace (50 a second) times n.
 */
async function seedDeadLetters(databaseUrl: string, storeId: string, endpointId: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `with ev as (
         insert into "Event" (id, "storeId", type, data)
         select gen_random_uuid(), $1::uuid, 'order.created',
           jsonb_build_object('orderId', gen_random_uuid(), 'orderNumber', 1000 + i, 'total', 42.5, 'type', 'DELIVERY', 'status', 'PENDING')
         from generate_series(1, $3::int) i returning id
       ), d as (
         insert into "WebhookDelivery" (id, "eventId", "endpointId", "applicationId", "storeId", "eventType", status, attempts, "updatedAt")
         select gen_random_uuid(), ev.id, e.id, e."applicationId", e."storeId", 'order.created', 'DEAD_LETTER', 10, now()
         from ev, "WebhookEndpoint" e where e.id = $2::uuid
         returning id
       ), a as (
         insert into "WebhookAttempt" (id, "deliveryId", number, trigger, succeeded, "httpStatus", "durationMs", error, "requestHeaders", "requestBody", "startedAt")
         select gen_random_uuid(), d.id, k, 'SCHEDULED', false, null, 1, 'connect ECONNREFUSED', '{}'::jsonb, '', now() from d, generate_series(1, 10) k
       )
       select 1 from d`,
      [storeId, endpointId, n],
    );
    if (rowCount !== n) throw new Error(`seeding dead letters: ${rowCount} of ${n}`);
  } finally {
    await client.end();
  }
}

/** The abuser: an Application of its own, granted on a SANDBOX store of its own. */
async function abuserTenant(ctx: BenchContext): Promise<BenchTenant> {
  const plans = await createSandboxStores(ctx.databaseUrl, 1, "BENCHABUSE");
  const { secret, credentials } = await createApplications(ctx.databaseUrl, plans);
  const [tenant] = await fetchTokens(ctx.api.baseUrl, secret, credentials);
  return tenant;
}

async function registerEndpoint(ctx: BenchContext, tenant: BenchTenant, url: string): Promise<string> {
  const res = await fetch(`${ctx.api.baseUrl}/public/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
    body: JSON.stringify({ url, events: ["order.created"] }),
  });
  const text = await res.text();
  const id = res.status === 201 ? field(JSON.parse(text), "id") : undefined;
  if (typeof id !== "string") throw new Error(`registering a webhook endpoint: ${res.status} ${text}`);
  return id;
}

/** A GraphQL document of about DOCUMENT_BYTES whose text no earlier one had: many aliases of a costly list. */
function largeDocument(n: number): string {
  const fields: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < DOCUMENT_BYTES; i++) {
    const field = `d${n}_${i}: orders(limit: 100) { data { id } }`;
    fields.push(field);
    bytes += field.length + 1;
  }
  return `query Abuse${n} {\n${fields.join("\n")}\n}`;
}

/**
 * What a GraphQL answer says beyond its status: a refusal answers 200 with `errors` when the client accepts
 * application/json, so the first error's code (or problem-details code) tells a refusal from an executed document.
 */
function graphqlOutcome(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "(not JSON)";
  }
  const errors = field(body, "errors");
  if (Array.isArray(errors)) {
    const code = field(field(errors[0], "extensions"), "code");
    return typeof code === "string" ? code : "errors";
  }
  const problem = field(body, "code");
  return typeof problem === "string" ? problem : "data";
}

/** A property of a parsed JSON value, or undefined when it is not an object or lacks it. */
function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value ? Reflect.get(value, key) : undefined;
}

const STORE_EVENTS = "subscription { storeEvents { eventId eventType sequence } }";

/** The verdicts' victim summary. */
const victimText = (r: VictimRun) =>
  `p50 ${fmt.ms(percentile(r.latencies, 50))}, p99 ${fmt.ms(percentile(r.latencies, 99))}, ${fmt.int(r.latencies.length)} answered 2xx, ${r.errors} errors`;

export async function benchFairness(ctx: BenchContext, opts: FairnessOptions): Promise<ModuleResult> {
  const { api } = ctx;
  const victim = ctx.deepTenants[0];
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  const orderIds = await client
    .query<{ id: string }>(`select id from "Order" where "storeId" = $1 order by "createdAt" desc limit 20`, [victim.storeId])
    .finally(() => client.end());
  if (orderIds.rows.length === 0) throw new Error("fairness: the deep store has no orders for the victim to read");
  // Half the victim's requests read a page, half one order.
  const victimPaths = orderIds.rows.flatMap((o) => ["/public/v1/orders?limit=20", `/public/v1/orders/${o.id}`]);

  const abuser = await abuserTenant(ctx);
  const silent = await startSilentReceiver();
  const testEndpoint = await registerEndpoint(ctx, abuser, silent.url("/never-answers"));
  const recoverEndpoint = await registerEndpoint(ctx, abuser, `http://127.0.0.1:${await refusingPort()}/refuses`);
  const since = new Date(Date.now() - 60_000).toISOString();
  await seedDeadLetters(ctx.databaseUrl, abuser.storeId, recoverEndpoint, FAILED_DELIVERIES);
  // The worker re-sends what recover queues; it runs in both windows, so the quiet one has it too.
  const worker = await startService({ name: "fairness-worker", ...serviceCommand("worker", ctx.apiEnv), logDir: ctx.logDir, ready: /"msg":"worker started"/ });

  // Where the machine's time went in a window: the victim's latency alone does not say which process took it.
  const measured = async (seconds: number): Promise<VictimRun> => {
    const [apiBefore, workerBefore, databaseBefore] = [api.cpuSeconds(), worker.cpuSeconds(), ctx.databaseCpuSeconds?.() ?? 0];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const run = await victimLoad(api.baseUrl, victimPaths, victim.token, opts.victimRate, seconds);
    loop.disable();
    const database = ctx.databaseCpuSeconds ? `, database ${(ctx.databaseCpuSeconds() - databaseBefore).toFixed(1)}` : "";
    const cpu = `CPU s: API ${(api.cpuSeconds() - apiBefore).toFixed(1)}, worker ${(worker.cpuSeconds() - workerBefore).toFixed(1)}${database}; the bench's event-loop delay p99 ${fmt.ms(loop.percentile(99) / 1e6)}, max ${fmt.ms(loop.max / 1e6)}`;
    return { ...run, cpu };
  };
  const rss: { quiet: number[]; abused: number[] } = { quiet: [], abused: [] };
  let phase: keyof typeof rss = "quiet";
  const sampler = setInterval(() => rss[phase].push(api.rssMiB()), 1000);
  const controller = new AbortController();
  let abused: VictimRun;
  let quiet: VictimRun;
  const kinds: { name: string; outcomes: Counts; done: Promise<void> }[] = [];
  let recovered = 0;
  try {
    await victimLoad(api.baseUrl, victimPaths, victim.token, opts.victimRate, ctx.settings.warmup);
    ctx.say(`fairness: victim ${opts.victimRate} req/s for ${opts.seconds} s, quiet`);
    quiet = await measured(opts.seconds);
    ctx.say(`  ${victimText(quiet)}; ${quiet.cpu}`);

    phase = "abused";
    const { signal } = controller;
    const auth = { authorization: `Bearer ${abuser.token}` };
    const json = { ...auth, "content-type": "application/json" };
    const post = async (path: string, body: string, headers: Record<string, string>) => {
      const res = await fetch(`${api.baseUrl}${path}`, { method: "POST", headers, body, signal });
      return { status: res.status, text: await res.text() };
    };
    const share = (fraction: number) => Math.max(1, opts.abuseRate * fraction);
    if (opts.abuse.has("tests"))
      kinds.push({
        name: `webhook tests (silent receiver, ≤ ${TESTS_IN_FLIGHT} in flight)`,
        ...abuse(share(0.4), TESTS_IN_FLIGHT, TESTS_IN_FLIGHT, signal, async (record) => {
          record(String((await post(`/public/v1/webhooks/${testEndpoint}/test`, "", auth)).status));
        }),
      });
    let documents = 0;
    if (opts.abuse.has("documents"))
      kinds.push({
        name: `~${DOCUMENT_BYTES / 1000} KB distinct GraphQL documents (≤ ${DOCUMENTS_IN_FLIGHT} in flight)`,
        ...abuse(share(0.4), DOCUMENTS_IN_FLIGHT, 0, signal, async (record) => {
          const res = await post("/graphql", JSON.stringify({ query: largeDocument(documents++) }), json);
          record(`${res.status} ${graphqlOutcome(res.text)}`);
        }),
      });
    if (opts.abuse.has("streams"))
      kinds.push({
        name: `storeEvents streams (${STREAMS} held)`,
        ...abuse(share(0.1), STREAMS, STREAMS, signal, async (record) => {
          const res = await fetch(`${api.baseUrl}/graphql`, {
            method: "POST",
            headers: { ...json, accept: "text/event-stream" },
            body: JSON.stringify({ query: STORE_EVENTS }),
            signal,
          });
          record(String(res.status));
          // Held until the server ends it or the run aborts it; a refused one's body is read and the slot frees.
          const ended = await res.arrayBuffer().then(
            () => "ended by the server",
            () => "connection lost",
          );
          if (res.ok && !signal.aborted) record(`stream ${ended}`);
        }),
      });
    if (opts.abuse.has("recover"))
      kinds.push({
        name: `recover of ${fmt.int(FAILED_DELIVERIES)} dead letters (one at a time)`,
        ...abuse(share(0.1), 1, 0, signal, async (record) => {
          const res = await post(`/public/v1/webhooks/${recoverEndpoint}/recover`, JSON.stringify({ since }), json);
          const body: unknown = res.status === 202 ? JSON.parse(res.text) : null;
          const count = field(body, "count");
          if (typeof count === "number") recovered += count;
          record(body ? `${res.status} hasMore=${String(field(body, "hasMore"))}` : String(res.status));
        }),
      });
    if (opts.abuse.has("parallel"))
      kinds.push({
        name: `parallel reads (≤ ${PARALLEL_IN_FLIGHT} in flight)`,
        ...abuse(share(0.4), PARALLEL_IN_FLIGHT, PARALLEL_IN_FLIGHT, signal, async (record) => {
          const res = await fetch(`${api.baseUrl}/public/v1/orders?limit=20`, { headers: auth, signal });
          const code = res.ok ? "" : ` ${String(field(await res.json(), "code"))}`;
          if (res.ok) await res.arrayBuffer();
          record(`${res.status}${code}`);
        }),
      });
    await sleep(RAMP_SECONDS * 1000);
    ctx.say(
      `fairness: victim ${opts.victimRate} req/s for ${opts.seconds} s while the abuser runs ${[...opts.abuse].join(", ")} (~${opts.abuseRate} req/s in all)`,
    );
    abused = await measured(opts.seconds);
    ctx.say(`  ${victimText(abused)}; ${abused.cpu}`);
  } finally {
    controller.abort();
    await Promise.all(kinds.map((k) => k.done));
    clearInterval(sampler);
    silent.cut();
    await silent.close();
    await worker.stop();
  }

  const { exitCode, signalCode } = api.child;
  const apiExited = exitCode !== null || signalCode !== null;
  const abuserLines = kinds.map((k) => `${k.name}: ${countsText(k.outcomes)}`);
  for (const line of abuserLines) ctx.say(`  abuser ${line}`);
  ctx.say(`  recover queued ${fmt.int(recovered)} re-sends; the silent receiver got ${fmt.int(silent.received())} tests`);
  // A process that is gone reads 0.
  const series = (samples: number[]) => samples.map((s) => (s === 0 ? "–" : s.toFixed(0))).join(" ");
  const maxRss = Math.max(0, ...rss.abused);
  ctx.say(`  API RSS (MiB, one sample a second) quiet: ${series(rss.quiet)}; abused: ${series(rss.abused)}`);

  const q99 = percentile(quiet.latencies, 99);
  const a99 = percentile(abused.latencies, 99);
  const ratio = a99 / q99;
  const against = `quiet run in the same invocation: ${victimText(quiet)}`;
  const verdicts: Verdict[] = [
    {
      benchmark: `Noisy neighbour: victim errors at ${opts.victimRate} req/s while another Application abuses`,
      figure: `${abused.errors} of ${fmt.int(abused.latencies.length + abused.errors)} (${countsText(abused.statuses)})`,
      against,
      value: abused.errors,
      goal: "0",
      pass: abused.errors === 0,
    },
    {
      benchmark: "Noisy neighbour: victim p99 abused / quiet",
      figure: `${Number.isFinite(ratio) ? fmt.ratio(ratio) : "n/a"} (abused: ${victimText(abused)})`,
      against,
      value: Number.isFinite(ratio) ? ratio : null,
      goal: "≤ 2×",
      pass: Number.isFinite(ratio) ? ratio <= 2 : null,
    },
    {
      benchmark: "Noisy neighbour: API resident memory under abuse",
      figure: `max ${maxRss.toFixed(0)} MiB sampled each second (quiet max ${Math.max(0, ...rss.quiet).toFixed(0)} MiB)${apiExited ? `; the API process EXITED (${signalCode ?? `code ${exitCode}`})` : ""}`,
      against: `npm start's heap budget, --max-old-space-size=${HEAP_BUDGET_MIB}`,
      value: maxRss,
      goal: `≤ ${HEAP_BUDGET_MIB} MiB`,
      pass: !apiExited && maxRss <= HEAP_BUDGET_MIB,
    },
  ];
  return {
    verdicts,
    measurements: [],
    notes: [
      ...abuserLines.map((l) => `fairness abuser, ${l}`),
      `fairness: ${opts.seconds} s windows, quiet ${quiet.cpu}; abused ${abused.cpu}`,
      `fairness: recover queued ${fmt.int(recovered)} re-sends of ${fmt.int(FAILED_DELIVERIES)} dead letters`,
      `fairness: API RSS (MiB, one sample a second), quiet: ${series(rss.quiet)}; abused (from ${RAMP_SECONDS} s before the window): ${series(rss.abused)}`,
    ],
  };
}
