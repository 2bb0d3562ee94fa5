import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import type { LoadResult } from "./lib/load.js";
import { fmt, type Measurement } from "./lib/report.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { createApplications, createSandboxStores, fetchTokens } from "./lib/tenants.js";
import { cpuPerWrite, measure, MOVES, statusChanges, topUp, type Writer } from "./writes.js";

/**
 * What tracing costs a write: PATCH /public/v1/orders/{id}/status (with an Idempotency-Key, as the writes module
 * sends it) on the run's API, whose tracing is off, and on a second API process of the same build exporting every
 * span (OTEL_TRACES_SAMPLER=always_on) over OTLP/HTTP protobuf to a collector stand-in in this process that reads
 * and drops them. The two take turns, round after round. A trace of a status change holds about ten spans.
 */

const STORES = 8;
const OFF = "tracing off";
const ON = "tracing on (100 % sampled)";

/** Takes OTLP/HTTP exports and drops them, counting what arrived. */
async function startCollector(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on("data", (c: Buffer) => (bytes += c.length));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bytes: () => bytes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export async function benchTracing(ctx: BenchContext): Promise<ModuleResult> {
  const collector = await startCollector();
  const env = { ...ctx.apiEnv, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: "always_on", OTEL_SERVICE_NAME: "bench-api" };
  const traced = await startService({ name: "api-traced", ...serviceCommand("api", env), logDir: ctx.logDir, ready: /"msg":"listening"/ });
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  let results: Map<string, LoadResult>;
  try {
    const plans = await createSandboxStores(ctx.databaseUrl, STORES, "BENCHTRC");
    const { secret, credentials } = await createApplications(ctx.databaseUrl, plans);
    const tenants = await fetchTokens(ctx.api.baseUrl, secret, credentials);
    const writers: Writer[] = [
      { name: OFF, service: ctx.api },
      { name: ON, service: traced },
    ];
    // Enough PENDING orders that every write moves one a step (measure runs a warm-up, then each writer's rounds).
    const { connections, seconds, rounds } = ctx.settings;
    await topUp(ctx, tenants, tenants.length);
    const wanted = Math.ceil((writers.length * (300 + 1500 * rounds * seconds)) / MOVES.length);
    results = await measure(ctx, writers, await statusChanges(ctx, client, tenants, wanted));
    ctx.say(`  (${connections} connections, ${rounds} rounds of ${seconds} s each; the collector received ${fmt.int(collector.bytes() / 1024)} KiB)`);
  } finally {
    // No worker runs here: the fan-out jobs of these events would only delay the delivery benchmarks.
    await client.query(
      `select graphile_worker.complete_jobs(array(select id from graphile_worker.jobs where task_identifier = 'fan_out_event' and attempts = 0))`,
    );
    await client.end();
    await traced.stop();
    await collector.close();
  }

  const measurements: Measurement[] = [];
  for (const [writer, r] of results) {
    measurements.push({ benchmark: "write PATCH /public/v1/orders/{id}/status", server: writer, ...r });
    ctx.say(
      `  PATCH status, ${writer}: ${fmt.int(r.rps)} writes/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, CPU ${fmt.ms(cpuPerWrite(r))}/write (API ${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)} + database ${fmt.ms(r.databaseCpuMsPerRequest ?? Number.NaN)}), failures ${r.failures}`,
    );
  }
  const off = results.get(OFF);
  const on = results.get(ON);
  const notes =
    off && on
      ? [
          `tracing on (every span exported) costs the API ${fmt.ratio((on.cpuMsPerRequest ?? Number.NaN) / (off.cpuMsPerRequest ?? Number.NaN))} the CPU per write of tracing off (${fmt.ms(on.cpuMsPerRequest ?? Number.NaN)} vs ${fmt.ms(off.cpuMsPerRequest ?? Number.NaN)}); ${fmt.int(on.rps)} vs ${fmt.int(off.rps)} writes/s, p50 ${fmt.ms(on.p50)} vs ${fmt.ms(off.p50)}, p99 ${fmt.ms(on.p99)} vs ${fmt.ms(off.p99)}`,
        ]
      : [];
  return { verdicts: [], measurements, notes };
}
