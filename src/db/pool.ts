import pg from "pg";

/**
 * A pool of the service's own connections. Their statements are prepared (named ones of ours, and every
 * Prisma statement, see prisma.ts) and are tenant-scoped lookups on indexes made for them, so one plan serves
 * every parameter. PostgreSQL's default would still plan several of them afresh on every call, because its
 * generic plan's estimate (an unknown LIMIT, an array of unknown length) looks costlier than the custom plans it
 * tried first; planning then cost more than running (the order list 0.7 ms, the rate limiter 0.8 ms,
 * pg_stat_statements). So these connections plan each prepared statement once.
 */
export function createPool(connectionString: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString, max, options: "-c plan_cache_mode=force_generic_plan" });
}
