import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";
import { serviceUnavailable } from "../errors.js";
import type { Logger } from "../log.js";
import { bucketOf, checkSubjects, type Count, decide, type Decision, fits, type RateLimiter, type Subject } from "./limiter.js";
import { WINDOW_SECONDS } from "./window.js";

/** Where the counters are kept: this process's memory or a Redis server. */
interface CounterStore {
  /** rate-limiter-flexible's counters, used as atomic per-key counters that expire (the window is ours, see take). */
  counters: RateLimiterAbstract;
  ready(): Promise<boolean>;
  close(): Promise<void>;
  /** What a request gets when the counters failed it. */
  failed(err: unknown): unknown;
}

/** The decision is ours: the library's own limit never refuses a consume. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
/** A minute bucket is read as the previous one through the next minute; its key outlives that from its creation. */
const BUCKET_TTL_SECONDS = 2 * WINDOW_SECONDS;
/** Requests wait this long for Redis at most; a request must not hang on a stalled server. */
const REDIS_COMMAND_TIMEOUT_MS = 1000;
/**
 * A minute bucket takes no counts once its minute is over but from requests in flight across the boundary (at most
 * REDIS_COMMAND_TIMEOUT_MS) and from processes whose clocks lag: this far into the next minute its count is final.
 */
const PREV_SETTLED_SECONDS = 5;
/** What a client whose request found Redis unreachable is told to wait. */
const REDIS_RETRY_AFTER_SECONDS = 2;

/**
 * Sliding-window limits over counters kept per subject and minute bucket (`<subject>:<bucket start>`). A slot is
 * taken by incrementing the current bucket and checking the result against the limit, and given back (decremented)
 * when it did not fit; the increments are atomic, so concurrent requests, in one process or (Redis) in many, each
 * see a distinct count and exactly the limit's worth are admitted (a request meeting a refused one's increment before
 * its decrement may be refused too, at the limit's edge; never admitted over it). The clock is this process's: several processes
 * sharing Redis must keep their clocks in sync (NTP), or requests near a minute's edge land in a neighbouring bucket.
 */
export class CounterRateLimiter implements RateLimiter {
  /** The previous minute's final counts by subject, read once per minute instead of on every request. */
  private settled = { windowStart: Number.NaN, counts: new Map<string, number>() };

  constructor(
    private readonly store: CounterStore,
    /** Test hook: a fixed clock instead of the process's. */
    private readonly clock: () => Date | null = () => null,
  ) {}

  async take(subjects: readonly Subject[]): Promise<Decision> {
    checkSubjects(subjects);
    try {
      return await this.count(subjects);
    } catch (err) {
      throw this.store.failed(err);
    }
  }

  private async count(subjects: readonly Subject[]): Promise<Decision> {
    const now = (this.clock()?.getTime() ?? Date.now()) / 1000;
    const windowStart = bucketOf(now);
    const { counters } = this.store;
    const current = (s: Subject) => `${s.key}:${windowStart}`;
    /** The current bucket before this request: read for a probe, incremented otherwise. */
    const step = async (s: Subject): Promise<number> =>
      s.probe ? ((await counters.get(current(s)))?.consumedPoints ?? 0) : (await counters.consume(current(s))).consumedPoints - 1;
    const count = async (s: Subject, prev: number, seen: number): Promise<Count> => {
      const c = { prev, seen, now, windowStart };
      if (fits(s.limit, c)) return { ...c, counted: s.probe ? seen : seen + 1 };
      if (!s.probe) await counters.reward(current(s));
      return { ...c, counted: null };
    };
    // The previous buckets (when not settled yet) and the first subject's step go out together (one round trip).
    const [prevs, firstSeen] = await Promise.all([Promise.all(subjects.map((s) => this.prevOf(s, now, windowStart))), step(subjects[0])]);
    const counts = [await count(subjects[0], prevs[0], firstSeen)];
    const second = subjects[1];
    if (second && counts[0].counted !== null) {
      counts.push(await count(second, prevs[1], await step(second)));
      if (counts[1].counted === null && !subjects[0].probe) await counters.reward(current(subjects[0]));
    }
    return decide(subjects, counts);
  }

  private async prevOf(s: Subject, now: number, windowStart: number): Promise<number> {
    if (this.settled.windowStart !== windowStart) this.settled = { windowStart, counts: new Map() };
    const known = this.settled.counts.get(s.key);
    if (known !== undefined) return known;
    const prev = (await this.store.counters.get(`${s.key}:${windowStart - WINDOW_SECONDS}`))?.consumedPoints ?? 0;
    if (now - windowStart >= PREV_SETTLED_SECONDS) this.settled.counts.set(s.key, prev);
    return prev;
  }

  ready(): Promise<boolean> {
    return this.store.ready();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** One process's counters: exact for it alone, nothing shared, no I/O. */
export function memoryRateLimiter(clock?: () => Date | null): CounterRateLimiter {
  const counters = new RateLimiterMemory({ keyPrefix: "ratelimit", points: NO_LIMIT, duration: BUCKET_TTL_SECONDS });
  return new CounterRateLimiter({ counters, ready: async () => true, close: async () => undefined, failed: (err) => err }, clock);
}

/**
 * Counters in Redis, shared by every process using it. Redis unreachable fails closed: the request gets 503 with
 * Retry-After (never admitted unlimited, never a 500) and /readyz reports not ready, while the client reconnects
 * in the background. A command waits for a connection at most REDIS_COMMAND_TIMEOUT_MS, and fails at the first
 * failed reconnection (maxRetriesPerRequest 0), so requests do not pile up behind a server that is down.
 */
export async function redisRateLimiter(url: string, log: Logger, clock?: () => Date | null): Promise<CounterRateLimiter> {
  // Loaded only in this mode: the client costs about 7 MB of resident memory.
  const { Redis } = await import("ioredis");
  const client = new Redis(url, {
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
  });
  let reachable = true;
  client.on("error", (err: Error) => {
    // ioredis reports every failed reconnection; one line per outage is enough.
    if (reachable) log.warn({ err: err.message }, "Redis unreachable: rate-limited requests answer 503 until it is back");
    reachable = false;
  });
  client.on("ready", () => {
    if (!reachable) log.info("Redis reachable again");
    reachable = true;
  });
  const counters = new RateLimiterRedis({ storeClient: client, keyPrefix: "ratelimit", points: NO_LIMIT, duration: BUCKET_TTL_SECONDS });
  return new CounterRateLimiter(
    {
      counters,
      ready: async () => client.status === "ready",
      close: async () => {
        await client.quit().catch(() => client.disconnect());
      },
      failed: (err) => {
        log.debug({ err }, "rate limit not checked: Redis failed");
        return serviceUnavailable("Rate limits cannot be checked right now.", REDIS_RETRY_AFTER_SECONDS);
      },
    },
    clock,
  );
}
