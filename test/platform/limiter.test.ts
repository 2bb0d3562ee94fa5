import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase } from "../helpers/database.js";
import { RateLimiter, type Subject } from "../../src/platform/ratelimit/limiter.js";
import { cleanupRateLimits } from "../../workers/tasks/cleanup-rate-limits.js";
import type { Services } from "../../src/platform/services.js";
import { createLogger } from "../../src/platform/log.js";

let pool: pg.Pool;
let drop: () => Promise<void>;
let clock: Date;
let limiter: RateLimiter;
let seq = 0;

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  pool = new pg.Pool({ connectionString: db.url, max: 20 });
  limiter = new RateLimiter(pool, () => clock);
});
afterAll(async () => {
  await pool.end();
  await drop();
});

/** Fresh subject keys per test, so tests share one database without sharing counters. */
function subjects(storeLimit: number, appLimit?: number): { store: Subject; app: Subject; both: Subject[] } {
  seq += 1;
  const store: Subject = { kind: "store", key: `store:t${seq}`, limit: storeLimit };
  const app: Subject = { kind: "application", key: `app:t${seq}`, limit: appLimit ?? 1000 };
  return { store, app, both: [store, app] };
}

const at = (iso: string) => new Date(iso);
const unix = (iso: string) => Date.parse(iso) / 1000;

async function counter(key: string, windowStart: string): Promise<number | null> {
  const { rows } = await pool.query<{ count: number }>(`SELECT count FROM "RateLimitCounter" WHERE subject = $1 AND "windowStart" = $2`, [key, windowStart]);
  return rows[0]?.count ?? null;
}

describe("RateLimiter against PostgreSQL", () => {
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
    expect(await counter(store.key, "2020-01-01T00:00:00Z")).toBe(5);
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
    expect(await counter(b[0].key, "2020-01-01T00:00:00Z")).toBe(2);
    expect(await counter(a.app.key, "2020-01-01T00:00:00Z")).toBe(5);
  });

  it("a probe subject refuses at its limit but counts nothing, and a refusal after it has nothing to undo", async () => {
    seq += 1;
    const failures: Subject = { kind: "token_failures", key: `token-failures:t${seq}`, limit: 2 };
    const perClient: Subject = { kind: "token", key: `token:t${seq}`, limit: 1 };
    const probe = { ...failures, probe: true };
    clock = at("2020-01-01T00:00:05Z");
    expect(await limiter.take([probe, perClient])).toMatchObject({ allowed: true, subject: { kind: "token" }, remaining: 0 });
    expect(await counter(failures.key, "2020-01-01T00:00:00Z")).toBe(0);
    // The per-client limit refuses the second; the probe took nothing, so nothing is decremented.
    expect(await limiter.take([probe, perClient])).toMatchObject({ allowed: false, subject: { kind: "token" } });
    expect(await counter(failures.key, "2020-01-01T00:00:00Z")).toBe(0);
    // Two failures counted (elsewhere): the probe now refuses before the per-client subject is looked at.
    await limiter.take([failures]);
    await limiter.take([failures]);
    const refused = await limiter.take([probe, { ...perClient, key: `${perClient.key}-other` }]);
    expect(refused).toMatchObject({ allowed: false, subject: { kind: "token_failures" }, limit: 2 });
    expect(await counter(failures.key, "2020-01-01T00:00:00Z")).toBe(2);
    expect(await counter(`${perClient.key}-other`, "2020-01-01T00:00:00Z")).toBeNull();
  });

  it("stays exact under concurrency: 60 simultaneous requests against a limit of 25 admit 25", async () => {
    const { both } = subjects(25);
    clock = at("2020-01-01T00:00:20Z");
    const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.take(both)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
    expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(25);
  });

  it("uses the database clock when none is injected", async () => {
    const { both } = subjects(2);
    const real = new RateLimiter(pool);
    const d = await real.take(both);
    expect(d.allowed).toBe(true);
    expect(Math.abs(d.now - Date.now() / 1000)).toBeLessThan(5);
    expect(d.resetAt).toBeGreaterThan(d.now);
  });

  it("cleanup_rate_limits removes buckets the window no longer reads", async () => {
    const { both, store } = subjects(5);
    clock = at("2020-01-01T00:00:00Z");
    await limiter.take(both);
    await new RateLimiter(pool).take(both);
    const services = { pool, log: createLogger("silent") } as unknown as Services;
    await cleanupRateLimits(services)({}, {} as never);
    const { rows } = await pool.query<{ windowStart: Date }>(`SELECT "windowStart" FROM "RateLimitCounter" WHERE subject = $1`, [store.key]);
    expect(rows.map((r) => r.windowStart.getTime() > Date.now() - 180_000)).toEqual([true]);
  });
});
