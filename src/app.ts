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

/** Connects to DATABASE_URL, or runs embedded PostgreSQL under DATA_DIR when it is not set. */
export async function openDatabase(config: Config, log: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, stop: async () => undefined };
  return startEmbeddedPostgres(config.DATA_DIR, log);
}

export interface Started {
  services: Services;
  databaseUrl: string;
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
    const database = await openDatabase(config, log);
    closers.push(() => database.stop());
    try {
      if (opts.migrate !== false) await migrate(database.url, log);
    } catch (e) {
      throw (config.DATABASE_URL && unreachableDatabase(e, config.DATABASE_URL)) || e;
    }
    const pool = createPool(database.url, { max: config.DB_POOL_SIZE, connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS, log });
    const db = createPrisma(pool, { maxWaitMs: config.DB_CONNECTION_TIMEOUT_MS });
    closers.push(() => db.$disconnect());
    const box = await openSecretBox(config.MASTER_KEY, db);
    const keys = new KeyRing(db, box);
    await keys.init(config.JWT_PRIVATE_JWKS);
    const storeEvents = new Notifications(database.url, STORE_EVENTS_CHANNEL, log);
    closers.push(() => storeEvents.close());
    const grants = new GrantCache(pool, config.GRANT_CACHE_TTL_MS, new Notifications(database.url, GRANT_CHANGED_CHANNEL, log));
    closers.push(() => grants.close());
    const rateLimiter = await createRateLimiter(config, pool, log);
    closers.push(() => rateLimiter.close());
    const outsideCalls = new OutsideCalls(config.WEBHOOK_TEST_CONCURRENCY, Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000));
    const pacer = new Pacer(await createPaceStore(config, pool, log));
    closers.push(() => pacer.close());
    const issuer = await resolveIssuer(config, db);
    const streams = new LiveStreams(config.GRAPHQL_MAX_STREAMS, config.GRAPHQL_MAX_STREAMS_PER_APPLICATION);
    const services: Services = { config, log, db, pool, box, keys, issuer, storeEvents, grants, rateLimiter, outsideCalls, pacer, streams };
    return { services, databaseUrl: database.url, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
