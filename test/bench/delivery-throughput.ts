import pg from "pg";
import { beforeOf, startBefore, type BenchContext, type ModuleResult } from "./context.js";
import { FAN_OUT_TASK } from "../../src/platform/events/outbox.js";
import { fmt } from "./lib/report.js";
import type { Receiver } from "./lib/receiver.js";
import { serviceCommand, startService, type Service } from "./lib/processes.js";
import { BARE_TABLES, QUEUE_BASELINE_PATH, QUEUE_BASELINE_TASK, withBareLoop, withQueueBaseline, type DeliverySetup } from "./lib/webhooks.js";

/**
 * Sustained deliveries per second of one worker process: events arrive at a steady rate above the goal for
 * `seconds`, each fanning out to one endpoint; the figure is what the receiver got per second in that window.
 * Then the run waits for the backlog to clear: what arrives after the window is late, not lost, and only what
 * never arrives within DRAIN_LIMIT_SECONDS counts as lost. Every 10 s of the window is also reported on its own
 * (rate, CPU per delivery, backlog), so a run that slows down shows when and where. Side by side, for scale: the
 * queue baseline (graphile-worker alone, one job per event that signs and POSTs) under the same offered rate; and, in
 * the same run, over the same endpoints and receiver with the service's worker idle, the bare delivery loop
 * (baselines/bare-delivery-loop.ts: SKIP LOCKED fetch, sign, POST over keep-alive, record), which the goal compares to.
 *
 * With --before, this build's worker and the build before's then take turns over more windows (see versusBefore).
 *
 * The producer writes what emitEvent writes (the event row, and its fan_out_event job with the same job key) in
 * one statement per 50 ms tick: one Prisma transaction per event would cost the 2 shared cores more than the
 * worker under test.
 */

const TICK_MS = 50;
const SLICE_MS = 10_000;
/** Long enough for a worker at half the goal to clear a minute's backlog; what is still missing then is lost. */
const DRAIN_LIMIT_SECONDS = 120;
const GOAL = "≥ 8,000/s and ≥ 0.9x of the bare loop's rate, zero lost, no duplicate";
const GOAL_RATE = 8000;
const GOAL_RATIO = 0.9;

/** The tick's events, inserted as the API's transactions insert them; both producers below start with it. */
const INSERT_EVENTS = `
with ev as (
  insert into "Event" (id, "storeId", type, data)
  select gen_random_uuid(), ($2::uuid[])[1 + g % cardinality($2::uuid[])], 'order.created',
    jsonb_build_object('orderId', gen_random_uuid(), 'orderNumber', 1000 + g, 'total', 42.5, 'type', 'DELIVERY', 'status', 'PENDING')
  from generate_series(1, $1::int) g
  returning id
)`;

// The events and their fan_out_event jobs (same payload and job key as emitEvent's), one add_jobs call per tick: the
// producer stands in for many API transactions, and 80 add_job calls per statement would make it, not the worker,
// the limit on these 2 shared cores. $1 how many, $2 the stores' ids, $3 the fan-out task.
export const PRODUCE_EVENTS = `${INSERT_EVENTS}, jobs as (
  select count(*) from graphile_worker.add_jobs((
    select array_agg(row($3::text, json_build_object('eventId', id::text), null, null, null, 'fan_out:' || id, null, null)::graphile_worker.job_spec) from ev
  ))
)
select id from ev cross join jobs`;

/** The same events, queued for the bare delivery loop instead (a row of its queue table per event). */
const PRODUCE_BARE = `${INSERT_EVENTS}, queued as (insert into bench_bare_job (event_id) select id from ev)
select id from ev`;

const PRODUCE_JOBS = `
with ev as (select gen_random_uuid() as id from generate_series(1, $1::int)), jobs as (
  select count(*) from graphile_worker.add_jobs((
    select array_agg(row($2::text, json_build_object('id', id::text, 'url', $3::text), null, null, null, null, null, null)::graphile_worker.job_spec) from ev
  ))
)
select id from ev cross join jobs`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ThroughputRun {
  /** Length of the load in seconds. */
  seconds: number;
  produced: number;
  /** Received per second during the window. */
  perSecond: number;
  /** Produced but not received by the end of the window. */
  backlog: number;
  /** Seconds after the window until everything produced was received (null: it never was). */
  drainedAfter: number | null;
  /** Not received DRAIN_LIMIT_SECONDS after the window. */
  missing: number;
  /** Events received more than once over the load and the drain (a re-run after a deadlock or crash would show here). */
  duplicates: number;
  /** The worker process's CPU time per delivery received, over the load and the drain (less noisy than the rate). */
  cpuMsPerDelivery: number;
  /** The database server's CPU time per delivery received, likewise (NaN when it cannot be measured). */
  databaseCpuMsPerDelivery: number;
  /** Each 10 s of the window on its own. */
  slices: Slice[];
}

