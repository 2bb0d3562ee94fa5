import { randomUUID } from "node:crypto";
import autocannon from "autocannon";
import pg from "pg";
import { beforeOf, startBefore, type BenchContext, type ModuleResult } from "./context.js";
import { summarize, type LoadResult, type Run } from "./lib/load.js";
import { fmt, type Measurement, type Verdict } from "./lib/report.js";
import { createApplications, createSandboxStores, fetchTokens, type BenchTenant } from "./lib/tenants.js";
import type { Service } from "./lib/processes.js";

/**
 * The two writes partners make most, through the full stack, each with an Idempotency-Key (so the record commits
 * with the change, as a careful partner's write does): POST /public/v1/sandbox/orders, the seven scenarios in
 * turn, then PATCH /public/v1/orders/{id}/status moving the DELIVERY orders it made along their lifecycle.
 * Reported as CPU per write, the API process's and the database server's from /proc (robust on a busy machine),
 * and writes/s, p50 and p99. Runs on sandbox stores of its own, and removes the fan-out jobs its events queued
 * (no worker runs here), so the delivery benchmarks start on an empty queue. With --before, the API of another build
 * takes the same loads in turn on the same database, for a before/after of a change in one run.
 */

const STORES = 24;
const SCENARIOS = ["delivery", "pickup", "scheduled", "cash", "online_payment", "with_discount", "cancelled"] as const;
/** The moves of a DELIVERY order that emit one event each, in lifecycle order. */
export const MOVES = ["CONFIRMED", "PREPARING", "READY", "DISPATCHED"] as const;
/** Unmeasured writes per API process and route first. */
const WARMUP_WRITES = 300;

/**
 * The CPU per write (API + database, ms) before the write levers (commit de05ca4), measured alone with this
 * module on the 2-core machine at a load average of about 8: the goal is half of it. `--before` with a checkout of
 * that commit prints the ratio of the same run too, which a busy machine makes the fairer comparison.
 */
const BEFORE = { "POST /public/v1/sandbox/orders": 13.9, "PATCH /public/v1/orders/{id}/status": 9.69 } as const;
type RouteName = keyof typeof BEFORE;
const THIS_BUILD = "service";
const BEFORE_BUILD = beforeOf(THIS_BUILD);

export const cpuPerWrite = (r: LoadResult) => (r.cpuMsPerRequest ?? Number.NaN) + (r.databaseCpuMsPerRequest ?? Number.NaN);

export interface WriteRequest {
  method: "POST" | "PATCH";
  path: string;
  token: string;
  body: string;
}

