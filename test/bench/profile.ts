import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { interleave, type BenchContext } from "./context.js";
import { runLoad } from "./lib/load.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { summarizeProfile, type ProfileSummary } from "./lib/profile.js";
import { fmt } from "./lib/report.js";

/**
 * Where an API process spends its CPU under the list load: a second API process started with --cpu-prof takes
 * the same load as the measured one, then stops (SIGTERM; the profile is written on exit) and its samples are
 * summed by function and by area. Profiling slows the process down, so no figure of the table comes from it.
 */
export async function profileApi(ctx: BenchContext, seconds: number): Promise<ProfileSummary> {
  const dir = join(ctx.logDir, "cpu-profile");
  await mkdir(dir, { recursive: true });
  const api = await startService({
    name: "api-profiled",
    ...serviceCommand("api", ctx.apiEnv, ["--cpu-prof", `--cpu-prof-dir=${dir}`]),
    logDir: ctx.logDir,
    ready: /"msg":"listening"/,
  });
  let window: { fromMs: number; toMs: number };
  try {
    const targets = interleave(ctx.tenants.map((t) => [{ path: "/public/v1/orders?limit=20", token: t.token }]));
    await runLoad({ baseUrl: api.baseUrl, targets, connections: ctx.settings.connections, seconds: ctx.settings.warmup });
    // The profile starts as the process does: its clock is ours minus the spawn time (give or take a few ms).
    const from = performance.now() - api.spawnedAt;
    const run = await runLoad({ baseUrl: api.baseUrl, targets, connections: ctx.settings.connections, seconds });
    window = { fromMs: from, toMs: performance.now() - api.spawnedAt };
    ctx.say(`profile: ${fmt.int(run.latencies.length / run.seconds)} req/s while profiled`);
  } finally {
    await api.stop();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("the profiled API process wrote no .cpuprofile");
  const summary = await summarizeProfile(join(dir, file), window);
  for (const a of summary.byArea.slice(0, 8)) ctx.say(`  ${a.area}: ${a.selfPct.toFixed(1)} %`);
  return summary;
}
