import { sideBySide, type BenchContext, type Contender, type ModuleResult } from "./context.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { runLoad, type LoadResult } from "./lib/load.js";
import { fmt, type Measurement, type Verdict } from "./lib/report.js";
import { readRoutes, someOrders } from "./lib/read-routes.js";

const PRIMARY_ONLY = "façade, primary only";
const WITH_REPLICA = "façade + replica (DATABASE_REPLICA_URLS)";

/** The primary's database CPU per read with a replica, over its CPU per read without, at most. */
const GOAL = 0.1;
const IDLE_SECONDS = 5;
const PREWARM_SECONDS = 10;

const ms = (v: number | undefined) => fmt.ms(v ?? Number.NaN);
const split = (r: LoadResult) =>
  `API ${ms(r.cpuMsPerRequest)}, primary ${ms(r.databaseCpuMsPerRequest)}, replica ${ms(r.replicaCpuMsPerRequest)} CPU per request`;

/**
 * `--replica`: the read routes through the API as it runs alone (every read on the primary) and through a second
 * API process with the replica in DATABASE_REPLICA_URLS, side by side. Each run measures the CPU of the API
 * process, of the primary's server and of the replica's server, so the figure is where a read's database work
 * went: with the replica, the primary keeps only the read-your-writes bookkeeping (the caller's write position, a
 * primary-key read per request, and each process's WAL-position sample every REPLICA_POLL_MS).
 */
export async function benchReplicaReads(ctx: BenchContext): Promise<ModuleResult> {
  const replica = ctx.replica;
  if (!replica) throw new Error("the replica reads need --replica");
  const withReplica = await startService({
    name: "api-replica",
    ...serviceCommand("api", { ...ctx.apiEnv, DATABASE_REPLICA_URLS: replica.url }),
    logDir: ctx.logDir,
    ready: /"msg":"listening"/,
  });
  const verdicts: Verdict[] = [];
  const measurements: Measurement[] = [];
  const notes: string[] = [];
  try {
    // What the primary spends with no request at all (background processes, the replica's WAL sender, the API's
    // WAL-position samples): at ~100 list requests a second it is a visible share of each request's figure.
    if (ctx.databaseCpuSeconds) {
      const before = ctx.databaseCpuSeconds();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idle = ((ctx.databaseCpuSeconds() - before) * 1000) / IDLE_SECONDS;
      notes.push(`replica: the primary idle, the API with the replica running, used ${fmt.ms(idle)} of CPU per second`);
      ctx.say(`replica: the primary idle used ${fmt.ms(idle)} of CPU per second`);
    }
    const routes = readRoutes(ctx, await someOrders(ctx));
    // The API alone has served every earlier module; the fresh process first gets as much load of each route, so
    // its JIT and pools are as warm and the comparison is of where reads run, not of a process's age.
    for (const route of routes)
      await runLoad({ baseUrl: withReplica.baseUrl, targets: route.targets, connections: ctx.settings.connections, seconds: PREWARM_SECONDS });
    for (const route of routes) {
      ctx.say(`${route.name}, replica: ${route.targets.length} distinct requests over ${ctx.tenants.length} tenants`);
      const contenders: Contender[] = [
        { name: PRIMARY_ONLY, baseUrl: ctx.api.baseUrl, targets: route.targets, service: ctx.api },
        { name: WITH_REPLICA, baseUrl: withReplica.baseUrl, targets: route.targets, service: withReplica },
      ];
      const results = await sideBySide(ctx, contenders);
      for (const c of contenders) {
        const r = results.get(c.name);
        if (!r) continue;
        measurements.push({ benchmark: `${route.short} (replica)`, server: c.name, ...r });
        ctx.say(`  ${c.name}: ${split(r)}; ${fmt.int(r.rps)} req/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, failures ${r.failures}`);
      }
      const alone = results.get(PRIMARY_ONLY);
      const spread = results.get(WITH_REPLICA);
      if (!alone?.databaseCpuMsPerRequest || spread?.databaseCpuMsPerRequest === undefined) continue;
      const share = spread.databaseCpuMsPerRequest / alone.databaseCpuMsPerRequest;
      verdicts.push({
        benchmark: `${route.name}, the primary's database CPU per request with a replica`,
        figure: `${fmt.ratio(share)} of it without (${ms(spread.databaseCpuMsPerRequest)} vs ${ms(alone.databaseCpuMsPerRequest)}; the replica ${ms(spread.replicaCpuMsPerRequest)})`,
        against: PRIMARY_ONLY,
        value: share,
        goal: `≤ ${GOAL}×`,
        pass: alone.failures === 0 && spread.failures === 0 && share <= GOAL,
      });
      notes.push(`${route.short} (replica): without it ${split(alone)}; with it ${split(spread)}`);
    }
    return { verdicts, measurements, notes };
  } finally {
    await withReplica.stop();
  }
}
