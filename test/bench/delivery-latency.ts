import { readFile } from "node:fs/promises";
import type { BenchContext, ModuleResult } from "./context.js";
import { percentile } from "./lib/load.js";
import { startService } from "./lib/processes.js";
import { fmt } from "./lib/report.js";
import type { Receiver } from "./lib/receiver.js";
import { QUEUE_BASELINE_PATH, QUEUE_BASELINE_TASK, withQueueBaseline, type DeliverySetup } from "./lib/webhooks.js";

/**
 * Event commit → signed POST received, at a steady 200 events per second over the sandbox tenants' endpoints.
 * Events are committed one per transaction by emitter.ts in a process of its own: by default one statement that
 * writes what emitEvent writes; BENCH_EMIT_MODE=events-prisma runs emitEvent itself in Prisma transactions. Each
 * latency runs from the commit returning to the receiver having the body. Side by side: the queue baseline, one
 * graphile-worker job per event (add_job committed alone) that signs and POSTs: the floor the published ~4 ms
 * add_job → start figure describes, measured on this machine.
 */

const LATENCY_RATE = 200;
const WARMUP_SECONDS = 2;
const GOAL = "p50 ≤ 15 ms, p99 ≤ 60 ms";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LatencyRun {
  latencies: number[];
  lost: number;
  failures: string[];
}

interface EmitterLine {
  id?: string;
  at?: number;
  i?: number;
  error?: string;
}

/** Runs emitter.ts for warm-up + `seconds`, then waits for its events at the receiver. */
async function measure(ctx: BenchContext, receiver: Receiver, seconds: number, env: Record<string, string>): Promise<LatencyRun> {
  const emitter = await startService({
    name: `emitter-${env.MODE}`,
    args: ["--import", "tsx", "test/bench/emitter.ts"],
    env: { DATABASE_URL: ctx.databaseUrl, RATE: String(LATENCY_RATE), SECONDS: String(WARMUP_SECONDS + seconds), ...env },
    logDir: ctx.logDir,
    ready: /"msg":"emitting"/,
  });
  const code = await emitter.exited;
  await emitter.stop();
  const lines = (await readFile(emitter.logFile, "utf8")).split("\n").filter((l) => l.startsWith("{"));
  const parsed = lines.map((l) => JSON.parse(l) as EmitterLine);
  const failures = parsed.flatMap((l) => (l.error ? [l.error] : []));
  if (code !== 0) failures.push(`emitter exited ${code}: ${lines.at(-1) ?? ""}`);
  const committed = parsed.filter((l): l is Required<Omit<EmitterLine, "error">> => typeof l.id === "string");
  const deadline = performance.now() + 15_000;
  while (committed.some((c) => !receiver.firstArrival.has(c.id)) && performance.now() < deadline) await sleep(50);
  const latencies = committed
    .filter((c) => c.i >= WARMUP_SECONDS * LATENCY_RATE && receiver.firstArrival.has(c.id))
    .map((c) => (receiver.firstArrival.get(c.id) ?? 0) - c.at)
    .sort((a, b) => a - b);
  return { latencies, lost: committed.filter((c) => !receiver.firstArrival.has(c.id)).length, failures };
}

const summary = (r: LatencyRun) =>
  `p50 ${fmt.ms(percentile(r.latencies, 50))}, p99 ${fmt.ms(percentile(r.latencies, 99))}, max ${fmt.ms(r.latencies.at(-1) ?? Number.NaN)} (${fmt.int(r.latencies.length)} events, ${r.lost} lost${r.failures.length ? `, ${r.failures.length} emits failed` : ""})`;

/** The queue baseline alone; run before the service's worker starts (its crash recovery would claim these jobs). */
export async function queueLatency(ctx: BenchContext, receiver: Receiver, seconds: number): Promise<LatencyRun> {
  ctx.say(`delivery latency, queue baseline: ${LATENCY_RATE} jobs/s for ${seconds} s`);
  const queue = await withQueueBaseline(ctx, receiver, () =>
    measure(ctx, receiver, seconds, { MODE: "queue", TASK: QUEUE_BASELINE_TASK, URL: receiver.url(QUEUE_BASELINE_PATH) }),
  );
  ctx.say(`  ${summary(queue)}`);
  return queue;
}

export async function benchDeliveryLatency(
  ctx: BenchContext,
  receiver: Receiver,
  setup: DeliverySetup,
  seconds: number,
  queue: LatencyRun,
): Promise<ModuleResult> {
  const benchmark = `Event commit → signed POST received, ${LATENCY_RATE} events/s`;
  const emitMode = process.env.BENCH_EMIT_MODE ?? "events";
  const notes: string[] = [];
  const against = `queue baseline (one graphile-worker job that signs and POSTs): ${summary(queue)}; graphile-worker publishes ~4 ms add_job → start`;
  if (!setup.available) {
    notes.push(`delivery latency: ${setup.reason}`);
    return { verdicts: [{ benchmark, figure: "not available", against, value: null, goal: GOAL, pass: null }], measurements: [], notes };
  }
  ctx.say(`delivery latency: ${LATENCY_RATE} events/s for ${seconds} s over ${setup.endpoints.length} endpoints (emitter mode ${emitMode})`);
  const ours = await measure(ctx, receiver, seconds, { MODE: emitMode, STORES: JSON.stringify(setup.endpoints.map((e) => e.tenant.storeId)) });
  ctx.say(`  ${summary(ours)}`);
  if (ours.failures.length) notes.push(`delivery latency: ${ours.failures.length} emits failed, first: ${ours.failures[0]}`);
  const p50 = percentile(ours.latencies, 50);
  const p99 = percentile(ours.latencies, 99);
  return {
    verdicts: [
      { benchmark, figure: summary(ours), against, value: p50, goal: GOAL, pass: p50 <= 15 && p99 <= 60 && ours.lost === 0 && ours.failures.length === 0 },
    ],
    measurements: [],
    notes,
  };
}