interface Slice {
  perSecond: number;
  cpuMsPerDelivery: number;
  databaseCpuMsPerDelivery: number;
  /** Produced but not yet received at the slice's end. */
  backlog: number;
}

/** CPU seconds of the worker and the database, and arrivals, at one moment. */
interface Mark {
  at: number;
  received: number;
  cpu: number;
  databaseCpu: number;
}

/** Where deliveries are counted by event id: the receiver, or a consumer of a broker (destinations.ts). */
export type Arrivals = Pick<Receiver, "firstArrival" | "duplicates">;

const perDelivery = (seconds: number, deliveries: number) => (deliveries > 0 ? (seconds * 1000) / deliveries : Number.NaN);

export async function measure(
  ctx: BenchContext,
  receiver: Arrivals,
  worker: Service,
  seconds: number,
  rate: number,
  produce: (client: pg.Client, n: number) => Promise<string[]>,
): Promise<ThroughputRun> {
  const produced = new Set<string>();
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  const mark = (): Mark => ({
    at: performance.now(),
    received: receiver.firstArrival.size,
    cpu: worker.cpuSeconds(),
    databaseCpu: ctx.databaseCpuSeconds?.() ?? Number.NaN,
  });
  const start = mark();
  const duplicatesBefore = receiver.duplicates;
  const slices: Slice[] = [];
  const arrivedSince = (from: Mark) => receiver.firstArrival.size - from.received;
  const slice = (from: Mark, to: Mark): Slice => {
    const n = to.received - from.received;
    return {
      perSecond: (n * 1000) / (to.at - from.at),
      cpuMsPerDelivery: perDelivery(to.cpu - from.cpu, n),
      databaseCpuMsPerDelivery: perDelivery(to.databaseCpu - from.databaseCpu, n),
      backlog: produced.size - (to.received - start.received),
    };
  };
  let received = 0;
  let backlog = 0;
  let drainedAfter: number | null = null;
  let done: Mark;
  try {
    const perTick = (rate * TICK_MS) / 1000;
    const end = start.at + seconds * 1000;
    let sliceStart = start;
    let owed = 0;
    for (let tick = 0; performance.now() < end; tick++) {
      owed += perTick;
      const n = Math.floor(owed);
      owed -= n;
      for (const id of await produce(client, n)) produced.add(id);
      if (performance.now() - sliceStart.at >= SLICE_MS) {
        const now = mark();
        slices.push(slice(sliceStart, now));
        sliceStart = now;
      }
      const wait = start.at + (tick + 1) * TICK_MS - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const windowEnd = mark();
    if (windowEnd.at - sliceStart.at >= SLICE_MS / 2) slices.push(slice(sliceStart, windowEnd));
    received = arrivedSince(start);
    backlog = produced.size - received;
    const deadline = windowEnd.at + DRAIN_LIMIT_SECONDS * 1000;
    while (arrivedSince(start) < produced.size && performance.now() < deadline) await sleep(100);
    if ([...produced].every((id) => receiver.firstArrival.has(id))) drainedAfter = (performance.now() - windowEnd.at) / 1000;
    done = mark();
  } finally {
    await client.end();
  }
  const missing = [...produced].filter((id) => !receiver.firstArrival.has(id)).length;
  const delivered = done.received - start.received;
  return {
    seconds,
    produced: produced.size,
    perSecond: received / seconds,
    backlog,
    drainedAfter,
    missing,
    duplicates: receiver.duplicates - duplicatesBefore,
    cpuMsPerDelivery: perDelivery(done.cpu - start.cpu, delivered),
    databaseCpuMsPerDelivery: perDelivery(done.databaseCpu - start.databaseCpu, delivered),
    slices,
  };
}

const cpu = (worker: number, database: number) =>
  `worker CPU ${fmt.ms(worker)}${Number.isNaN(database) ? "" : `, database CPU ${fmt.ms(database)}`} per delivery`;

export const summary = (r: ThroughputRun, rate: number) => {
  const drain =
    r.backlog === 0
      ? "none left at the end"
      : r.drainedAfter === null
        ? `${fmt.int(r.backlog)} left at the end, ${fmt.int(r.missing)} of them never received within ${DRAIN_LIMIT_SECONDS} s`
        : `${fmt.int(r.backlog)} left at the end, all received ${r.drainedAfter.toFixed(1)} s later`;
  return `${fmt.int(r.perSecond)}/s delivered while ${fmt.int(rate)}/s were offered (${fmt.int(r.produced)} produced, ${drain}, ${fmt.int(r.duplicates)} received twice; ${cpu(r.cpuMsPerDelivery, r.databaseCpuMsPerDelivery)})`;
};

const sliceLine = (r: ThroughputRun) =>
  r.slices.map(
    (s, i) =>
      `${(i + 1) * (SLICE_MS / 1000)} s: ${fmt.int(s.perSecond)}/s, ${cpu(s.cpuMsPerDelivery, s.databaseCpuMsPerDelivery)}, backlog ${fmt.int(s.backlog)}`,
  );

/** The queue baseline alone; run before the service's worker starts (its crash recovery would claim these jobs). */
export async function queueThroughput(ctx: BenchContext, receiver: Receiver, seconds: number, rate: number): Promise<ThroughputRun> {
  ctx.say(`delivery throughput, queue baseline: offering ${fmt.int(rate)} jobs/s for ${seconds} s`);
  const url = receiver.url(QUEUE_BASELINE_PATH);
  const queue = await withQueueBaseline(ctx, receiver, (worker) =>
    measure(ctx, receiver, worker, seconds, rate, async (client, n) =>
      (await client.query<{ id: string }>(PRODUCE_JOBS, [n, QUEUE_BASELINE_TASK, url])).rows.map((r) => r.id),
    ),
  );
  ctx.say(`  ${summary(queue, rate)}`);
  for (const line of sliceLine(queue)) ctx.say(`    ${line}`);
  return queue;
}

/** The bare delivery loop over the endpoints of `setup` (the service's worker idle meanwhile: it polls, nothing more). */
async function bareThroughput(ctx: BenchContext, receiver: Receiver, endpoints: DeliverySetup & { available: true }, seconds: number, rate: number) {
  const storeIds = endpoints.endpoints.map((e) => e.tenant.storeId);
  const admin = new pg.Client({ connectionString: ctx.databaseUrl });
  await admin.connect();
  try {
    await admin.query(BARE_TABLES);
  } finally {
    await admin.end();
  }
  ctx.say(`delivery throughput, bare loop: offering ${fmt.int(rate)} events/s for ${seconds} s over ${storeIds.length} endpoints`);
  const bare = await withBareLoop(ctx, receiver, endpoints.endpoints, (worker) =>
    measure(ctx, receiver, worker, seconds, rate, async (client, n) => (await client.query<{ id: string }>(PRODUCE_BARE, [n, storeIds])).rows.map((r) => r.id)),
  );
  ctx.say(`  ${summary(bare, rate)}`);
  for (const line of sliceLine(bare)) ctx.say(`    ${line}`);
  return bare;
}

const SERVICE = "service";

/**
 * This build's worker and the --before build's (`checkout`) in turns: `rounds` windows each, the order rotating, each
 * window with a worker process started for it and stopped after, as two workers at once would share the jobs (the
 * prepared worker stops first, for the same reason). Answers the comparison's line, both builds' figures averaged
 * over their windows.
 */
async function versusBefore(
  ctx: BenchContext,
  receiver: Receiver,
  setup: DeliverySetup & { available: true },
  checkout: string,
  seconds: number,
  rate: number,
  produce: (client: pg.Client, n: number) => Promise<string[]>,
): Promise<string> {
  await setup.worker.stop();
  const ready = /"msg":"worker started"/;
  const contenders = [
    {
      name: SERVICE,
      start: (round: number) => startService({ name: `worker-round${round}`, ...serviceCommand("worker", ctx.apiEnv), logDir: ctx.logDir, ready }),
    },
    { name: beforeOf(SERVICE), start: (round: number) => startBefore(ctx, checkout, "worker", `worker-before-round${round}`) },
  ];
  const runs = new Map<string, ThroughputRun[]>(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < ctx.settings.rounds; r++) {
    for (const c of contenders.map((_, i) => contenders[(i + r) % contenders.length])) {
      ctx.say(`delivery throughput, ${c.name}, round ${r + 1}: offering ${fmt.int(rate)} events/s for ${seconds} s`);
      const worker = await c.start(r + 1);
      try {
        const run = await measure(ctx, receiver, worker, seconds, rate, produce);
        ctx.say(`  ${summary(run, rate)}`);
        runs.get(c.name)?.push(run);
      } finally {
        await worker.stop();
      }
    }
  }
  const mean = (name: string, figure: (r: ThroughputRun) => number) => {
    const list = runs.get(name) ?? [];
    return list.reduce((sum, r) => sum + figure(r), 0) / list.length;
  };
  const total = (name: string, figure: (r: ThroughputRun) => number) => (runs.get(name) ?? []).reduce((sum, r) => sum + figure(r), 0);
  const both = (figure: (r: ThroughputRun) => number) => [mean(SERVICE, figure), mean(beforeOf(SERVICE), figure)] as const;
  const [rateNow, rateThen] = both((r) => r.perSecond);
  const [workerNow, workerThen] = both((r) => r.cpuMsPerDelivery);
  const [databaseNow, databaseThen] = both((r) => r.databaseCpuMsPerDelivery);
  const line = `sustained deliveries, this build against the build before (${ctx.settings.rounds} windows of ${seconds} s each, alternating, means): ${fmt.int(rateNow)} vs ${fmt.int(rateThen)}/s (${times(rateNow, rateThen)}); CPU per delivery ${times(workerNow + databaseNow, workerThen + databaseThen)} the build before's (worker ${fmt.ms(workerNow)} vs ${fmt.ms(workerThen)}, database ${fmt.ms(databaseNow)} vs ${fmt.ms(databaseThen)}); ${fmt.int(total(SERVICE, (r) => r.missing))} vs ${fmt.int(total(beforeOf(SERVICE), (r) => r.missing))} lost, ${fmt.int(total(SERVICE, (r) => r.duplicates))} vs ${fmt.int(total(beforeOf(SERVICE), (r) => r.duplicates))} received twice`;
  ctx.say(`  ${line}`);
  return line;
}

/** `part` as a multiple of `whole`, as the verdicts print it; a dash when one is not measured (the database's CPU with BENCH_DATABASE_URL). */
const times = (part: number, whole: number) => (Number.isFinite(part / whole) ? `${(part / whole).toFixed(2)}x` : "—");

export async function benchDeliveryThroughput(
  ctx: BenchContext,
  receiver: Receiver,
  setup: DeliverySetup,
  seconds: number,
  rate: number,
  queue: ThroughputRun,
): Promise<ModuleResult> {
  const benchmark = `Sustained deliveries, one worker process, ${seconds} s`;
  const queueLine = `queue baseline (graphile-worker alone, one job per event that signs and POSTs, ${queue.seconds} s): ${summary(queue, rate)}`;
  if (!setup.available) {
    return {
      verdicts: [{ benchmark, figure: "not available", against: queueLine, value: null, goal: GOAL, pass: null }],
      measurements: [],
      notes: [`delivery throughput: ${setup.reason}`],
    };
  }
  const bare = await bareThroughput(ctx, receiver, setup, seconds, rate);
  const storeIds = setup.endpoints.map((e) => e.tenant.storeId);
  ctx.say(`delivery throughput: offering ${fmt.int(rate)} events/s for ${seconds} s over ${setup.endpoints.length} endpoints`);
  const produce = async (client: pg.Client, n: number) =>
    (await client.query<{ id: string }>(PRODUCE_EVENTS, [n, storeIds, FAN_OUT_TASK])).rows.map((r) => r.id);
  const ours = await measure(ctx, receiver, setup.worker, seconds, rate, produce);
  ctx.say(`  ${summary(ours, rate)}`);
  const slices = sliceLine(ours);
  for (const line of slices) ctx.say(`    ${line}`);
  // CPU per delivery as the reads' ratios: the bare loop's over ours, the share of the limit reached.
  const rateRatio = ours.perSecond / bare.perSecond;
  const ratios = `${times(ours.perSecond, bare.perSecond)} of the bare loop's rate; CPU per delivery ${times(bare.cpuMsPerDelivery + bare.databaseCpuMsPerDelivery, ours.cpuMsPerDelivery + ours.databaseCpuMsPerDelivery)} of its (worker ${times(bare.cpuMsPerDelivery, ours.cpuMsPerDelivery)}, database ${times(bare.databaseCpuMsPerDelivery, ours.databaseCpuMsPerDelivery)})`;
  ctx.say(`  ${ratios}`);
  const versus = ctx.before ? await versusBefore(ctx, receiver, setup, ctx.before, seconds, rate, produce) : null;
  return {
    verdicts: [
      {
        benchmark,
        figure: `${summary(ours, rate)}; ${ratios}`,
        against: `bare delivery loop (SKIP LOCKED fetch, sign, POST over keep-alive, record; same run, endpoints and receiver, ${bare.seconds} s): ${summary(bare, rate)}. ${queueLine}`,
        value: ours.perSecond,
        goal: GOAL,
        pass: ours.perSecond >= GOAL_RATE && rateRatio >= GOAL_RATIO && ours.missing === 0 && ours.duplicates === 0,
      },
    ],
    measurements: [],
    notes: [
      `sustained deliveries, each 10 s of the load: ${slices.join("; ")}`,
      `sustained deliveries against the bare loop: ${ratios}`,
      ...(versus ? [versus] : []),
    ],
  };
}
