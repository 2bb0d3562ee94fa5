import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

/** Self time from a V8 .cpuprofile (node --cpu-prof): per function, and per area (package or our directory). */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  top: { fn: string; where: string; selfPct: number }[];
  byArea: { area: string; selfPct: number }[];
  /** Milliseconds of samples that were not idle. */
  busyMs: number;
}

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** node_modules/<pkg> (scoped too), our top-level directory, Node's internals, or V8's pseudo-frames. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  // The API's only WebAssembly is Prisma's query compiler.
  if (url.startsWith("wasm:")) return "wasm (Prisma query compiler)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith("node:")) return "node internals";
  const path = relative(ROOT, url.startsWith("file://") ? fileURLToPath(url) : url);
  const m = /^(src\/[^/]+|workers|test)/.exec(path);
  return m ? m[1] : path;
}

/** Only samples between `fromMs` and `toMs` after the profile started count (the load, not start-up or exit). */
export async function summarizeProfile(file: string, window: { fromMs: number; toMs: number }, topN = 15): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t >= window.fromMs * 1000 && t <= window.toMs * 1000) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const fns = new Map<string, { fn: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    busy += us;
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = url ? `${area === "node internals" ? url : area}:${lineNumber + 1}` : area;
    const key = `${functionName}|${url}|${lineNumber}`;
    const entry = fns.get(key) ?? { fn: functionName || "(anonymous)", where, us: 0 };
    entry.us += us;
    fns.set(key, entry);
  }
  const pct = (us: number) => (100 * us) / Math.max(1, busy);
  return {
    top: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((f) => ({ fn: f.fn, where: f.where, selfPct: pct(f.us) })),
    byArea: [...areas]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([area, us]) => ({ area, selfPct: pct(us) })),
    busyMs: busy / 1000,
  };
}