/** Closed-loop load as runLoad, for writes: each request its own body and a fresh Idempotency-Key. */
function runWrites(baseUrl: string, connections: number, length: { duration: number } | { amount: number }, next: () => WriteRequest): Promise<Run> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections,
        ...length,
        timeout: 10,
        requests: [
          {
            setupRequest: (req) => {
              const w = next();
              return {
                ...req,
                method: w.method,
                path: w.path,
                body: w.body,
                headers: { ...req.headers, authorization: `Bearer ${w.token}`, "content-type": "application/json", "idempotency-key": randomUUID() },
              };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve({ latencies, seconds: result.duration, failures: result.non2xx + result.errors })),
    );
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** An API process taking the write load: this build's, or the --before build's. */
export interface Writer {
  name: string;
  service: Service;
}

/**
 * The writers take turns, round after round (who goes first rotating), so drift on the machine hits all alike:
 * on a busy machine the CPU per write of every process rises with the load of its neighbours.
 */
export async function measure(ctx: BenchContext, writers: readonly Writer[], next: () => WriteRequest): Promise<Map<string, LoadResult>> {
  const { connections, seconds, rounds } = ctx.settings;
  // By count, not time: on a busy machine a few seconds may be too few writes to get the JIT going.
  for (const w of writers) await runWrites(w.service.baseUrl, connections, { amount: WARMUP_WRITES }, next);
  const runs = new Map<string, Run[]>(writers.map((w) => [w.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const w of writers.map((_, i) => writers[(i + r) % writers.length])) {
      const cpuBefore = w.service.cpuSeconds();
      const databaseCpuBefore = ctx.databaseCpuSeconds?.();
      const run = await runWrites(w.service.baseUrl, connections, { duration: seconds }, next);
      run.cpuSeconds = w.service.cpuSeconds() - cpuBefore;
      if (ctx.databaseCpuSeconds && databaseCpuBefore !== undefined) run.databaseCpuSeconds = ctx.databaseCpuSeconds() - databaseCpuBefore;
      runs.get(w.name)?.push(run);
    }
  }
  return new Map([...runs].map(([name, list]) => [name, summarize(list)]));
}

/** PENDING DELIVERY orders of the tenants' stores, one list per store. */
export async function pendingDeliveries(client: pg.Client, tenants: readonly BenchTenant[]): Promise<{ id: string; token: string }[]> {
  const { rows } = await client.query<{ id: string; storeId: string }>(
    `select id, "storeId" from "Order" where "storeId" = any($1::uuid[]) and status = 'PENDING' and type = 'DELIVERY' order by "createdAt"`,
    [tenants.map((t) => t.storeId)],
  );
  const tokens = new Map(tenants.map((t) => [t.storeId, t.token]));
  return rows.map((r) => ({ id: r.id, token: tokens.get(r.storeId) ?? "" }));
}

/** Creates `count` more orders through the API, a few at a time, for the status changes to move. */
export async function topUp(ctx: BenchContext, tenants: readonly BenchTenant[], count: number): Promise<void> {
  let made = 0;
  const worker = async () => {
    while (made < count) {
      const t = tenants[made++ % tenants.length];
      const res = await fetch(`${ctx.api.baseUrl}/public/v1/sandbox/orders`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
        body: JSON.stringify({ scenario: "cash" }),
      });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** This build's API, and the --before build's when there is one. */
async function writers(ctx: BenchContext): Promise<Writer[]> {
  const ours = { name: THIS_BUILD, service: ctx.api };
  return ctx.before ? [ours, { name: BEFORE_BUILD, service: await startBefore(ctx, ctx.before, "api") }] : [ours];
}

/**
 * Status changes of `wanted` pending DELIVERY orders' moves (topped up with sandbox orders first when too few are
 * pending), each order through its lifecycle in turn: the next request's body on each call.
 */
export async function statusChanges(ctx: BenchContext, client: pg.Client, tenants: readonly BenchTenant[], wanted: number): Promise<() => WriteRequest> {
  let orders = await pendingDeliveries(client, tenants);
  if (orders.length < wanted) {
    await topUp(ctx, tenants, wanted - orders.length);
    orders = await pendingDeliveries(client, tenants);
  }
  let j = 0;
  return () => {
    const n = j++;
    const order = orders[n % orders.length];
    const status = MOVES[Math.floor(n / orders.length)] ?? "DELIVERED";
    return { method: "PATCH", path: `/public/v1/orders/${order.id}/status`, token: order.token, body: JSON.stringify({ status }) };
  };
}

export async function benchWrites(ctx: BenchContext): Promise<ModuleResult> {
  const plans = await createSandboxStores(ctx.databaseUrl, STORES, "BENCHWRT");
  const { secret, credentials } = await createApplications(ctx.databaseUrl, plans);
  const tenants = await fetchTokens(ctx.api.baseUrl, secret, credentials);
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  const apis = await writers(ctx);
  const results = new Map<RouteName, Map<string, LoadResult>>();
  try {
    // A sandbox store's first order seeds its catalog: not the write being measured.
    await topUp(ctx, tenants, tenants.length);

    let i = 0;
    const post = (): WriteRequest => {
      const n = i++;
      return {
        method: "POST",
        path: "/public/v1/sandbox/orders",
        token: tenants[n % tenants.length].token,
        body: JSON.stringify({ scenario: SCENARIOS[Math.floor(n / tenants.length) % SCENARIOS.length] }),
      };
    };
    const created = await measure(ctx, apis, post);
    results.set("POST /public/v1/sandbox/orders", created);

    // Each order takes MOVES in turn, one pass over all orders per move, so an order's next move is sent long
    // after its last one answered. Enough orders that the passes outlast the load at well above the POST rate.
    const { seconds, rounds } = ctx.settings;
    const postRate = Math.max(...[...created.values()].map((r) => r.rps));
    const wanted = Math.ceil((apis.length * (WARMUP_WRITES + 4 * postRate * rounds * seconds)) / MOVES.length);
    const patch = await statusChanges(ctx, client, tenants, wanted);
    results.set("PATCH /public/v1/orders/{id}/status", await measure(ctx, apis, patch));
  } finally {
    // No worker runs during this module: the fan-out jobs of its events would only delay the delivery benchmarks.
    await client.query(
      `select graphile_worker.complete_jobs(array(select id from graphile_worker.jobs where task_identifier = 'fan_out_event' and attempts = 0))`,
    );
    await client.end();
    await Promise.all(apis.filter((w) => w.service !== ctx.api).map((w) => w.service.stop()));
  }

  const measurements: Measurement[] = [];
  const verdicts: Verdict[] = [];
  const notes: string[] = [];
  for (const [route, byWriter] of results) {
    for (const [writer, r] of byWriter) {
      measurements.push({ benchmark: `write ${route}`, server: writer, ...r });
      ctx.say(
        `  ${route}, ${writer}: ${fmt.int(r.rps)} writes/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, CPU ${fmt.ms(cpuPerWrite(r))}/write (API ${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)} + database ${fmt.ms(r.databaseCpuMsPerRequest ?? Number.NaN)}), failures ${r.failures}`,
      );
    }
    const r = byWriter.get(THIS_BUILD);
    if (!r) continue;
    const total = cpuPerWrite(r);
    verdicts.push({
      benchmark: `${route}, CPU per write (API + database)`,
      figure: `${fmt.ms(total)} (API ${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)} + database ${fmt.ms(r.databaseCpuMsPerRequest ?? Number.NaN)}; ${fmt.int(r.rps)} writes/s)`,
      against: `before the write levers, ${fmt.ms(BEFORE[route])}`,
      value: total,
      goal: `≤ ${fmt.ms(BEFORE[route] / 2)}`,
      pass: Number.isFinite(total) && r.failures === 0 ? total <= BEFORE[route] / 2 : null,
    });
    // The --before build is whichever commit was asked for, so its figure gets a ratio, not a goal.
    const then = byWriter.get(BEFORE_BUILD);
    if (then)
      notes.push(
        `${route}: this build's CPU per write is ${fmt.ratio(total / cpuPerWrite(then))} the build before's (${fmt.ms(total)} vs ${fmt.ms(cpuPerWrite(then))}; API ${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)} vs ${fmt.ms(then.cpuMsPerRequest ?? Number.NaN)}; ${fmt.int(r.rps)} vs ${fmt.int(then.rps)} writes/s; p50 ${fmt.ms(r.p50)} vs ${fmt.ms(then.p50)}; failures ${r.failures} vs ${then.failures})`,
      );
  }
  return { verdicts, measurements, notes };
}
