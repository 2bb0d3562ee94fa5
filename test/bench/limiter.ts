import { Redis } from "ioredis";
import type { BenchContext, ModuleResult } from "./context.js";
import { treeCpuSeconds } from "./lib/processes.js";
import { fmt } from "./lib/report.js";
import { memoryRateLimiter, redisRateLimiter } from "../../src/platform/ratelimit/counters.js";
import type { RateLimiter, Subject } from "../../src/platform/ratelimit/limiter.js";
import { createLogger } from "../../src/platform/log.js";
import { SharedRedis } from "../../src/platform/redis.js";

/** The bench's Redis: BENCH_REDIS_URL, else the local one when it answers. */
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A request's subjects: 200 stores over 8 Applications, as the read load's tenants. */
const subjectsOf = (i: number): Subject[] => [
  { kind: "store", key: `store:bench-${i % 200}`, limit: 1e9 },
  { kind: "application", key: `app:bench-${i % 8}`, limit: 1e9 },
];

/** The Redis server's pid, from its own INFO, or null when none answers. */
async function redisPid(): Promise<number | null> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const pid = /process_id:(\d+)/.exec(await client.info("server"))?.[1];
    return pid ? Number(pid) : null;
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

/**
 * What one rate-limit take (a request's store and Application slots) costs in CPU: this process's and, for Redis,
 * the server's, from /proc. In process, against the limiter the API uses, one take at a time (each its own round
 * trip, as on a lightly loaded API) and 16 at once (ioredis pipelines what is in flight together).
 */
export async function benchLimiter(ctx: BenchContext, takes: number): Promise<ModuleResult> {
  const notes: string[] = [];
  const pid = await redisPid();
  const redis = new SharedRedis(REDIS_URL, createLogger("silent"));
  const backends: { name: string; make: () => Promise<RateLimiter>; server: () => number }[] = [
    { name: "memory", make: async () => memoryRateLimiter(), server: () => 0 },
    ...(pid === null ? [] : [{ name: "redis", make: () => redisRateLimiter(redis, createLogger("silent")), server: () => treeCpuSeconds(pid) }]),
  ];
  if (pid === null) notes.push(`rate-limit take: no Redis at ${REDIS_URL}, only the memory backend measured`);
  try {
    for (const backend of backends) {
      const limiter = await backend.make();
      let next = 0;
      for (; next < takes / 10; next++) await limiter.take(subjectsOf(next));
      for (const concurrency of [1, 16]) {
        const cpu0 = process.cpuUsage();
        const server0 = backend.server();
        const t0 = performance.now();
        const end = next + takes;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < end) await limiter.take(subjectsOf(next++));
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const perTake = (us: number) => `${(us / takes).toFixed(1)} µs`;
        const line = `rate-limit take (store + Application), ${backend.name}, ${concurrency} at a time: CPU ${perTake(cpu.user + cpu.system)} in the process${
          backend.name === "redis" ? ` + ${perTake((backend.server() - server0) * 1e6)} in Redis` : ""
        } per take, ${fmt.int(takes / seconds)} takes/s`;
        ctx.say(line);
        notes.push(line);
      }
    }
  } finally {
    await redis.close();
  }
  return { verdicts: [], measurements: [], notes };
}
