import pg from "pg";
import type { Logger } from "../log.js";

/**
 * Makes a pool survive losing its connections (a restart, a failover, `pg_terminate_backend`):
 * - an error on any of its connections, idle or lent out, is logged instead of crashing the process;
 * - a lent-out connection that dies goes back to the pool as broken, which discards it, at the moment it dies.
 *   Its holder may never release it: Prisma's adapter (@prisma/adapter-pg 6.19) releases a transaction's
 *   connection only after its COMMIT or ROLLBACK succeeded, so a connection killed mid-transaction stayed lent
 *   forever; after a few such deaths the pool had no connection left and every request waited. The holder's
 *   own release later does nothing.
 */
export function guardPool(pool: pg.Pool, log: Logger): pg.Pool {
  const lent = new WeakSet<pg.PoolClient>();
  pool.on("error", (err) => log.warn({ err }, "idle database connection lost; the pool replaces it"));
  pool.on("acquire", (client) => lent.add(client));
  pool.on("release", (_err, client) => lent.delete(client));
  pool.on("connect", (client) => {
    // An idle connection's error reaches the pool's "error" event as well: log it once, there.
    client.on("error", (err) => {
      if (lent.has(client)) log.warn({ err }, "database connection lost while in use; the pool replaces it");
    });
    client.on("end", () => {
      if (!lent.has(client)) return;
      const release = client.release;
      client.release = () => undefined;
      release(new Error("Connection terminated while lent out"));
    });
  });
  return pool;
}

/**
 * Sends every statement of a connection unnamed. Behind PgBouncer in transaction mode (before 1.21) a named
 * statement is prepared on whichever server connection served one transaction, and the next transaction may get
 * another, where the name is unknown ("prepared statement does not exist") or already taken.
 */
function unnamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, ...rest: unknown[]) => unknown;
  client.query = ((config: unknown, ...rest: unknown[]) => {
    if (typeof config === "object" && config !== null && "name" in config && !("submit" in config)) {
      const { name: _name, ...unnamed } = config;
      return query(unnamed, ...rest);
    }
    return query(config, ...rest);
  }) as typeof client.query;
}

/** Pools whose connections send no named statements (see unnamedStatements): Prisma's naming skips them. */
const unprepared = new WeakSet<pg.Pool>();

/** Whether `pool`'s statements may be named (prepared once per connection). */
export function namesStatements(pool: pg.Pool): boolean {
  return !unprepared.has(pool);
}

/**
 * The one pool of a process's own connections: Prisma, readiness, rate limits and raw statements share it, so
 * `/readyz` fails exactly when requests would. A request waits at most `connectionTimeoutMs` for a connection.
 * (Each read replica gets a pool like it, see replicas.ts.)
 *
 * Its statements are prepared (named ones of ours, and every Prisma statement, see prisma.ts) and are
 * tenant-scoped lookups on indexes made for them, so one plan serves every parameter. PostgreSQL's default would
 * still plan several of them afresh on every call, because its generic plan's estimate (an unknown LIMIT, an
 * array of unknown length) looks costlier than the custom plans it tried first; planning then cost more than
 * running (the order list 0.7 ms, the rate limiter 0.8 ms, pg_stat_statements). So these connections plan each
 * prepared statement once.
 *
 * With `preparedStatements: false` (DATABASE_PREPARED_STATEMENTS, for PgBouncer in transaction mode) statements go
 * unnamed and the session setting is not sent: a pooler hands each transaction any server connection, so no
 * session state may be relied on (PgBouncer also refuses the `options` startup parameter).
 */
export function createPool(
  connectionString: string,
  opts: { max: number; connectionTimeoutMs: number; log: Logger; preparedStatements?: boolean; applicationName?: string; queryTimeoutMs?: number },
): pg.Pool {
  const prepared = opts.preparedStatements !== false;
  const pool = new pg.Pool({
    connectionString,
    max: opts.max,
    connectionTimeoutMillis: opts.connectionTimeoutMs,
    application_name: opts.applicationName,
    query_timeout: opts.queryTimeoutMs,
    ...(prepared ? { options: "-c plan_cache_mode=force_generic_plan" } : {}),
  });
  if (!prepared) {
    unprepared.add(pool);
    pool.on("connect", unnamedStatements);
  }
  return guardPool(pool, opts.log);
}
