import type { Config } from "./platform/config.js";
import type { Logger } from "./platform/log.js";
import { startEmbeddedPostgres } from "./platform/db/embedded.js";
import { migrate } from "./platform/db/migrate.js";
import { createPrisma } from "./platform/db/prisma.js";
import { createPool } from "./platform/db/pool.js";
import { Notifications } from "./platform/db/notifications.js";
import { STORE_EVENTS_CHANNEL } from "./modules/events/feed.js";
import { openSecretBox } from "./platform/crypto/master-key.js";
import { unreachableDatabase } from "./platform/db/unreachable.js";
import { KeyRing } from "./platform/auth/keys.js";
import { resolveIssuer } from "./platform/auth/issuer.js";
import { configureHashing } from "./platform/crypto/hash.js";
import type { Services } from "./platform/services.js";
import { OutsideCalls } from "./platform/outside.js";
import { LiveStreams } from "./platform/streams.js";
import { Pacer } from "./platform/pace/pacer.js";
import { createPaceStore } from "./platform/pace/stores.js";
import { createRateLimiter } from "./platform/ratelimit/backend.js";
import { GRANT_CHANGED_CHANNEL, GrantCache } from "./platform/auth/grant-cache.js";
import { TOKEN_REVOKED_CHANNEL, TokenRevocations } from "./platform/auth/revocations.js";
import { ADMIN_KEY_REVOKED_CHANNEL } from "./platform/auth/credential.js";
import { postgresWriteMarks, ReadRouter, redisWriteMarks } from "./platform/db/replicas.js";
import { createMetricsRegistry, registerPlatformMetrics } from "./platform/metrics.js";
import { SharedRedis } from "./platform/redis.js";
import { registerWebhookMetrics } from "./modules/webhooks/metrics.js";
import { closeDestinations } from "./modules/webhooks/destinations/registry.js";
import { startTracing } from "./platform/tracing/start.js";
import { onFirstUse } from "./platform/answers.js";

/** Connects to DATABASE_URL, or runs embedded PostgreSQL under DATA_DIR when it is not set. */
export async function openDatabase(config: Config, log: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, stop: async () => undefined };
  return startEmbeddedPostgres(config.DATA_DIR, log);
}

/**
 * The read replicas (DATABASE_REPLICA_URLS) and where writes are marked for read-your-writes: Redis when REDIS_URL
 * is set, else the primary. A mark outlives any lag a replica may still be used with, plus a minute.
 */
async function openReadRouter(config: Config, primary: Services["pool"], redis: SharedRedis | null, log: Logger): Promise<ReadRouter> {
  const replicas = config.DATABASE_REPLICA_URLS;
  const marks = replicas.length === 0 ? null : redis ? await redisWriteMarks(redis, primary, config.REPLICA_MAX_LAG_MS + 60_000) : postgresWriteMarks(primary);
  const reads = new ReadRouter(
    primary,
    replicas,
    marks,
    {
      maxLagMs: config.REPLICA_MAX_LAG_MS,
      pollMs: config.REPLICA_POLL_MS,
      poolSize: config.DB_POOL_SIZE,
      connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS,
      queryTimeoutMs: config.REPLICA_QUERY_TIMEOUT_MS,
      preparedStatements: config.REPLICA_PREPARED_STATEMENTS,
    },
    log,
  );
  reads.start();
  return reads;
}

export interface Started {
  services: Services;
  databaseUrl: string;
  /** Where session work goes (LISTEN, graphile-worker, migrations): DATABASE_DIRECT_URL, else databaseUrl. */
  directUrl: string;
  close(): Promise<void>;
}

/**
 * Opens the database (and migrates it), checks the master key, and builds the services. A failure on the way closes
 * what was opened, embedded PostgreSQL included, so a refused start leaves no process behind.
 */
export async function startServices(config: Config, log: Logger, opts: { migrate?: boolean } = {}): Promise<Started> {
  configureHashing({ concurrency: config.SECRET_HASH_CONCURRENCY, queue: config.SECRET_HASH_QUEUE, waitMs: config.SECRET_HASH_WAIT_MS });
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of [...closers].reverse()) await fn();
  };
  try {
    // First in, last out: spans of the whole start and stop are exported before the process ends.
    closers.push(await startTracing(config, log));
    const database = await openDatabase(config, log);
    closers.push(() => database.stop());
    // Migrations take a session advisory lock, which a pooler in transaction mode cannot hold.
    const directUrl = config.DATABASE_DIRECT_URL ?? database.url;
    try {
      if (opts.migrate !== false) await migrate(directUrl, log);
    } catch (e) {
      const setting = config.DATABASE_DIRECT_URL ? "DATABASE_DIRECT_URL" : "DATABASE_URL";
      throw (config.DATABASE_URL && unreachableDatabase(e, directUrl, setting)) || e;
    }
    const pool = createPool(database.url, {
      max: config.DB_POOL_SIZE,
      connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS,
      log,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    });
    const db = createPrisma(pool, { maxWaitMs: config.DB_CONNECTION_TIMEOUT_MS });
    closers.push(() => db.$disconnect());
    const box = await openSecretBox(config.MASTER_KEY, db);
    const keys = new KeyRing(db, box);
    await keys.init(config.JWT_PRIVATE_JWKS);
    const storeEvents = new Notifications(directUrl, STORE_EVENTS_CHANNEL, log);
    closers.push(() => storeEvents.close());
    const grants = new GrantCache(pool, config.GRANT_CACHE_TTL_MS, new Notifications(directUrl, GRANT_CHANGED_CHANNEL, log));
    closers.push(() => grants.close());
    const revocations = new TokenRevocations(pool, new Notifications(directUrl, TOKEN_REVOKED_CHANNEL, log), log);
    closers.push(() => revocations.close());
    const adminKeyRevocations = new Notifications(directUrl, ADMIN_KEY_REVOKED_CHANNEL, log);
    closers.push(() => adminKeyRevocations.close());
    // One client for every feature kept in Redis; it connects when the first of them asks, and closes after them.
    const redis = config.REDIS_URL ? new SharedRedis(config.REDIS_URL, log) : null;
    if (redis) closers.push(() => redis.close());
    const rateLimiter = await createRateLimiter(config, pool, redis, log);
    const outsideCalls = new OutsideCalls(config.WEBHOOK_TEST_CONCURRENCY, Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000));
    const pacer = new Pacer(await createPaceStore(config, pool, redis));
    const issuer = await resolveIssuer(config, db);
    const reads = await openReadRouter(config, pool, redis, log);
    closers.push(() => reads.close());
    const streams = new LiveStreams(config.GRAPHQL_MAX_STREAMS, config.GRAPHQL_MAX_STREAMS_PER_APPLICATION);
    const metrics = createMetricsRegistry();
    const services: Services = {
      config,
      log,
      db,
      pool,
      reads,
      box,
      keys,
      issuer,
      storeEvents,
      grants,
      revocations,
      adminKeyRevocations,
      rateLimiter,
      outsideCalls,
      pacer,
      streams,
      metrics,
      answers: onFirstUse(async () => {
        const [{ publicAnswers }, { schema }, { routes }] = await Promise.all([
          import("./rest/answers.js"),
          import("./graphql/schema.js"),
          import("./rest/routes.js"),
        ]);
        return publicAnswers(schema, routes, config.publicBaseUrl);
      }),
    };
    registerPlatformMetrics(metrics, services);
    registerWebhookMetrics(metrics, services);
    // The message broker connections deliveries opened (closed first: they may hold attempts that record in the database).
    closers.push(() => closeDestinations(services));
    return { services, databaseUrl: database.url, directUrl, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
