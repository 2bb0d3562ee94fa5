import type { BenchContext, ModuleResult } from "./context.js";
import { fmt } from "./lib/report.js";
import { peakRssByName } from "./lib/processes.js";

/**
 * The API process's lifetime peak resident memory (the kernel's VmHWM, so no sample can miss it), after everything
 * the run did with it so far plus a burst of token issuance: `clients` concurrent clients, each with its own
 * Application, POST /partner/auth/token `perClient` times in a row. Every token request checks a client secret
 * with scrypt (16 MiB each), the service's most memory-hungry request. Token answers other than 200 are counted:
 * past its hashing queue the service sheds them with 503, which is allowed; anything else is a failure.
 */
export async function benchMemory(ctx: BenchContext, clients: number, perClient: number): Promise<ModuleResult> {
  const before = ctx.api.peakRssMiB();
  const statuses = new Map<number, number>();
  const t0 = performance.now();
  const client = async (clientId: string) => {
    for (let i = 0; i < perClient; i++) {
      const res = await fetch(`${ctx.api.baseUrl}/partner/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: ctx.clientSecret }),
      });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  const ids = ctx.tenants.map((t) => t.clientId);
  await Promise.all(Array.from({ length: clients }, (_, i) => client(ids[i % ids.length])));
  const seconds = (performance.now() - t0) / 1000;
  const peak = ctx.api.peakRssMiB();
  const answered = [...statuses].map(([s, n]) => `${fmt.int(n)}× ${s}`).join(", ");
  const unexpected = [...statuses].filter(([s]) => s !== 200 && s !== 503).reduce((sum, [, n]) => sum + n, 0);
  ctx.say(
    `token burst: ${clients} clients × ${perClient} in ${seconds.toFixed(1)} s (${answered}); API peak RSS ${peak.toFixed(0)} MiB (${before.toFixed(0)} before the burst)`,
  );
  return {
    verdicts: [
      {
        benchmark: "API lifetime peak resident memory (VmHWM), including a token burst",
        figure: `${peak.toFixed(0)} MiB = ${((peak * 2 ** 20) / 1e6).toFixed(0)} MB (${before.toFixed(0)} MiB before the burst of ${clients} clients × ${perClient} token requests: ${answered})`,
        against: "—",
        value: peak,
        goal: "≤ 200 MB",
        // The goal is in megabytes (10^6 bytes); VmHWM is read in MiB.
        pass: unexpected === 0 && (peak * 2 ** 20) / 1e6 <= 200,
      },
    ],
    measurements: [],
    notes: unexpected ? [`memory: ${unexpected} token requests answered neither 200 nor 503 (${answered})`] : [],
  };
}

/** The service's own processes (not the baselines'), by the names the bench starts them under. */
const SERVICE_PROCESSES = ["api", "worker", "fairness-worker", "destinations-worker"];
const MB = (mib: number) => (mib * 2 ** 20) / 1e6;

/**
 * The goal's figure: each of the service's processes' lifetime peak resident memory (VmHWM) through everything the run
 * did, the fairness module included; read once every module has run.
 */
export function peakRssVerdict(): ModuleResult {
  const peaks = peakRssByName();
  const measured = SERVICE_PROCESSES.filter((name) => peaks.has(name)).map((name) => [name, MB(peaks.get(name) ?? 0)] as const);
  const highest = Math.max(0, ...measured.map(([, mb]) => mb));
  return {
    verdicts: [
      {
        benchmark: "Peak resident memory (VmHWM) of each service process through the whole run",
        figure: measured.map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`).join(", ") || "no service process ran",
        against: "—",
        value: measured.length ? highest : null,
        goal: "≤ 200 MB each",
        pass: measured.length ? highest <= 200 : null,
      },
    ],
    measurements: [],
    notes: [],
  };
}
