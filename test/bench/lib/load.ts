import autocannon from "autocannon";

/** One request of a load: a path, whose token it carries and any other headers (an `api-version`, say). */
export interface Target {
  path: string;
  token: string;
  headers?: Readonly<Record<string, string>>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Milliseconds, from every 2xx response's own timing (autocannon's histogram rounds to whole ms). */
  p50: number;
  p99: number;
  /** Responses other than 2xx, and connection errors: any of them makes the figure suspect. */
  failures: number;
  /**
   * CPU milliseconds the server process spent per answered request, when its pid is known. Unlike req/s it hardly
   * moves when other work competes for the machine's cores, so it compares runs made at different times.
   */
  cpuMsPerRequest?: number;
  /** CPU milliseconds the database server spent per answered request, when measured (it serves one load at a time). */
  databaseCpuMsPerRequest?: number;
  /** CPU milliseconds the read replica spent per answered request, when one runs (--replica). */
  replicaCpuMsPerRequest?: number;
}

/** A measured run: its latencies (ms, 2xx only) and what went wrong. */
export interface Run {
  latencies: number[];
  seconds: number;
  failures: number;
  /** CPU seconds the server process used during the run, when measured. */
  cpuSeconds?: number;
  /** CPU seconds the database server used during the run, when measured. */
  databaseCpuSeconds?: number;
  /** CPU seconds the read replica used during the run, when one runs. */
  replicaCpuSeconds?: number;
}

export interface LoadOptions {
  baseUrl: string;
  targets: readonly Target[];
  connections: number;
  seconds: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Closed-loop load with autocannon: `connections` keep-alive connections, each sending its next request as soon
 * as the previous answer arrived, cycling through `targets` (so requests spread over many tenants' tokens).
 */
export function runLoad(opts: LoadOptions): Promise<Run> {
  let next = 0;
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: opts.baseUrl,
        connections: opts.connections,
        duration: opts.seconds,
        timeout: 10,
        requests: [
          {
            setupRequest: (req) => {
              const t = opts.targets[next++ % opts.targets.length];
              return { ...req, method: "GET", path: t.path, headers: { ...req.headers, ...t.headers, authorization: `Bearer ${t.token}` } };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve({ latencies, seconds: result.duration, failures: result.non2xx + result.errors })),
    );
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** Several runs of one target as one: requests and time add up, latencies are pooled. */
export function summarize(runs: readonly Run[]): LoadResult {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const total = (key: "cpuSeconds" | "databaseCpuSeconds" | "replicaCpuSeconds") =>
    runs.every((r) => r[key] !== undefined) ? runs.reduce((s, r) => s + (r[key] ?? 0), 0) : undefined;
  const cpu = total("cpuSeconds");
  const databaseCpu = total("databaseCpuSeconds");
  const replicaCpu = total("replicaCpuSeconds");
  return {
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failures: runs.reduce((s, r) => s + r.failures, 0),
    ...(cpu !== undefined && latencies.length ? { cpuMsPerRequest: (cpu * 1000) / latencies.length } : {}),
    ...(databaseCpu !== undefined && latencies.length ? { databaseCpuMsPerRequest: (databaseCpu * 1000) / latencies.length } : {}),
    ...(replicaCpu !== undefined && latencies.length ? { replicaCpuMsPerRequest: (replicaCpu * 1000) / latencies.length } : {}),
  };
}
