import type { Dataset } from "./lib/dataset.js";
import { checkoutCommand, startService, type Service } from "./lib/processes.js";
import type { BenchTenant } from "./lib/tenants.js";
import { runLoad, summarize, type LoadResult, type Run, type Target } from "./lib/load.js";
import type { Measurement, Verdict } from "./lib/report.js";
import type { BenchReplica } from "./lib/database.js";

export interface Settings {
  /** autocannon connections per load. */
  connections: number;
  /** Seconds of each measured load. */
  seconds: number;
  /** Measured loads per server: servers take turns, round after round, so drift on the machine hits all alike. */
  rounds: number;
  /** Seconds of unmeasured load per server first (JIT, pools, caches). */
  warmup: number;
}

/** What every benchmark module gets from run.ts. */
export interface BenchContext {
  databaseUrl: string;
  /** CPU seconds the database server has used so far, when it can be measured (embedded PostgreSQL). */
  databaseCpuSeconds?: () => number;
  /** A streaming replica of the database (--replica), for the reads module. */
  replica?: BenchReplica;
  logDir: string;
  /** The API process (`src/cli/start.ts --role api`) all read benchmarks and the webhook API use. */
  api: Service;
  /** Environment the API was started with; a benchmark that starts another API process reuses it. */
  apiEnv: Record<string, string>;
  /**
   * A checkout of another build, its dist/ built (--before): the reads, writes and throughput modules run its API or
   * worker as one more contender on the same database, its schema this build's.
   */
  before?: string;
  dataset: Dataset;
  /** PRODUCTION tenants, one per store (not the deep one). */
  tenants: BenchTenant[];
  /** Several Applications granted on the deep store. */
  deepTenants: BenchTenant[];
  /** SANDBOX tenants without orders, for webhook endpoints on 127.0.0.1. */
  sandboxTenants: BenchTenant[];
  /** The client secret every tenant's Application shares, to request more tokens. */
  clientSecret: string;
  settings: Settings;
  say(line: string): void;
}

export interface ModuleResult {
  verdicts: Verdict[];
  measurements: Measurement[];
  notes: string[];
}

export interface Contender {
  name: string;
  baseUrl: string;
  targets: readonly Target[];
  /** The serving process, to measure its CPU time per request. */
  service?: Service;
}

/** The name of the --before build's contender beside one of this build's. */
export const beforeOf = (name: string): string => `${name} (before)`;

/**
 * Starts a process of the --before build (`checkout`) with the API's environment and `npm start`'s flags; `name` names
 * its log, which must be new (readiness is read from it).
 */
export function startBefore(ctx: BenchContext, checkout: string, role: "api" | "worker", name = `${role}-before`): Promise<Service> {
  return startService({
    name,
    ...checkoutCommand(checkout, role, ctx.apiEnv),
    logDir: ctx.logDir,
    ready: role === "api" ? /"msg":"listening"/ : /"msg":"worker started"/,
  });
}

/** Runs the contenders side by side: a warm-up each, then `rounds` rounds in which they take turns. */
export async function sideBySide(ctx: BenchContext, contenders: readonly Contender[]): Promise<Map<string, LoadResult>> {
  const { connections, seconds, rounds, warmup } = ctx.settings;
  for (const c of contenders) await runLoad({ baseUrl: c.baseUrl, targets: c.targets, connections, seconds: warmup });
  const runs = new Map<string, Run[]>(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    // Rotate who goes first, so no contender always follows the same one.
    const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
    for (const c of order) {
      const cpuBefore = c.service?.cpuSeconds();
      const databaseCpuBefore = ctx.databaseCpuSeconds?.();
      const replicaCpuBefore = ctx.replica?.cpuSeconds();
      const run = await runLoad({ baseUrl: c.baseUrl, targets: c.targets, connections, seconds });
      if (c.service && cpuBefore !== undefined) run.cpuSeconds = c.service.cpuSeconds() - cpuBefore;
      if (ctx.databaseCpuSeconds && databaseCpuBefore !== undefined) run.databaseCpuSeconds = ctx.databaseCpuSeconds() - databaseCpuBefore;
      if (ctx.replica && replicaCpuBefore !== undefined) run.replicaCpuSeconds = ctx.replica.cpuSeconds() - replicaCpuBefore;
      runs.get(c.name)?.push(run);
    }
  }
  return new Map([...runs].map(([name, list]) => [name, summarize(list)]));
}

/** Interleaves per-tenant lists so consecutive requests belong to different tenants. */
export function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}
