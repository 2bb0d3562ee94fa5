import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { BenchContext } from "./context.js";
import { runLoad } from "./lib/load.js";
import type { ReadRoute } from "./lib/read-routes.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { summarizeProfile, type ProfileSummary } from "./lib/profile.js";
import { fmt } from "./lib/report.js";

/**
 * Where an API process spends its CPU under a route's load: a second API process started with --cpu-prof takes
 * the same load as the measured one, then stops (SIGTERM; the profile is written on exit) and its samples are
 * summed by function and by area. Profiling slows the process down, so no figure of the table comes from it.
 */
export async function profileApi(ctx: BenchContext, route: ReadRoute, seconds: number): Promise<ProfileSummary> {
  // Its own process name too: a service is ready when its log shows "listening", and the log is kept per name.
  const name = `api-profiled-${route.short}`;
  const dir = join(ctx.logDir, "cpu-profile", route.short);
  await mkdir(dir, { recursive: true });
  const api = await startService({
    name,
    ...serviceCommand("api", ctx.apiEnv, ["--cpu-prof", `--cpu-prof-dir=${dir}`]),
    logDir: ctx.logDir,
    ready: /"msg":"listening"/,
  });
  let window: { fromMs: number; toMs: number };
  try {
    const { targets } = route;
    await runLoad({ baseUrl: api.baseUrl, targets, connections: ctx.settings.connections, seconds: ctx.settings.warmup });
    // The profile starts as the process does: its clock is ours minus the spawn time (give or take a few ms).
    const from = performance.now() - api.spawnedAt;
    const run = await runLoad({ baseUrl: api.baseUrl, targets, connections: ctx.settings.connections, seconds });
    window = { fromMs: from, toMs: performance.now() - api.spawnedAt };
    ctx.say(`profile of ${route.name}: ${fmt.int(run.latencies.length / run.seconds)} req/s while profiled`);
  } finally {
    await api.stop();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("the profiled API process wrote no .cpuprofile");
  const summary = await summarizeProfile(join(dir, file), window);
  for (const a of summary.byArea.slice(0, 8)) ctx.say(`  ${a.area}: ${a.selfPct.toFixed(1)} %`);
  return summary;
}
