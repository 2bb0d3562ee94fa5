import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createTestDatabase } from "../helpers/database.js";
import type { RateLimiter, Subject } from "../../src/platform/ratelimit/limiter.js";
import { PostgresRateLimiter } from "../../src/platform/ratelimit/postgres.js";
import { memoryRateLimiter, redisRateLimiter } from "../../src/platform/ratelimit/counters.js";
import { cleanupRateLimits } from "../../workers/tasks/cleanup-rate-limits.js";
import type { Services } from "../../src/platform/services.js";
import { createLogger } from "../../src/platform/log.js";
import { freePort } from "../../src/platform/db/embedded.js";
import { ApiError } from "../../src/platform/errors.js";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.js";
import { SharedRedis } from "../../src/platform/redis.js";

let pool: pg.Pool;
let drop: () => Promise<void>;
let clock: Date;
let seq = 0;
/** Redis outlives a run: keys of this run never meet those of another (nor of a concurrent one). */
const run = randomUUID().slice(0, 8);
const log = createLogger("silent");
const hasRedis = await redisReachable();
/** The file's Redis client, as a process has one; it connects only if a test uses it. */
const redis = new SharedRedis(TEST_REDIS_URL, log);

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  pool = new pg.Pool({ connectionString: db.url, max: 20 });
});
afterAll(async () => {
  await pool.end();
  await drop();
  await redis.close();
});

/** Fresh subject keys per test, so tests share one store without sharing counters. */
function subjects(storeLimit: number, appLimit?: number): { store: Subject; app: Subject; both: Subject[] } {
  seq += 1;
  const store: Subject = { kind: "store", key: `store:${run}-t${seq}`, limit: storeLimit };
  const app: Subject = { kind: "application", key: `app:${run}-t${seq}`, limit: appLimit ?? 1000 };
  return { store, app, both: [store, app] };
}

const at = (iso: string) => new Date(iso);
const unix = (iso: string) => Date.parse(iso) / 1000;

const backends: { name: string; skip: boolean; make: (clock?: () => Date | null) => RateLimiter | Promise<RateLimiter> }[] = [
  { name: "PostgreSQL", skip: false, make: (c) => new PostgresRateLimiter(pool, c) },
  { name: "memory", skip: false, make: (c) => memoryRateLimiter(c) },
  { name: "Redis", skip: !hasRedis, make: (c) => redisRateLimiter(redis, log, c) },
];

for (const { name, skip, make } of backends)
  describe.skipIf(skip)(`RateLimiter on ${name}`, () => {
    let limiter: RateLimiter;
    beforeAll(async () => {
      limiter = await make(() => clock);
    });

    /** A subject's count in the clock's minute (its previous minute empty), read without counting. */
    async function counter(key: string): Promise<number> {
      const limit = 1_000_000;
      return limit - (await limiter.take([{ kind: "store", key, limit, probe: true }])).remaining;
    }

    it("admits exactly the limit within a minute and refuses the next, without counting the refusal", async () => {
      const { store, both } = subjects(5);
      clock = at("2020-01-01T00:00:10Z");
      const remainings: number[] = [];
      for (let i = 0; i < 5; i++) {
        const d = await limiter.take(both);
        expect(d.allowed).toBe(true);
        remainings.push(d.remaining);
      }
      expect(remainings).toEqual([4, 3, 2, 1, 0]);
      const refused = await limiter.take(both);
      expect(refused).toMatchObject({ allowed: false, remaining: 0, limit: 5, subject: { kind: "store" } });
      // Nothing in the previous minute: the slots free when this minute's requests leave the window, i.e. the end
      // of the next minute minus the share that may remain (4/5 of 60 s into it).
      expect(refused.resetAt).toBeCloseTo(unix("2020-01-01T00:01:12Z"), 3);
      expect(await counter(store.key)).toBe(5);
    });

    it("slides: the previous minute's count weighs by the share of it still inside the window", async () => {
      const { both } = subjects(10);
      clock = at("2020-01-01T00:00:30Z");
      for (let i = 0; i < 10; i++) expect((await limiter.take(both)).allowed).toBe(true);
      expect((await limiter.take(both)).allowed).toBe(false);

      // 15 s into the next minute, 10 × 45/60 = 7.5 requests of the last minute still count: 2 more fit.
      clock = at("2020-01-01T00:01:15Z");
      const first = await limiter.take(both);
      expect(first).toMatchObject({ allowed: true, remaining: 1 });
      expect((await limiter.take(both)).allowed).toBe(true);
      const refused = await limiter.take(both);
      expect(refused.allowed).toBe(false);
      // 2 + 10 × (1 − f) ≤ 9 when f ≥ 0.3: at 00:01:18.
      expect(refused.resetAt).toBeCloseTo(unix("2020-01-01T00:01:18Z"), 3);

      // At 00:01:18 exactly one more fits, as the Reset header promised.
      clock = at("2020-01-01T00:01:18Z");
      expect((await limiter.take(both)).allowed).toBe(true);
      expect((await limiter.take(both)).allowed).toBe(false);

      // Two minutes on, nothing of the first minute is left.
      clock = at("2020-01-01T00:02:59Z");
      const later = await limiter.take(both);
      expect(later.allowed).toBe(true);
      expect(later.remaining).toBeGreaterThanOrEqual(8);
    });

    it("reports the tighter subject's numbers and refuses on the Application across its stores", async () => {
      const a = subjects(3, 5);
      const b: Subject[] = [{ kind: "store", key: `${a.store.key}-other`, limit: 3 }, a.app];
      clock = at("2020-01-01T00:00:05Z");
      for (let i = 0; i < 3; i++) await limiter.take(a.both);
      const aRefused = await limiter.take(a.both);
      expect(aRefused.subject.kind).toBe("store");
      const b1 = await limiter.take(b);
      expect(b1).toMatchObject({ allowed: true, limit: 5, remaining: 1, subject: { kind: "application" } });
      await limiter.take(b);
      const bRefused = await limiter.take(b);
      expect(bRefused).toMatchObject({ allowed: false, limit: 5, subject: { kind: "application" } });
      // The store admitted that last request, then the Application refused it: the store's increment is undone.
      expect(await counter(b[0].key)).toBe(2);
      expect(await counter(a.app.key)).toBe(5);
    });

    it("a probe subject refuses at its limit but counts nothing, and a refusal after it has nothing to undo", async () => {
      seq += 1;
      const failures: Subject = { kind: "token_failures", key: `token-failures:${run}-t${seq}`, limit: 2 };
      const perClient: Subject = { kind: "token", key: `token:${run}-t${seq}`, limit: 1 };
      const probe = { ...failures, probe: true };
      clock = at("2020-01-01T00:00:05Z");
      expect(await limiter.take([probe, perClient])).toMatchObject({ allowed: true, subject: { kind: "token" }, remaining: 0 });
      expect(await counter(failures.key)).toBe(0);
      // The per-client limit refuses the second; the probe took nothing, so nothing is decremented.
      expect(await limiter.take([probe, perClient])).toMatchObject({ allowed: false, subject: { kind: "token" } });
      expect(await counter(failures.key)).toBe(0);
      // Two failures counted (elsewhere): the probe now refuses before the per-client subject is looked at.
      await limiter.take([failures]);
      await limiter.take([failures]);
      const refused = await limiter.take([probe, { ...perClient, key: `${perClient.key}-other` }]);
      expect(refused).toMatchObject({ allowed: false, subject: { kind: "token_failures" }, limit: 2 });
      expect(await counter(failures.key)).toBe(2);
      expect(await counter(`${perClient.key}-other`)).toBe(0);
    });

    it("stays exact under concurrency: 60 simultaneous requests against a limit of 25 admit 25", async () => {
      const { both } = subjects(25);
      clock = at("2020-01-01T00:00:20Z");
      const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.take(both)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
      expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(25);
    });

    it("uses the real clock when none is injected", async () => {
      const { both } = subjects(2);
      const real = await make();
      const d = await real.take(both);
      expect(d.allowed).toBe(true);
      expect(Math.abs(d.now - Date.now() / 1000)).toBeLessThan(5);
      expect(d.resetAt).toBeGreaterThan(d.now);
    });
  });

