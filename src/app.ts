import { randomBytes } from "node:crypto";
import type { Config } from "./platform/config.js";
import type { Logger } from "./platform/log.js";
import { startEmbeddedPostgres } from "./platform/db/embedded.js";
import { migrate } from "./platform/db/migrate.js";
import { createPrisma, type Db } from "./platform/db/prisma.js";
import { createPool } from "./platform/db/pool.js";
import { Notifications } from "./platform/db/notifications.js";
import { STORE_EVENTS_CHANNEL } from "./modules/events/feed.js";
import { SecretBox } from "./platform/crypto/encryption.js";
import { KeyRing } from "./platform/auth/keys.js";
import { resolveIssuer } from "./platform/auth/issuer.js";
import { configureHashing } from "./platform/crypto/hash.js";
import type { Services } from "./platform/services.js";
import { OutsideCalls } from "./platform/outside.js";
import { Pacer } from "./platform/pace/pacer.js";
import { createPaceStore } from "./platform/pace/stores.js";
import { createRateLimiter } from "./platform/ratelimit/backend.js";
import { GRANT_CHANGED_CHANNEL, GrantCache } from "./platform/auth/grant-cache.js";

/** Connects to DATABASE_URL, or runs embedded PostgreSQL under DATA_DIR when it is not set. */
export async function openDatabase(config: Config, log: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, stop: async () => undefined };
  return startEmbeddedPostgres(config.DATA_DIR, log);
}

/** The master key encrypts secrets at rest; without MASTER_KEY one is generated once and kept in the database. */
async function masterKey(config: Config, db: Db): Promise<Buffer> {
  if (config.MASTER_KEY) return Buffer.from(config.MASTER_KEY, "base64");
  await db.systemSecret.createMany({ data: [{ name: "master_key", value: randomBytes(32).toString("base64") }], skipDuplicates: true });
  const row = await db.systemSecret.findUniqueOrThrow({ where: { name: "master_key" } });
  return Buffer.from(row.value, "base64");
}

export interface Started {
  services: Services;
  databaseUrl: string;
  close(): Promise<void>;
}

export async function startServices(config: Config, log: Logger, opts: { migrate?: boolean } = {}): Promise<Started> {
  configureHashing({ concurrency: config.SECRET_HASH_CONCURRENCY, queue: config.SECRET_HASH_QUEUE, waitMs: config.SECRET_HASH_WAIT_MS });
  const database = await openDatabase(config, log);
  if (opts.migrate !== false) await migrate(database.url, log);
  const pool = createPool(database.url, { max: config.DB_POOL_SIZE, connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS, log });
  const db = createPrisma(pool, { maxWaitMs: config.DB_CONNECTION_TIMEOUT_MS });
  const box = new SecretBox(await masterKey(config, db));
  const keys = new KeyRing(db, box);
  await keys.init(config.JWT_PRIVATE_JWKS);
  const storeEvents = new Notifications(database.url, STORE_EVENTS_CHANNEL, log);
  const grants = new GrantCache(pool, config.GRANT_CACHE_TTL_MS, new Notifications(database.url, GRANT_CHANGED_CHANNEL, log));
  const rateLimiter = await createRateLimiter(config, pool, log);
  const outsideCalls = new OutsideCalls(config.WEBHOOK_TEST_CONCURRENCY, Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000));
  const pacer = new Pacer(await createPaceStore(config, pool, log));
  const issuer = await resolveIssuer(config, db);
  const services: Services = { config, log, db, pool, box, keys, issuer, storeEvents, grants, rateLimiter, outsideCalls, pacer };
  return {
    services,
    databaseUrl: database.url,
    async close() {
      await storeEvents.close();
      await grants.close();
      await rateLimiter.close();
      await pacer.close();
      await db.$disconnect();
      await database.stop();
    },
  };
}
