import { serviceUnavailable } from "../errors.js";
import type { Logger } from "../log.js";
import { redisScript, type SharedRedis } from "../redis.js";
import { bucketOf, checkSubjects, type Count, decide, type Decision, maxSeen, type RateLimiter, type Subject } from "./limiter.js";
import { WINDOW_SECONDS } from "./window.js";

/** A subject's counter in one minute bucket (Unix seconds of the minute's start). */
interface Bucket {
  subject: string;
  start: number;
}

/** One subject's part in a take: its current bucket, the highest count before this request that still admits it, and whether it only probes. */
interface Step extends Bucket {
  maxSeen: number;
  probe: boolean;
}

/**
 * What the counters saw, subject by subject in order up to the first that refused: each one's current bucket before
 * this request, and the index of the refusing one (-1: all admitted). A refusal counts nothing: the buckets it had
 * incremented are given back.
 */
interface Taken {
  seen: number[];
  refusedAt: number;
}

/** Where the counters are kept: this process's memory or a Redis server. */
interface CounterStore {
  take(steps: readonly Step[]): Promise<Taken>;
  /** A bucket's count, 0 when it has none. */
  count(bucket: Bucket): Promise<number>;
  ready(): Promise<boolean>;
  /** What a request gets when the counters failed it. */
  failed(err: unknown): unknown;
}

/** A minute bucket is read as the previous one through the next minute; its key outlives that from its creation. */
const BUCKET_TTL_SECONDS = 2 * WINDOW_SECONDS;
/**
 * A minute bucket takes no counts once its minute is over but from requests in flight across the boundary (at most
 * REDIS_COMMAND_TIMEOUT_MS, ../redis.ts) and from processes whose clocks lag: this far into the next minute its count
 * is final.
 */
const PREV_SETTLED_SECONDS = 5;
/** What a client whose request found Redis unreachable is told to wait. */
const REDIS_RETRY_AFTER_SECONDS = 2;

/**
 * Sliding-window limits over counters kept per subject and minute bucket (`<subject>:<bucket start>`). The previous
 * buckets decide how many requests the current ones may hold (`maxSeen`); a take then increments each subject's
 * current bucket in order and stops at the first over its bound, giving back what it incremented, so refused
 * requests count nothing. The backend runs a take atomically (one Redis script; plain statements in memory), so
 * concurrent requests, in one process or (Redis) in many, each see a distinct count and exactly the limit's worth
 * are admitted. The clock is this process's: several processes sharing Redis must keep their clocks in sync (NTP),
 * or requests near a minute's edge land in a neighbouring bucket.
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
    const prevs = await Promise.all(subjects.map((s) => this.prevOf(s, now, windowStart)));
    const steps = subjects.map(
      (s, i): Step => ({
        subject: s.key,
        start: windowStart,
        maxSeen: maxSeen(s.limit, { prev: prevs[i], now, windowStart }),
        probe: s.probe === true,
      }),
    );
    const { seen, refusedAt } = await this.store.take(steps);
    const counts = seen.map((n, i): Count => ({ prev: prevs[i], seen: n, now, windowStart, counted: i === refusedAt ? null : subjects[i].probe ? n : n + 1 }));
    return decide(subjects, counts);
  }

  private async prevOf(s: Subject, now: number, windowStart: number): Promise<number> {
    if (this.settled.windowStart !== windowStart) this.settled = { windowStart, counts: new Map() };
    const known = this.settled.counts.get(s.key);
    if (known !== undefined) return known;
    const prev = await this.store.count({ subject: s.key, start: windowStart - WINDOW_SECONDS });
    if (now - windowStart >= PREV_SETTLED_SECONDS) this.settled.counts.set(s.key, prev);
    return prev;
  }

  ready(): Promise<boolean> {
    return this.store.ready();
  }
}

/**
 * One process's counters: exact for it alone, nothing shared, no I/O. Plain integers in a map per minute, the last
 * two minutes kept: a take is a few synchronous steps, so it is atomic by construction. (rate-limiter-flexible's
 * memory limiter, used here before, keeps a timer per key and answers each step with a promise, and cannot take two
 * subjects as one step.)
 */
class MemoryCounters implements CounterStore {
  private readonly minutes = new Map<number, Map<string, number>>();

