import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createTestDatabase } from "../helpers/database.js";
import { advance, Pacer, type PaceStore } from "../../src/platform/pace/pacer.js";
import { memoryPaceStore, postgresPaceStore, redisPaceStore } from "../../src/platform/pace/stores.js";
import { createLogger } from "../../src/platform/log.js";
import { redisReachable, TEST_REDIS_URL } from "../helpers/redis.js";
import { SharedRedis } from "../../src/platform/redis.js";

/**
 * The pace of src/platform/pace: at most `limit` slots per second per key, handed out once each, however many
 * processes (Pacers) share the store; what is over the pace gets slots ahead, in order. Real PostgreSQL and Redis.
 */

let pool: pg.Pool;
let drop: () => Promise<void>;
/** Redis outlives a run: keys of this run never meet those of another. */
const run = randomUUID().slice(0, 8);
const hasRedis = await redisReachable();
const stores: { name: string; open: () => Promise<PaceStore> }[] = [];
/** The file's Redis client, as a process has one; it connects only if a test uses it. */
const redis = new SharedRedis(TEST_REDIS_URL, createLogger("silent"));

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  pool = new pg.Pool({ connectionString: db.url, max: 10 });
});
afterAll(async () => {
  await pool.end();
  await drop();
  await redis.close();
});

stores.push({ name: "postgres", open: async () => postgresPaceStore(pool) });
if (hasRedis) stores.push({ name: "redis", open: () => redisPaceStore(redis) });

describe("advance, the rule every store applies", () => {
  const at = (second: number, ms = 0) => second * 1000 + ms;

  it("hands out `limit` slots per second from the cursor, then slots ahead; spare ones only in the current second", () => {
    const first = advance(null, at(100, 300), { key: "k", limit: 5, want: 3, spare: 1 });
    expect(first.grant).toEqual({ nowMs: at(100, 300), startSecond: 100, startUsed: 0, extra: 1 });
    expect(first.cursor).toEqual({ second: 100, used: 4 });
    const over = advance(first.cursor, at(100, 400), { key: "k", limit: 5, want: 7, spare: 3 });
    expect(over.grant).toMatchObject({ startSecond: 100, startUsed: 4, extra: 0 });
    expect(over.cursor).toEqual({ second: 102, used: 1 });
    // A cursor left behind starts again at the current second.
    expect(advance(over.cursor, at(105), { key: "k", limit: 5, want: 1, spare: 0 }).grant).toMatchObject({ startSecond: 105, startUsed: 0 });
    // A lower limit than the cursor was advanced with leaves no slot of that second.
    expect(advance({ second: 100, used: 40 }, at(100), { key: "k", limit: 5, want: 1, spare: 0 }).cursor).toEqual({ second: 101, used: 1 });
  });
});

describe.each([{ name: "memory", open: async (): Promise<PaceStore> => memoryPaceStore() }, ...stores])("$name store", ({ name, open }) => {
  let store: PaceStore;
  beforeAll(async () => {
    store = await open();
  });

  it("three processes taking 60 slots at 10 per second at once: no slot twice, at most 10 a second, the rest ahead in order", async () => {
    const key = `endpoint:${run}-${name}-three`;
    const pacers = [new Pacer(store), new Pacer(store), new Pacer(store)];
    const started = Date.now();
    const slots = await Promise.all(Array.from({ length: 60 }, (_, i) => pacers[i % 3].take(key, 10)));
    const now = slots.filter((s) => s === null).length;
    const ahead = slots.filter((s): s is Date => s !== null).map((s) => s.getTime());
    // At most the current second's 10 go at once (20 if the takes straddled a second).
    expect(now).toBeGreaterThanOrEqual(1);
    expect(now).toBeLessThanOrEqual(20);
    expect(new Set(ahead).size).toBe(ahead.length);
    const perSecond = new Map<number, number>();
    for (const t of ahead) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(10);
    // 60 at 10 a second reach at least 5 seconds past the first one.
    expect(Math.max(...ahead) - started).toBeGreaterThanOrEqual(4000);
    expect(pacers.reduce((n, p) => n + p.stats.deferred, 0)).toBe(ahead.length);
  });

  it("under its pace a key costs a few store round trips, then about one a second", async () => {
    const key = `endpoint:${run}-${name}-cheap`;
    const pacer = new Pacer(store);
    for (let i = 0; i < 200; i++) expect(await pacer.take(key, 10_000)).toBeNull();
    expect(pacer.stats.reservations).toBeLessThanOrEqual(20);
    expect(pacer.stats.deferred).toBe(0);
  });

  it("takeNow never reserves ahead: behind a backlog it is refused with the time the backlog ends", async () => {
    const key = `endpoint:${run}-${name}-now`;
    const pacer = new Pacer(store);
    const backlog = await Promise.all(Array.from({ length: 6 }, () => pacer.take(key, 2)));
    const last = Math.max(...backlog.map((s) => s?.getTime() ?? 0));
    const refused = await pacer.takeNow(key, 2);
    expect(refused).not.toBeNull();
    expect(refused?.getTime()).toBeGreaterThanOrEqual(Math.floor(last / 1000) * 1000);
    // The refusal took no slot: the next take comes right after the backlog.
    const next = await pacer.take(key, 2);
    expect(next?.getTime()).toBeGreaterThan(last);
    expect(Math.floor((next?.getTime() ?? 0) / 1000) - Math.floor(last / 1000)).toBeLessThanOrEqual(1);
  });
});
