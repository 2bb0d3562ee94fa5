import { randomUUID } from "node:crypto";
import type { BenchContext, ModuleResult } from "./context.js";
import { createPrisma } from "../../src/db/prisma.js";
import { emitEvent } from "../../src/events/outbox.js";
import { percentile } from "./lib/load.js";
import { fmt } from "./lib/report.js";
import type { DeliverySetup } from "./lib/webhooks.js";

/**
 * Event commit → signed POST received: events are emitted the way the service emits them (emitEvent inside a
 * Prisma transaction, one event per transaction) at a steady 200 per second, spread over the sandbox tenants;
 * the latency of each is from its commit returning to the receiver having its body. Reference: graphile-worker
 * publishes ~4 ms from add_job to the job starting; a delivery needs two jobs (fan-out, then delivery).
 */

export const LATENCY_RATE = 200;
const WARMUP_SECONDS = 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchDeliveryLatency(ctx: BenchContext, setup: DeliverySetup, seconds: number): Promise<ModuleResult> {
  const benchmark = `Event commit → signed POST received, ${LATENCY_RATE} events/s`;
  if (!setup.available) {
    return { verdicts: [{ benchmark, figure: "not available", against: "graphile-worker's ~4 ms add_job → start", value: null, goal: "p50 ≤ 15 ms, p99 ≤ 60 ms", pass: null }], measurements: [], notes: [`delivery latency: ${setup.reason}`] };
  }
  const { receiver, endpoints } = setup;
  const db = createPrisma(ctx.databaseUrl, 10);
  const committed = new Map<string, { at: number; measured: boolean }>();
  const failures: string[] = [];
  try {
    const total = (WARMUP_SECONDS + seconds) * LATENCY_RATE;
    const interval = 1000 / LATENCY_RATE;
    const inFlight = new Set<Promise<void>>();
    ctx.say(`delivery latency: ${fmt.int(total)} events at ${LATENCY_RATE}/s over ${endpoints.length} endpoints (first ${WARMUP_SECONDS} s not measured)`);
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = t0 + i * interval - performance.now();
      if (wait > 0) await sleep(wait);
      const { tenant } = endpoints[i % endpoints.length];
      const p = db
        .$transaction((tx) =>
          emitEvent(tx, tenant.storeId, "order.created", { orderId: randomUUID(), orderNumber: 1000 + i, total: 42.5, type: "DELIVERY", status: "PENDING" }),
        )
        .then(({ id }) => void committed.set(id, { at: performance.now(), measured: i >= WARMUP_SECONDS * LATENCY_RATE }))
        .catch((e: unknown) => void failures.push(String(e)));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await Promise.all(inFlight);
    const deadline = performance.now() + 15_000;
    while ([...committed.keys()].some((id) => !receiver.firstArrival.has(id)) && performance.now() < deadline) await sleep(50);
  } finally {
    await db.$disconnect();
  }
  const latencies = [...committed]
    .filter(([id, c]) => c.measured && receiver.firstArrival.has(id))
    .map(([id, c]) => (receiver.firstArrival.get(id) ?? 0) - c.at)
    .sort((a, b) => a - b);
  const lost = [...committed.keys()].filter((id) => !receiver.firstArrival.has(id)).length;
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  ctx.say(`  p50 ${fmt.ms(p50)}, p99 ${fmt.ms(p99)}, max ${fmt.ms(latencies.at(-1) ?? Number.NaN)}, lost ${lost}, emit failures ${failures.length}`);
  const notes = failures.length ? [`delivery latency: ${failures.length} emits failed, first: ${failures[0]}`] : [];
  if (receiver.badSignatures) notes.push(`delivery latency: ${receiver.badSignatures} deliveries with a bad signature`);
  return {
    verdicts: [
      {
        benchmark,
        figure: `p50 ${fmt.ms(p50)}, p99 ${fmt.ms(p99)}, max ${fmt.ms(latencies.at(-1) ?? Number.NaN)} (${fmt.int(latencies.length)} events, ${lost} lost)`,
        against: "graphile-worker's ~4 ms add_job → start (two jobs per delivery)",
        value: p50,
        goal: "p50 ≤ 15 ms, p99 ≤ 60 ms",
        pass: p50 <= 15 && p99 <= 60 && lost === 0 && failures.length === 0 && receiver.badSignatures === 0,
      },
    ],
    measurements: [],
    notes,
  };
}
