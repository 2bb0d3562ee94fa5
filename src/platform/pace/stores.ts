import type pg from "pg";
import type { Config } from "../config.js";
import { redisScript, type SharedRedis } from "../redis.js";
import { ASYNC_COMMIT } from "../db/async-commit.js";
import { advance, type PaceGrant, type PaceStore } from "./pacer.js";

/**
 * The pace cursors of ./pacer.ts, where WEBHOOK_PACE_BACKEND says: this process's memory (one process), PostgreSQL
 * (every process on the database) or Redis (every process using it). Each applies `advance` atomically per key.
 */

/** Cursors one process keeps before dropping those left behind. */
const MAX_MEMORY_CURSORS = 10_000;

/** One process's cursors: nothing shared, no I/O. */
export function memoryPaceStore(now: () => number = Date.now): PaceStore {
  const cursors = new Map<string, { second: number; used: number }>();
  return {
    async reserve(requests) {
      const nowMs = now();
      if (cursors.size >= MAX_MEMORY_CURSORS) {
        // A cursor behind the current second says nothing a missing one would not.
        for (const [k, c] of cursors) if (c.second < Math.floor(nowMs / 1000)) cursors.delete(k);
      }
      return requests.map((r) => {
        const { grant, cursor } = advance(cursors.get(r.key) ?? null, nowMs, r);
        cursors.set(r.key, cursor);
        return grant;
      });
    },
  };
}

/**
 * pace_reserve() (its migration) on the PaceCursor table, one round trip for a batch of keys; the clock is the
 * database's, which is also the one graphile-worker runs jobs by. Commits without waiting for the WAL flush: a
 * database crash may forget the last reservations, which only lets a few deliveries through early once.
 */
const PACE_RESERVE = {
  name: "pace_reserve",
  text: `select slot_key, now_ms::float8 as now_ms, start_second::float8 as start_second, start_used, extra
    from ${ASYNC_COMMIT}, pace_reserve($1::text[], $2::int[], $3::int[], $4::int[])`,
} as const;

/** Cursors the cron task cleanup_rate_limits removes: left more than a minute behind. No parameters. */
export const DELETE_OLD_PACE_CURSORS = `delete from "PaceCursor" where second < extract(epoch from now()) - 60`;

export function postgresPaceStore(pool: pg.Pool): PaceStore {
  return {
    async reserve(requests) {
      const { rows } = await pool.query<{ slot_key: string; now_ms: number; start_second: number; start_used: number; extra: number }>({
        ...PACE_RESERVE,
        values: [requests.map((r) => r.key), requests.map((r) => r.limit), requests.map((r) => r.want), requests.map((r) => r.spare)],
      });
      // The function answers in key order; the caller's order is the requests'.
      const byKey = new Map(rows.map((r) => [r.slot_key, r]));
      return requests.map((r): PaceGrant => {
        const row = byKey.get(r.key);
        if (!row) throw new Error(`pace_reserve answered no row for ${r.key}`);
        return { nowMs: row.now_ms, startSecond: row.start_second, startUsed: row.start_used, extra: row.extra };
      });
    },
  };
}

/**
 * `advance` in Redis, one script for a batch of keys (one round trip, atomic across processes); the clock is Redis's
 * (TIME). KEYS are the cursors (a hash of second and used each, expiring two seconds after their second); ARGV per key
 * its limit, want and spare. Replies Redis's time in ms, then per key startSecond, startUsed and extra.
 */
const RESERVE_SCRIPT = redisScript(`
local t = redis.call("TIME")
local now = tonumber(t[1])
local out = { now * 1000 + math.floor(tonumber(t[2]) / 1000) }
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[3 * i - 2])
  local want = tonumber(ARGV[3 * i - 1])
  local spare = tonumber(ARGV[3 * i])
  local cur = redis.call("HMGET", key, "s", "u")
  local s0, u0 = now, 0
  if cur[1] and tonumber(cur[1]) >= now then
    s0 = tonumber(cur[1])
    u0 = math.min(tonumber(cur[2]), limit)
  end
  local total = u0 + want
  local s1 = s0 + math.floor(total / limit)
  local u1 = total % limit
  local extra = 0
  if s1 == now then extra = math.min(spare, limit - u1) end
  redis.call("HSET", key, "s", s1, "u", u1 + extra)
  redis.call("EXPIREAT", key, s1 + 2)
  out[#out + 1] = s0
  out[#out + 1] = u0
  out[#out + 1] = extra
end
return out`);

/** A reservation Redis does not answer in time (../redis.ts) fails its attempt, which graphile-worker retries. */
export async function redisPaceStore(redis: SharedRedis): Promise<PaceStore> {
  const commands = await redis.use("webhook deliveries wait for their pace");
  return {
    async reserve(requests) {
      const reply = await commands.run(
        RESERVE_SCRIPT,
        requests.map((r) => `pace:${r.key}`),
        requests.flatMap((r) => [r.limit, r.want, r.spare]),
      );
      if (!Array.isArray(reply) || reply.length !== 1 + 3 * requests.length || !reply.every((n) => typeof n === "number")) {
        throw new Error("unexpected reply from the pace script");
      }
      const [nowMs, ...rest] = reply;
      return requests.map((_, i): PaceGrant => ({ nowMs, startSecond: rest[3 * i], startUsed: rest[3 * i + 1], extra: rest[3 * i + 2] }));
    },
  };
}

/**
 * The store WEBHOOK_PACE_BACKEND names (its default follows from REDIS_URL and DATABASE_URL, see config.ts); `redis`
 * is the process's Redis client, null without REDIS_URL.
 */
export async function createPaceStore(config: Pick<Config, "WEBHOOK_PACE_BACKEND">, pool: pg.Pool, redis: SharedRedis | null): Promise<PaceStore> {
  switch (config.WEBHOOK_PACE_BACKEND) {
    case "memory":
      return memoryPaceStore();
    case "postgres":
      return postgresPaceStore(pool);
    case "redis":
      if (!redis) throw new Error("WEBHOOK_PACE_BACKEND=redis needs REDIS_URL");
      return redisPaceStore(redis);
  }
}