  async take(steps: readonly Step[]): Promise<Taken> {
    const seen: number[] = [];
    for (const [i, step] of steps.entries()) {
      const counts = this.minute(step.start);
      const n = counts.get(step.subject) ?? 0;
      seen.push(n);
      if (n > step.maxSeen) {
        for (const earlier of steps.slice(0, i)) if (!earlier.probe) this.add(earlier, -1);
        return { seen, refusedAt: i };
      }
      if (!step.probe) counts.set(step.subject, n + 1);
    }
    return { seen, refusedAt: -1 };
  }

  async count(bucket: Bucket): Promise<number> {
    return this.minutes.get(bucket.start)?.get(bucket.subject) ?? 0;
  }

  private add(bucket: Bucket, delta: number): void {
    const counts = this.minute(bucket.start);
    counts.set(bucket.subject, (counts.get(bucket.subject) ?? 0) + delta);
  }

  /** The counts of the minute starting at `start`; a new minute drops those the window no longer reads. */
  private minute(start: number): Map<string, number> {
    let counts = this.minutes.get(start);
    if (!counts) {
      counts = new Map();
      this.minutes.set(start, counts);
      for (const old of this.minutes.keys()) if (old < start - WINDOW_SECONDS) this.minutes.delete(old);
    }
    return counts;
  }

  ready = async () => true;
  failed = (err: unknown) => err;
}

export function memoryRateLimiter(clock?: () => Date | null): CounterRateLimiter {
  return new CounterRateLimiter(new MemoryCounters(), clock);
}

/**
 * A take in Redis, one script so it is one round trip and atomic across processes. KEYS are the subjects' current
 * buckets; ARGV[1] the buckets' TTL in seconds, then per subject its maxSeen and 1 for a probe. Replies the index
 * (1-based) of the subject that refused, 0 for none, then each stepped subject's count before this request.
 */
const TAKE_SCRIPT = redisScript(`
local ttl = tonumber(ARGV[1])
local seen = {}
for i, key in ipairs(KEYS) do
  local probe = ARGV[2 * i + 1] == "1"
  local n
  if probe then
    n = tonumber(redis.call("GET", key) or "0")
  else
    n = redis.call("INCR", key) - 1
    if n == 0 then redis.call("EXPIRE", key, ttl) end
  end
  seen[i] = n
  if n > tonumber(ARGV[2 * i]) then
    for j = 1, i do
      if ARGV[2 * j + 1] ~= "1" then redis.call("DECR", KEYS[j]) end
    end
    return {i, unpack(seen)}
  end
end
return {0, unpack(seen)}`);

const redisKey = (b: Bucket) => `ratelimit:${b.subject}:${b.start}`;

/** The script's reply as a Taken; anything else is Redis misbehaving. */
function takenOf(reply: unknown): Taken {
  if (!Array.isArray(reply) || !reply.every((n) => typeof n === "number")) throw new Error("unexpected reply from the rate-limit script");
  const [refused, ...seen] = reply;
  return { seen, refusedAt: refused - 1 };
}

/**
 * Counters in Redis, shared by every process using it. Redis unreachable fails closed: the request gets 503 with
 * Retry-After (never admitted unlimited, never a 500) and /readyz reports not ready, while the process's client
 * (../redis.ts) reconnects in the background and fails commands at once meanwhile.
 */
export async function redisRateLimiter(redis: SharedRedis, log: Logger, clock?: () => Date | null): Promise<CounterRateLimiter> {
  const commands = await redis.use("rate-limited requests answer 503");
  return new CounterRateLimiter(
    {
      take: async (steps) =>
        takenOf(await commands.run(TAKE_SCRIPT, steps.map(redisKey), [BUCKET_TTL_SECONDS, ...steps.flatMap((s) => [String(s.maxSeen), s.probe ? "1" : "0"])])),
      count: async (bucket) => Number((await commands.get(redisKey(bucket))) ?? 0),
      ready: async () => commands.ready(),
      failed: (err) => {
        log.debug({ err }, "rate limit not checked: Redis failed");
        return serviceUnavailable("Rate limits cannot be checked right now.", REDIS_RETRY_AFTER_SECONDS);
      },
    },
    clock,
  );
}
