import type pg from "pg";
import type { Config } from "./config.js";
import type { Logger } from "./log.js";
import type { Db } from "./db/prisma.js";
import type { SecretBox } from "./crypto/encryption.js";
import type { KeyRing } from "./auth/keys.js";
import type { Notifications } from "./db/notifications.js";
import type { RateLimiter } from "./ratelimit/limiter.js";
import type { GrantCache } from "./auth/grant-cache.js";
import type { TokenRevocations } from "./auth/revocations.js";
import type { OutsideCalls } from "./outside.js";
import type { Pacer } from "./pace/pacer.js";
import type { ReadRouter } from "./db/replicas.js";
import type { LiveStreams } from "./streams.js";
import type { Registry } from "prom-client";
import type { PublicAnswers } from "./answers.js";

/** The long-lived parts one process shares between requests and jobs. */
export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  /** The pool under `db`, for the statements Prisma cannot express (advisory locks, graphile-worker add_job, rate limits). */
  pool: pg.Pool;
  /** Where reads run: read replicas (DATABASE_REPLICA_URLS) that have the caller's writes, else `db`. */
  reads: ReadRouter;
  box: SecretBox;
  keys: KeyRing;
  /** The `iss` of access tokens, the same for every process of the deployment. */
  issuer: string;
  /** Wakes live event readers when a store's events commit (one LISTEN connection, opened on first use). */
  storeEvents: Notifications;
  /** The grants partner tokens are admitted by, cached for GRANT_CACHE_TTL_MS and cleared when one changes. */
  grants: GrantCache;
  /** The partner access tokens revoked before their expiry, held in memory and kept current by notifications. */
  revocations: TokenRevocations;
  /** Wakes the live streams of a stored admin key when it is revoked (one LISTEN connection, opened on first use). */
  adminKeyRevocations: Notifications;
  /** The rate-limit counters (RATE_LIMIT_BACKEND). */
  rateLimiter: RateLimiter;
  /** Calls out each Application has in flight in this process (WEBHOOK_TEST_CONCURRENCY). */
  outsideCalls: OutsideCalls;
  /** The webhook endpoints' pace (WEBHOOK_PACE_BACKEND): at most each one's rateLimit deliveries per second. */
  pacer: Pacer;
  /** The live streams this process serves (GRAPHQL_MAX_STREAMS, GRAPHQL_MAX_STREAMS_PER_APPLICATION). */
  streams: LiveStreams;
  /** The process's Prometheus registry: the platform and each domain register their series on it, /metrics exposes it. */
  metrics: Registry;
  /** Runs public API operations and renders their answers in an API version outside a request (a bulk export's job). */
  answers: PublicAnswers;
}
