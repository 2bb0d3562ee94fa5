import pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import { percentile } from "./lib/load.js";
import { fmt, type Measurement } from "./lib/report.js";

/**
 * What the `event_sequence` trigger adds to a write: the same INSERT into "Event", one transaction each (as an
 * emitting command commits), from CLIENTS connections for a few seconds, with the trigger enabled and disabled
 * in turn. Disabling it is bench-only (this run's own database; it is enabled again before anything else runs).
 * The statement always passes a sequence (far above any the trigger draws), which the trigger overwrites, so both
 * sides send the same text. Reported as database CPU and latency per insert; a third pass puts every connection
 * on one store, where the counter's row lock makes the inserts take turns.
 */

const CLIENTS = 8;
const EXPLICIT_BASE = 1_000_000_000_000;
const INSERT = `insert into "Event" (id, "storeId", type, data, sequence) values (gen_random_uuid(), $1, 'order.confirmed', $2::jsonb, $3)`;

interface Pass {
  name: string;
  trigger: boolean;
  /** One store for every connection instead of one each. */
  oneStore: boolean;
}

export async function benchSequenceWrite(ctx: BenchContext, seconds: number): Promise<ModuleResult> {
  const stores = ctx.tenants.slice(1, 1 + CLIENTS).map((t) => t.storeId);
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const c = new pg.Client({ connectionString: ctx.databaseUrl });
      await c.connect();
      return c;
    }),
  );
  const admin = clients[0];
  let explicit = EXPLICIT_BASE;
  const runPass = async (pass: Pass, duration: number) => {
    await admin.query(`alter table "Event" ${pass.trigger ? "enable" : "disable"} trigger event_sequence`);
    const latencies: number[] = [];
    let failures = 0;
    const cpuBefore = ctx.databaseCpuSeconds?.();
    const t0 = performance.now();
    const deadline = t0 + duration * 1000;
    await Promise.all(
      clients.map(async (c, i) => {
        const storeId = pass.oneStore ? stores[0] : stores[i];
        while (performance.now() < deadline) {
          const t = performance.now();
          try {
            await c.query(INSERT, [storeId, `{"orderId":"${storeId}","status":"CONFIRMED","version":2}`, explicit++]);
            latencies.push(performance.now() - t);
          } catch {
            failures++;
          }
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = cpuBefore === undefined ? undefined : (ctx.databaseCpuSeconds?.() ?? 0) - cpuBefore;
    return { latencies, failures, elapsed, cpu };
  };
  const passes: Pass[] = [
    { name: "trigger on", trigger: true, oneStore: false },
    { name: "trigger off", trigger: false, oneStore: false },
    { name: `trigger on, ${CLIENTS} connections on one store`, trigger: true, oneStore: true },
  ];
  const runs = new Map<string, { latencies: number[]; failures: number; elapsed: number; cpu?: number }[]>(passes.map((p) => [p.name, []]));
  try {
    // A short warm-up of each, then two rounds taking turns, so drift on the machine hits all alike.
    for (const p of passes) await runPass(p, 1);
    for (let round = 0; round < 2; round++) for (const p of round ? [...passes].reverse() : passes) runs.get(p.name)?.push(await runPass(p, seconds));
  } finally {
    await admin.query(`alter table "Event" enable trigger event_sequence`);
    // The inserted rows would only slow the delivery benchmarks' statements on "Event".
    await admin.query(`delete from "Event" where "storeId" = any($1::uuid[])`, [stores]);
    await Promise.all(clients.map((c) => c.end()));
  }
  const measurements: Measurement[] = [];
  for (const p of passes) {
    const list = runs.get(p.name) ?? [];
    const latencies = list.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const elapsed = list.reduce((s, r) => s + r.elapsed, 0);
    const cpu = list.every((r) => r.cpu !== undefined) ? list.reduce((s, r) => s + (r.cpu ?? 0), 0) : undefined;
    const m: Measurement = {
      benchmark: "event insert",
      server: `SQL, ${CLIENTS} connections, ${p.name}`,
      requests: latencies.length,
      seconds: elapsed,
      rps: latencies.length / elapsed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      failures: list.reduce((s, r) => s + r.failures, 0),
      ...(cpu !== undefined && latencies.length ? { databaseCpuMsPerRequest: (cpu * 1000) / latencies.length } : {}),
    };
    measurements.push(m);
    ctx.say(
      `  ${m.server}: ${fmt.int(m.rps)} inserts/s, p50 ${fmt.ms(m.p50)}, p99 ${fmt.ms(m.p99)}, database CPU ${fmt.ms(m.databaseCpuMsPerRequest ?? Number.NaN)}/insert, failures ${m.failures}`,
    );
  }
  const [on, off] = measurements;
  const extraCpu = (on.databaseCpuMsPerRequest ?? Number.NaN) - (off.databaseCpuMsPerRequest ?? Number.NaN);
  return {
    verdicts: [],
    measurements,
    notes: [
      `sequence trigger: +${fmt.ms(extraCpu)} database CPU per event insert (${fmt.ms(on.databaseCpuMsPerRequest ?? Number.NaN)} vs ${fmt.ms(off.databaseCpuMsPerRequest ?? Number.NaN)}), p50 ${fmt.ms(on.p50)} vs ${fmt.ms(off.p50)}, p99 ${fmt.ms(on.p99)} vs ${fmt.ms(off.p99)}`,
    ],
  };
}
