import pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import { FAN_OUT_TASK } from "../../src/events/outbox.js";
import { fmt } from "./lib/report.js";
import type { Receiver } from "./lib/receiver.js";
import type { Service } from "./lib/processes.js";
import { QUEUE_BASELINE_PATH, QUEUE_BASELINE_TASK, withQueueBaseline, type DeliverySetup } from "./lib/webhooks.js";

/**
 * Sustained deliveries per second of one worker process: events arrive at a steady rate above the goal for
 * `seconds`, each fanning out to one endpoint; the figure is what the receiver got per second in that window,
 * then the run waits a while for the rest and counts what never arrived. Side by side, for scale: the queue
 * baseline (graphile-worker alone, one job per event that signs and POSTs) under the same offered rate.
 *
 * The producer writes what emitEvent writes (the event row, and its fan_out_event job with the same job key) in
 * one statement per 50 ms tick: one Prisma transaction per event would cost the 2 shared cores more than the
 * worker under test.
 */

const TICK_MS = 50;
const DRAIN_SECONDS = 15;
const GOAL = "≥ 1,500/s, zero lost";

// The events and their fan_out_event jobs (same payload and job key as emitEvent's), one add_jobs call per tick: the
// producer stands in for many API transactions, and 80 add_job calls per statement would make it, not the worker,
// the limit on these 2 shared cores.
const PRODUCE_EVENTS = `
with ev as (
  insert into "Event" (id, "storeId", type, data)
  select gen_random_uuid(), ($2::uuid[])[1 + g % cardinality($2::uuid[])], 'order.created',
    jsonb_build_object('orderId', gen_random_uuid(), 'orderNumber', 1000 + g, 'total', 42.5, 'type', 'DELIVERY', 'status', 'PENDING')
  from generate_series(1, $1::int) g
  returning id
), jobs as (
  select count(*) from graphile_worker.add_jobs((
    select array_agg(row($3::text, json_build_object('eventId', id::text), null, null, null, 'fan_out:' || id, null, null)::graphile_worker.job_spec) from ev
  ))
)
select id from ev cross join jobs`;

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
  /** Not received DRAIN_SECONDS after the window. */
  missing: number;
  /** The worker process's CPU time per delivery received, over the load and the drain (less noisy than the rate). */
  cpuMsPerDelivery: number;
  /** The database server's CPU time per delivery received, likewise (NaN when it cannot be measured). */
  databaseCpuMsPerDelivery: number;
}

async function measure(ctx: BenchContext, receiver: Receiver, worker: Service, seconds: number, rate: number, produce: (client: pg.Client, n: number) => Promise<string[]>): Promise<ThroughputRun> {
  const produced = new Set<string>();
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  let received = 0;
  let cpuMsPerDelivery = Number.NaN;
  let databaseCpuMsPerDelivery = Number.NaN;
  try {
    const perTick = (rate * TICK_MS) / 1000;
    const before = receiver.firstArrival.size;
    const cpuBefore = worker.cpuSeconds();
    const databaseCpuBefore = ctx.databaseCpuSeconds?.();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    let owed = 0;
    for (let tick = 0; performance.now() < end; tick++) {
      owed += perTick;
      const n = Math.floor(owed);
      owed -= n;
      for (const id of await produce(client, n)) produced.add(id);
      const wait = t0 + (tick + 1) * TICK_MS - performance.now();
      if (wait > 0) await sleep(wait);
    }
    received = receiver.firstArrival.size - before;
    const deadline = performance.now() + DRAIN_SECONDS * 1000;
    while ([...produced].some((id) => !receiver.firstArrival.has(id)) && performance.now() < deadline) await sleep(200);
    const delivered = receiver.firstArrival.size - before;
    cpuMsPerDelivery = ((worker.cpuSeconds() - cpuBefore) * 1000) / delivered;
    if (ctx.databaseCpuSeconds && databaseCpuBefore !== undefined) databaseCpuMsPerDelivery = ((ctx.databaseCpuSeconds() - databaseCpuBefore) * 1000) / delivered;
  } finally {
    await client.end();
  }
  const missing = [...produced].filter((id) => !receiver.firstArrival.has(id)).length;
  return { seconds, produced: produced.size, perSecond: received / seconds, missing, cpuMsPerDelivery, databaseCpuMsPerDelivery };
}

const summary = (r: ThroughputRun, rate: number) =>
  `${fmt.int(r.perSecond)}/s delivered while ${fmt.int(rate)}/s were offered (${fmt.int(r.produced)} produced, ${fmt.int(r.missing)} not received ${DRAIN_SECONDS} s after the load; worker CPU ${fmt.ms(r.cpuMsPerDelivery)}${Number.isNaN(r.databaseCpuMsPerDelivery) ? "" : `, database CPU ${fmt.ms(r.databaseCpuMsPerDelivery)}`} per delivery)`;

/** The queue baseline alone; run before the service's worker starts (its crash recovery would claim these jobs). */
export async function queueThroughput(ctx: BenchContext, receiver: Receiver, seconds: number, rate: number): Promise<ThroughputRun> {
  ctx.say(`delivery throughput, queue baseline: offering ${fmt.int(rate)} jobs/s for ${seconds} s`);
  const url = receiver.url(QUEUE_BASELINE_PATH);
  const queue = await withQueueBaseline(ctx, receiver, (worker) =>
    measure(ctx, receiver, worker, seconds, rate, async (client, n) => (await client.query<{ id: string }>(PRODUCE_JOBS, [n, QUEUE_BASELINE_TASK, url])).rows.map((r) => r.id)),
  );
  ctx.say(`  ${summary(queue, rate)}`);
  return { ...queue, seconds };
}

export async function benchDeliveryThroughput(ctx: BenchContext, receiver: Receiver, setup: DeliverySetup, seconds: number, rate: number, queue: ThroughputRun): Promise<ModuleResult> {
  const benchmark = `Sustained deliveries, one worker process, ${seconds} s`;
  const against = `queue baseline (graphile-worker alone, one job per event that signs and POSTs, ${queue.seconds} s): ${summary(queue, rate)}`;
  if (!setup.available) {
    return { verdicts: [{ benchmark, figure: "not available", against, value: null, goal: GOAL, pass: null }], measurements: [], notes: [`delivery throughput: ${setup.reason}`] };
  }
  const storeIds = setup.endpoints.map((e) => e.tenant.storeId);
  ctx.say(`delivery throughput: offering ${fmt.int(rate)} events/s for ${seconds} s over ${setup.endpoints.length} endpoints`);
  const ours = await measure(ctx, receiver, setup.worker, seconds, rate, async (client, n) =>
    (await client.query<{ id: string }>(PRODUCE_EVENTS, [n, storeIds, FAN_OUT_TASK])).rows.map((r) => r.id),
  );
  ctx.say(`  ${summary(ours, rate)}`);
  return {
    verdicts: [{ benchmark, figure: summary(ours, rate), against, value: ours.perSecond, goal: GOAL, pass: ours.perSecond >= 1500 && ours.missing === 0 }],
    measurements: [],
    notes: [],
  };
}
