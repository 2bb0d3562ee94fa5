import type pg from "pg";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import type { SharedRedis } from "../redis.js";
import { memoryRateLimiter, redisRateLimiter } from "./counters.js";
import type { RateLimiter } from "./limiter.js";
import { PostgresRateLimiter } from "./postgres.js";

/**
 * The limiter RATE_LIMIT_BACKEND names (its default follows from REDIS_URL and DATABASE_URL, see config.ts); `redis`
 * is the process's Redis client, null without REDIS_URL.
 */
export async function createRateLimiter(
  config: Pick<Config, "RATE_LIMIT_BACKEND">,
  pool: pg.Pool,
  redis: SharedRedis | null,
  log: Logger,
): Promise<RateLimiter> {
  switch (config.RATE_LIMIT_BACKEND) {
    case "memory":
      return memoryRateLimiter();
    case "postgres":
      return new PostgresRateLimiter(pool);
    case "redis":
      if (!redis) throw new Error("RATE_LIMIT_BACKEND=redis needs REDIS_URL");
      return redisRateLimiter(redis, log);
  }
}
