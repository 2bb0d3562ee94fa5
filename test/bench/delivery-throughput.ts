import pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import { FAN_OUT_TASK } from "../../src/events/outbox.js";
import { fmt } from "./lib/report.js";
import type { DeliverySetup } from "./lib/webhooks.js";

/**
 * Sustained deliveries per second of one worker process: events arrive at a steady rate above the goal for
 * `seconds`, each fanning out to one endpoint; the figure is what the receiver got per second in that window,
 * then the run waits for the rest and counts what never arrived.
 *
 * The producer writes what emitEvent writes (the event row, and its fan_out_event job with the same job key) in
 * one statement per 50 ms tick: one Prisma transaction per event would cost the 2 shared cores more than the
 * worker under test.
 */

const TICK_MS = 50;
const DRAIN_SECONDS = 30;

const PRODUCE = `
with ev as (
  insert into "Event" (id, "storeId", type, data)
  select gen_random_uuid(), ($2::uuid[])[1 + g % cardinality($2::uuid[])], 'order.created',
    jsonb_build_object('orderId', gen_random_uuid(), 'orderNumber', 1000 + g, 'total', 42.5, 'type', 'DELIVERY', 'status', 'PENDING')
  from generate_series(1, $1::int) g
  returning id
)
select id, graphile_worker.add_job($3::text, json_build_object('eventId', id::text), job_key := 'fan_out:' || id) from ev`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchDeliveryThroughput(ctx: BenchContext, setup: DeliverySetup, seconds: number, rate: number): Promise<ModuleResult> {
  const benchmark = `Sustained deliveries, one worker process, ${seconds} s`;
  if (!setup.available) {
    return { verdicts: [{ benchmark, figure: "not available", against: "—", value: null, goal: "≥ 1,500/s, zero lost", pass: null }], measurements: [], notes: [`delivery throughput: ${setup.reason}`] };
  }
  const { receiver, endpoints } = setup;
  const storeIds = endpoints.map((e) => e.tenant.storeId);
  const produced = new Set<string>();
  const badBefore = receiver.badSignatures;
  const dupBefore = receiver.duplicates;
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  let windowEnd = 0;
  let receivedInWindow = 0;
  try {
    ctx.say(`delivery throughput: offering ${fmt.int(rate)} events/s for ${seconds} s over ${endpoints.length} endpoints`);
    const perTick = (rate * TICK_MS) / 1000;
    const receivedBefore = receiver.firstArrival.size;
    const t0 = performance.now();
    windowEnd = t0 + seconds * 1000;
    let owed = 0;
    for (let tick = 0; performance.now() < windowEnd; tick++) {
      owed += perTick;
      const n = Math.floor(owed);
      owed -= n;
      const { rows } = await client.query<{ id: string }>(PRODUCE, [n, storeIds, FAN_OUT_TASK]);
      for (const r of rows) produced.add(r.id);
      const wait = t0 + (tick + 1) * TICK_MS - performance.now();
      if (wait > 0) await sleep(wait);
    }
    receivedInWindow = receiver.firstArrival.size - receivedBefore;
    const backlog = [...produced].filter((id) => !receiver.firstArrival.has(id)).length;
    ctx.say(`  received ${fmt.int(receivedInWindow)} in the window (${fmt.int(receivedInWindow / seconds)}/s); ${fmt.int(backlog)} still on the way`);
    const deadline = performance.now() + DRAIN_SECONDS * 1000;
    while ([...produced].some((id) => !receiver.firstArrival.has(id)) && performance.now() < deadline) await sleep(200);
  } finally {
    await client.end();
  }
  const missing = [...produced].filter((id) => !receiver.firstArrival.has(id)).length;
  const perSecond = receivedInWindow / seconds;
  const bad = receiver.badSignatures - badBefore;
  const duplicates = receiver.duplicates - dupBefore;
  ctx.say(`  produced ${fmt.int(produced.size)}, missing after ${DRAIN_SECONDS} s more: ${fmt.int(missing)}, duplicates ${duplicates}, bad signatures ${bad}`);
  return {
    verdicts: [
      {
        benchmark,
        figure: `${fmt.int(perSecond)}/s delivered while ${fmt.int(rate)}/s were offered; ${fmt.int(produced.size)} events, ${fmt.int(missing)} not received ${DRAIN_SECONDS} s after the load, ${duplicates} duplicates, ${bad} bad signatures`,
        against: "—",
        value: perSecond,
        goal: "≥ 1,500/s, zero lost",
        pass: perSecond >= 1500 && missing === 0 && bad === 0,
      },
    ],
    measurements: [],
    notes: [],
  };
}