describe("RateLimiter on PostgreSQL", () => {
  it("cleanup_rate_limits removes buckets the window no longer reads", async () => {
    const { both, store } = subjects(5);
    await new PostgresRateLimiter(pool, () => at("2020-01-01T00:00:00Z")).take(both);
    await new PostgresRateLimiter(pool).take(both);
    const services = { pool, log: createLogger("silent") } as unknown as Services;
    await cleanupRateLimits(services)({}, {} as never);
    const { rows } = await pool.query<{ windowStart: Date }>(`SELECT "windowStart" FROM "RateLimitCounter" WHERE subject = $1`, [store.key]);
    expect(rows.map((r) => r.windowStart.getTime() > Date.now() - 180_000)).toEqual([true]);
  });
});

describe.skipIf(!hasRedis)("RateLimiter on Redis, as several processes see it", () => {
  it("two limiters (two processes) on one Redis admit exactly the limit together", async () => {
    const [redisA, redisB] = [new SharedRedis(TEST_REDIS_URL, log), new SharedRedis(TEST_REDIS_URL, log)];
    const a = await redisRateLimiter(redisA, log, () => at("2020-01-01T00:00:30Z"));
    const b = await redisRateLimiter(redisB, log, () => at("2020-01-01T00:00:30Z"));
    try {
      const { both } = subjects(30);
      const decisions = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).take(both)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
    } finally {
      await Promise.all([redisA.close(), redisB.close()]);
    }
  });

  it("takes on after Redis forgets its scripts (a restart or SCRIPT FLUSH)", async () => {
    const limiter = await redisRateLimiter(redis, log, () => at("2020-01-01T00:00:30Z"));
    const { Redis } = await import("ioredis");
    const admin = new Redis(TEST_REDIS_URL);
    try {
      const { both } = subjects(5);
      expect((await limiter.take(both)).remaining).toBe(4);
      await admin.script("FLUSH");
      expect((await limiter.take(both)).remaining).toBe(3);
    } finally {
      admin.disconnect();
    }
  });
});

describe("RateLimiter on an unreachable Redis", () => {
  it("fails closed: 503 SERVICE_UNAVAILABLE with Retry-After, not ready, at once", async () => {
    const unreachable = new SharedRedis(`redis://127.0.0.1:${await freePort()}`, log);
    const limiter = await redisRateLimiter(unreachable, log);
    try {
      const started = Date.now();
      const err = await limiter.take(subjects(5).both).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: "SERVICE_UNAVAILABLE", headers: { "retry-after": "2" } });
      expect(Date.now() - started).toBeLessThan(1500);
      expect(await limiter.ready()).toBe(false);
    } finally {
      await unreachable.close();
    }
  });
});
