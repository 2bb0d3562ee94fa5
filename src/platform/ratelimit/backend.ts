import type pg from "pg";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { memoryRateLimiter, redisRateLimiter } from "./counters.js";
import type { RateLimiter } from "./limiter.js";
import { PostgresRateLimiter } from "./postgres.js";

/** The limiter RATE_LIMIT_BACKEND names (its default follows from REDIS_URL and DATABASE_URL, see config.ts). */
export async function createRateLimiter(config: Pick<Config, "RATE_LIMIT_BACKEND" | "REDIS_URL">, pool: pg.Pool, log: Logger): Promise<RateLimiter> {
  switch (config.RATE_LIMIT_BACKEND) {
    case "memory":
      return memoryRateLimiter();
    case "postgres":
      return new PostgresRateLimiter(pool);
    case "redis":
      if (!config.REDIS_URL) throw new Error("RATE_LIMIT_BACKEND=redis needs REDIS_URL");
      return redisRateLimiter(config.REDIS_URL, log);
  }
}
