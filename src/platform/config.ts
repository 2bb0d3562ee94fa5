import { createPrivateKey, createPublicKey } from "node:crypto";
import { z } from "zod";
import type { JWK } from "jose";
import { DEFAULT_HASHING } from "./crypto/hash.js";
import { API_VERSIONS, isApiVersion, type ApiVersion, type VersionLifecycles } from "./versions.js";

const boolean = z.enum(["true", "false", "1", "0"], { message: "must be true or false" }).transform((v) => v === "true" || v === "1");
/** How traces travel to the collector: OTLP over HTTP, protobuf or JSON (gRPC is not offered). */
const otlpProtocol = z.enum(["http/protobuf", "http/json"], { message: "must be http/protobuf or http/json (gRPC is not offered)" });

const port = z.coerce.number({ message: "must be a number" }).int("must be an integer").min(0, "must be 0..65535").max(65535, "must be 0..65535");

const positiveInt = z.coerce.number({ message: "must be a number" }).int("must be an integer").positive("must be positive");
const nonNegativeInt = z.coerce.number({ message: "must be a number" }).int("must be an integer").min(0, "must be 0 or more");

function isJwk(value: unknown): value is JWK {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Why the `index`th JWK of JWT_PRIVATE_JWKS cannot sign tokens, or null when it can: it must be an Ed25519 private
 * key with a kid, whose public half `x` is the one its private half `d` makes (a mismatch would sign tokens that
 * the published key never verifies).
 */
function signingKeyProblem(jwk: unknown, index: number): string | null {
  const name = isJwk(jwk) && typeof jwk.kid === "string" && jwk.kid !== "" ? `key "${jwk.kid}"` : `key ${index + 1}`;
  if (!isJwk(jwk) || typeof jwk.kid !== "string" || jwk.kid === "") return `${name} has no kid`;
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.d !== "string") return `${name} is not a private Ed25519 JWK (kty OKP, crv Ed25519, d)`;
  if (typeof jwk.x !== "string") return `${name} has no x (its public half)`;
  try {
    const key = createPrivateKey({ key: { kty: jwk.kty, crv: jwk.crv, d: jwk.d, x: jwk.x }, format: "jwk" });
    if (createPublicKey(key).export({ format: "jwk" }).x !== jwk.x) return `${name}: its x is not the public half of its d`;
  } catch {
    return `${name} is not a valid Ed25519 key (its d or x does not decode to one)`;
  }
  return null;
}

const duration = /^(\d+)(ms|s|m|h|d)$/;
const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses one duration such as "100ms", "2s", "1m", "1h" or "5d" into milliseconds. */
export function parseDuration(value: string): number {
  const m = duration.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not a duration like 100ms, 2s, 1m, 1h or 5d`);
  return Number(m[1]) * unitMs[m[2]];
}

/** Parses "100ms,2s,1m" into milliseconds. */
export function parseSchedule(value: string): number[] {
  return value.split(",").map(parseDuration);
}

const positiveDuration = z.string().transform((value, ctx) => {
  try {
    const ms = parseDuration(value);
    if (ms <= 0) throw new Error("must be longer than 0");
    return ms;
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return z.NEVER;
  }
});

const schedule = z.string().transform((value, ctx) => {
  try {
    const steps = parseSchedule(value);
    if (steps.length === 0) throw new Error("needs at least one step");
    return steps;
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return z.NEVER;
  }
});

/** One CSP source a frame-ancestors directive takes: a keyword, or a scheme with a host (a leading *. wildcard) and port. */
const FRAME_SOURCE = /^('self'|https?:\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?)$/i;

const frameAncestors = z
  .string()
  .transform((v) => v.trim().split(/\s+/).join(" "))
  .refine(
    (v) => v === "'none'" || v.split(" ").every((s) => FRAME_SOURCE.test(s)),
    "must be 'none', or space-separated sources: 'self', https://host, https://*.host (with an optional :port)",
  );

/** "2026-11-20=2027-01-15,…": API versions, each with a UTC date (YYYY-MM-DD); no version twice. */
const versionDates = z.string().transform((value, ctx) => {
  const dates: Partial<Record<ApiVersion, Date>> = {};
  for (const entry of value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "")) {
    const [version, date, ...rest] = entry.split("=");
    const at = /^\d{4}-\d{2}-\d{2}$/.test(date ?? "") ? new Date(`${date}T00:00:00Z`) : null;
    if (!isApiVersion(version) || !at || Number.isNaN(at.getTime()) || rest.length > 0 || version in dates) {
      ctx.addIssue({ code: "custom", message: `"${entry}" is not <version>=<YYYY-MM-DD> with a version among ${API_VERSIONS.join(", ")}, each once` });
      return z.NEVER;
    }
    dates[version] = at;
  }
  return dates;
});

export const DEFAULT_RETRY_SCHEDULE = "1m,2m,5m,15m,30m,1h,2h,4h,8h,16h";

const envSchema = z
  .object({
    PORT: port.default(3000),
    HOST: z.string().min(1).default("127.0.0.1"),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
      .optional(),
    /**
     * A direct (session) connection to the primary for what needs a session: LISTEN, graphile-worker, the worker's
     * liveness locks and migrations. Set it when DATABASE_URL goes through PgBouncer in transaction mode; default
     * DATABASE_URL.
     */
    DATABASE_DIRECT_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
      .optional(),
    /** Comma-separated postgresql:// URLs of streaming replicas that serve reads; unset by default (every read on the primary). */
    DATABASE_REPLICA_URLS: z
      .string()
      .transform((v) =>
        v
          .split(",")
          .map((u) => u.trim())
          .filter((u) => u !== ""),
      )
      .refine((urls) => urls.every((u) => /^postgres(ql)?:\/\//.test(u)), "must be comma-separated postgresql:// URLs")
      .default([]),
    /** A replica whose replay is further behind the primary than this is skipped until it catches up; default 5000. */
    REPLICA_MAX_LAG_MS: positiveInt.default(5000),
    /**
     * A statement on a replica that has not answered after this long is abandoned (its connection closed) and runs
     * again on the primary: a replica that hangs rather than refuses must not hold reads; default 3000.
     */
    REPLICA_QUERY_TIMEOUT_MS: positiveInt.default(3000),
    /** How often each process asks every replica how far it has replayed (and the primary how far it has written); default 100. */
    REPLICA_POLL_MS: positiveInt.max(10_000, "must be at most 10000").default(100),
    /**
     * Whether DATABASE_URL's pool names its statements (prepared once per connection, planned once). PgBouncer before
     * 1.21 in transaction mode cannot keep a named statement: false there. Default: false when DATABASE_DIRECT_URL is
     * set (DATABASE_URL is then taken to be such a pooler), else true.
     */
    DATABASE_PREPARED_STATEMENTS: boolean.optional(),
    /** The same for the replicas' pools (false when they are reached through PgBouncer in transaction mode); default true. */
    REPLICA_PREPARED_STATEMENTS: boolean.default(true),
    DATA_DIR: z.string().min(1).default(".data"),
    PUBLIC_BASE_URL: z.url({ message: "must be an absolute URL" }).optional(),
    ADMIN_API_KEY: z.string().min(16, "must be at least 16 characters").optional(),
    ACCESS_TOKEN_TTL_SECONDS: positiveInt.max(86_400, "must be at most 86400").default(3600),
    WEBHOOK_TIMEOUT_MS: positiveInt.default(5000),
    WEBHOOK_RETRY_SCHEDULE: schedule.default(parseSchedule(DEFAULT_RETRY_SCHEDULE)),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean.default(false),
    /** An endpoint whose deliveries have all failed for this long (from its first failure since its last success) turns INACTIVE. */
    WEBHOOK_DISABLE_AFTER: positiveDuration.default(parseDuration("5d")),
    /** Calls out (webhook tests, webhook URL host lookups) one Application may have in flight per API process; default 2. */
    WEBHOOK_TEST_CONCURRENCY: positiveInt.max(100, "must be at most 100").default(2),
    /** Deliveries per second an endpoint created without a rateLimit receives at most; default 50. */
    WEBHOOK_ENDPOINT_RATE: positiveInt.max(10_000, "must be at most 10000 (what an endpoint may ask for)").default(50),
    /**
     * Where the endpoints' pace is kept: `memory` (this process only), `postgres` (the PaceCursor table) or `redis`
     * (REDIS_URL). Default: redis with REDIS_URL, else postgres with DATABASE_URL (other worker processes may share
     * that database), else memory (embedded PostgreSQL: one process).
     */
    WEBHOOK_PACE_BACKEND: z.enum(["memory", "redis", "postgres"]).optional(),
    /** Deliveries one recover call re-sends at most (it answers hasMore; the next call continues); default 100. */
    WEBHOOK_RECOVER_MAX: positiveInt.max(1000, "must be at most 1000").default(100),
    /** A message broker connection no delivery used for this long is closed (the next delivery opens it again); default 60000. */
    WEBHOOK_DESTINATION_IDLE_MS: positiveInt.default(60_000),
    CATALOG_EVENT_WINDOW_MS: positiveInt.default(5000),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    ROLE: z.enum(["api", "worker", "all"]).default("all"),
    /** Base64 32-byte key for secrets at rest; generated and stored in the database when absent. */
    MASTER_KEY: z
      .string()
      .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64 encoded")
      .optional(),
    /** JSON array of private Ed25519 JWKs (with kid) to sign tokens with; generated and persisted when absent. */
    JWT_PRIVATE_JWKS: z
      .string()
      .transform((value, ctx) => {
        let keys: unknown;
        try {
          keys = JSON.parse(value);
        } catch {
          keys = null;
        }
        if (!Array.isArray(keys) || keys.length === 0) {
          ctx.addIssue({ code: "custom", message: "must be a JSON array of private Ed25519 JWKs, each with kid" });
          return z.NEVER;
        }
        const problems = keys.map((k, i) => signingKeyProblem(k, i)).filter((p) => p !== null);
        for (const message of problems) ctx.addIssue({ code: "custom", message });
        return problems.length === 0 ? keys.filter(isJwk) : z.NEVER;
      })
      .optional(),
    /** Overrides of the published rate limits (requests per minute) for operators and benchmarks. */
    RATE_LIMIT_SANDBOX_STORE: positiveInt.default(100),
    RATE_LIMIT_SANDBOX_APP: positiveInt.default(500),
    RATE_LIMIT_PRODUCTION_STORE: positiveInt.default(600),
    RATE_LIMIT_PRODUCTION_APP: positiveInt.default(3000),
    /**
     * Where the rate-limit counters live: `memory` (this process only), `redis` (REDIS_URL, shared) or `postgres`
     * (the RateLimitCounter table, shared). Default: redis when REDIS_URL is set, else postgres when DATABASE_URL
     * is (other processes may share that database), else memory (embedded PostgreSQL: one process).
     */
    RATE_LIMIT_BACKEND: z.enum(["memory", "redis", "postgres"]).optional(),
    /** A Redis server for shared rate-limit counters, e.g. redis://127.0.0.1:6379; unset by default. */
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
    /**
     * How long a process may answer partner requests from a grant it read (0: read on every request); default 4000.
     * A change is announced at commit and clears the cache at once; this bounds a row's age when a notification is
     * lost, so it stays within the 5 seconds a revocation may take.
     */
    GRANT_CACHE_TTL_MS: nonNegativeInt.max(5000, "must be at most 5000 (a revoked grant must fail within 5 seconds)").default(4000),
    /** Token requests per minute per client_id and source address; default 60. */
    RATE_LIMIT_TOKEN_PER_CLIENT: positiveInt.default(60),
    /** Failed token requests per minute per source address before its token requests get 429; default 30. */
    RATE_LIMIT_TOKEN_FAILURES_PER_ADDRESS: positiveInt.default(30),
    /**
     * Proxies in front of the API that append to X-Forwarded-For; the client's address is the entry that many hops
     * from the right. Default 0: the socket's address, X-Forwarded-For ignored (a client could forge it).
     */
    TRUSTED_PROXY_HOPS: nonNegativeInt.max(10, "must be at most 10").default(0),
    /** Slow secret hashes (scrypt, 16 MiB each) running at once per process; default 2. */
    SECRET_HASH_CONCURRENCY: positiveInt.max(64, "must be at most 64").default(DEFAULT_HASHING.concurrency),
    /** Secret hashes that may wait for a slot; more get 503 at once; default 32. */
    SECRET_HASH_QUEUE: nonNegativeInt.default(DEFAULT_HASHING.queue),
    /** How long a secret hash may wait for a slot before 503; default 2000 ms. */
    SECRET_HASH_WAIT_MS: positiveInt.default(DEFAULT_HASHING.waitMs),
    WORKER_CONCURRENCY: positiveInt.default(128),
    /** Connections of each process's one database pool (requests, readiness, rate limits); default 10. */
    DB_POOL_SIZE: positiveInt.default(10),
    /** Longest wait for a free database connection before the request answers 503; default 2000. */
    DB_CONNECTION_TIMEOUT_MS: positiveInt.default(2000),
    /** Requests needing the database that one process serves at once; default DB_POOL_SIZE. */
    HTTP_MAX_IN_FLIGHT: positiveInt.optional(),
    /** Requests that may wait for one of those slots; beyond them 503 at once; default twice DB_POOL_SIZE. */
    HTTP_MAX_QUEUED: z.coerce.number({ message: "must be a number" }).int("must be an integer").min(0, "must be 0 or more").optional(),
    /**
     * Of that queue, the requests one flow (an Application; all token requests; all admin-key requests; all requests
     * without a credential) may have waiting on one process; its next one is 429 CONCURRENCY_LIMIT_EXCEEDED at once.
     * Default HTTP_MAX_QUEUED (the whole queue): a full queue is shared fairly anyway, see src/http/admission.ts.
     */
    HTTP_MAX_QUEUED_PER_APPLICATION: positiveInt.optional(),
    /** Removed: it refused an Application's requests past half the slots and queue even on an idle process. */
    HTTP_MAX_PER_APPLICATION: z
      .never({ message: "was removed: admission is now fair across Applications; HTTP_MAX_QUEUED_PER_APPLICATION caps one Application's waiting requests" })
      .optional(),
    /** Longest wait in that queue before 503; default 1000. */
    HTTP_QUEUE_TIMEOUT_MS: positiveInt.default(1000),
    /** When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open on the bound interface. */
    METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
    /** A worker-only process (--role worker) serves /metrics, /healthz and /readyz on this port; default PORT. */
    METRICS_PORT: port.optional(),
    /**
     * Deepest nesting of arrays and objects accepted in a JSON body (REST, the token endpoint, /graphql variables)
     * and in a GraphQL literal; deeper is 400 before any parsing. Default 32. Capped: what walks accepted input
     * (idempotency fingerprints, GraphQL argument conversion) may then recurse without nearing the stack's end.
     */
    JSON_MAX_DEPTH: positiveInt.max(512, "must be at most 512").default(32),
    /**
     * Creates the demo SANDBOX store and its all-scope Application on the first start and prints their credentials
     * once; default: on the embedded database (no DATABASE_URL) only.
     */
    DEMO: boolean.optional(),
    GRAPHQL_MAX_DEPTH: positiveInt.default(12),
    /** Highest cost of a /graphql operation (src/graphql/limits.ts); a full page of 100 orders costs 48,601. */
    GRAPHQL_MAX_COST: positiveInt.default(50_000),
    /** Longest GraphQL document accepted, in bytes of its text; longer is 413 before it is parsed. */
    GRAPHQL_MAX_DOCUMENT_BYTES: positiveInt.default(65_536),
    /** Tokens the GraphQL parser reads before it refuses the document (400). */
    GRAPHQL_MAX_TOKENS: positiveInt.default(5000),
    /**
     * What the GraphQL documents kept for reuse (parsed and validated, accepted ones only) may take, in estimated
     * bytes of memory (about 100 per character of a document's text); default 32 MiB.
     */
    GRAPHQL_DOCUMENT_CACHE_BYTES: positiveInt.default(33_554_432),
    /**
     * Root fields of one /graphql operation that run at once; the others wait for one to finish, so an operation of
     * hundreds of aliased roots never holds the event loop for long.
     */
    GRAPHQL_READS_IN_FLIGHT: positiveInt.default(8),
    /** Live streams (storeEvents subscriptions) one process serves; the next is 503 with Retry-After. */
    GRAPHQL_MAX_STREAMS: positiveInt.default(1000),
    /** Live streams one Application holds on one process; the next is 429 with Retry-After. */
    GRAPHQL_MAX_STREAMS_PER_APPLICATION: positiveInt.default(10),
    /**
     * A backstop: how often a live stream checks that its credential still lets it read, in case a notification was
     * lost. A revoked grant or admin key, or a disabled Application, is notified at commit and ends the stream at
     * once; at most 5000 ms. A partner token's expiry ends its stream to the millisecond whatever this is.
     */
    GRAPHQL_STREAM_CHECK_MS: positiveInt.max(5000, "must be at most 5000").default(2000),
    EVENT_RETENTION_DAYS: positiveInt.default(30),
    /** How long a bulk export's signed download link (its `url`) works, in seconds (default 3600). */
    EXPORT_URL_TTL_SECONDS: positiveInt.default(3600),
    /** How long a bulk export and its file are kept after it ends, in hours (default 24); the events' sweep removes them. */
    EXPORT_RETENTION_HOURS: positiveInt.default(24),
    /** The size of the pieces an export's gzip file is stored in, in bytes (default 1048576): what its job holds in memory. */
    EXPORT_CHUNK_BYTES: positiveInt.min(1024, "must be at least 1024").default(1_048_576),
    /** How many times an export's job runs before the export is failed (default 3). */
    EXPORT_MAX_ATTEMPTS: positiveInt.max(25, "must be at most 25").default(3),
    /** The longest one export may read its snapshot, in milliseconds (default 3600000); past it the attempt fails. */
    EXPORT_TIMEOUT_MS: positiveInt.default(3_600_000),
    /**
     * Deprecated API versions, each with the date it was deprecated: "2026-11-20=2027-01-15". Their responses carry
     * Deprecation and a Link to /public/v1/versions; they keep being served. Default: none.
     */
    API_VERSIONS_DEPRECATED: versionDates.default({}),
    /** When deprecated versions may stop being served, "2026-11-20=2027-07-15": their responses carry Sunset. Default: none. */
    API_VERSION_SUNSETS: versionDates.default({}),
    /** Keep above the load balancer's idle timeout, or it may reuse a connection the server is closing. */
    HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.default(5000),
    /** A client that has not sent all its headers after this long gets 408 and a closed connection (default 15000). */
    HTTP_HEADERS_TIMEOUT_MS: positiveInt.default(15_000),
    /** Nor the whole request, headers and body (default 30000); at least HTTP_HEADERS_TIMEOUT_MS. */
    HTTP_REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
    /** The longest a portal link (createPortalLink's ttlMinutes) may stay usable, in minutes; default 1440 (a day). */
    PORTAL_LINK_MAX_TTL_MINUTES: positiveInt.max(10_080, "must be at most 10080 (a week)").default(1440),
    /**
     * Who may embed the partner portal in a frame: the CSP frame-ancestors sources, space-separated ('self',
     * https://dashboard.example.com, https://*.example.com), or 'none' (the default: nobody).
     */
    PORTAL_FRAME_ANCESTORS: frameAncestors.default("'none'"),
    /**
     * OpenTelemetry's own variables (see docs/operations.md, Traces). Traces are exported when
     * OTEL_TRACES_EXPORTER is `otlp`, or when it is unset and an OTLP endpoint is; `none` or OTEL_SDK_DISABLED turns
     * them off whatever else is set. Unset, nothing of OpenTelemetry is loaded.
     */
    OTEL_SDK_DISABLED: boolean.default(false),
    OTEL_TRACES_EXPORTER: z.enum(["otlp", "none"], { message: "must be otlp or none (the only exporters this service offers)" }).optional(),
    /** The collector's base URL; traces go to <url>/v1/traces. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ message: "must be an absolute URL" }).optional(),
    /** The traces URL itself, used as given; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ message: "must be an absolute URL" }).optional(),
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
    OTEL_SERVICE_NAME: z.string().min(1).default("partner-platform"),
    /** Deliveries carry the W3C `traceparent` of their request's span (tracing on only); default false. */
    WEBHOOK_SEND_TRACEPARENT: boolean.default(false),
    /** On SIGTERM, in-flight requests and jobs get this long to finish before the process exits anyway. */
    SHUTDOWN_TIMEOUT_MS: positiveInt.default(30_000),
  })
  .superRefine((c, ctx) => {
    // Node refuses to start a server whose header bound exceeds its request bound.
    if (c.RATE_LIMIT_BACKEND === "redis" && !c.REDIS_URL) {
      ctx.addIssue({ code: "custom", path: ["RATE_LIMIT_BACKEND"], message: "redis needs REDIS_URL" });
    }
    if (c.WEBHOOK_PACE_BACKEND === "redis" && !c.REDIS_URL) {
      ctx.addIssue({ code: "custom", path: ["WEBHOOK_PACE_BACKEND"], message: "redis needs REDIS_URL" });
    }
    // Embedded PostgreSQL is one server of our own: it has no replicas and no pooler in front.
    for (const setting of ["DATABASE_DIRECT_URL", "DATABASE_REPLICA_URLS"] as const) {
      if (!c.DATABASE_URL && (setting === "DATABASE_DIRECT_URL" ? c[setting] : c[setting].length > 0)) {
        ctx.addIssue({ code: "custom", path: [setting], message: "needs DATABASE_URL (the embedded database has no replicas and no pooler)" });
      }
    }
    for (const [version, sunset] of Object.entries(c.API_VERSION_SUNSETS)) {
      const deprecated = isApiVersion(version) ? c.API_VERSIONS_DEPRECATED[version] : undefined;
      if (!deprecated)
        ctx.addIssue({ code: "custom", path: ["API_VERSION_SUNSETS"], message: `${version} has a sunset but is not in API_VERSIONS_DEPRECATED` });
      else if (sunset < deprecated) ctx.addIssue({ code: "custom", path: ["API_VERSION_SUNSETS"], message: `${version}'s sunset is before its deprecation` });
    }
    if (c.HTTP_HEADERS_TIMEOUT_MS > c.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: "custom", path: ["HTTP_HEADERS_TIMEOUT_MS"], message: `must not exceed HTTP_REQUEST_TIMEOUT_MS (${c.HTTP_REQUEST_TIMEOUT_MS})` });
    }
  });

type Parsed = z.infer<typeof envSchema>;
export type RateLimitBackend = NonNullable<Parsed["RATE_LIMIT_BACKEND"]>;
export type Config = Omit<
  Parsed,
  | "HTTP_MAX_IN_FLIGHT"
  | "HTTP_MAX_QUEUED"
  | "HTTP_MAX_QUEUED_PER_APPLICATION"
  | "HTTP_MAX_PER_APPLICATION"
  | "RATE_LIMIT_BACKEND"
  | "METRICS_PORT"
  | "DEMO"
  | "WEBHOOK_PACE_BACKEND"
  | "DATABASE_PREPARED_STATEMENTS"
  | "API_VERSIONS_DEPRECATED"
  | "API_VERSION_SUNSETS"
> & {
  DATABASE_PREPARED_STATEMENTS: boolean;
  HTTP_MAX_IN_FLIGHT: number;
  HTTP_MAX_QUEUED: number;
  HTTP_MAX_QUEUED_PER_APPLICATION: number;
  RATE_LIMIT_BACKEND: RateLimitBackend;
  METRICS_PORT: number;
  DEMO: boolean;
  WEBHOOK_PACE_BACKEND: RateLimitBackend;
  publicBaseUrl: string;
  /** The deprecated API versions, from API_VERSIONS_DEPRECATED and API_VERSION_SUNSETS. */
  apiVersionLifecycles: VersionLifecycles;
};

/** A setting that is wrong or does not fit the database or the host: the process stops with its message, no stack. */
export class ConfigError extends Error {}

/** Settings whose values are secrets (or may carry a password): a message about them never repeats the value. */
const SECRET_SETTINGS = new Set([
  "MASTER_KEY",
  "JWT_PRIVATE_JWKS",
  "ADMIN_API_KEY",
  "METRICS_TOKEN",
  "DATABASE_URL",
  "DATABASE_DIRECT_URL",
  "DATABASE_REPLICA_URLS",
  "REDIS_URL",
]);

/** Validates the environment; throws one line per bad variable so an operator can fix them all at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const source = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0]);
      return `  ${i.path.join(".")}: ${i.message}${SECRET_SETTINGS.has(name) ? "" : ` (got ${JSON.stringify(source[name])})`}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  const publicBaseUrl = (c.PUBLIC_BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/$/, "");
  // The process's CPU, not the pool, is what runs out first (one event loop): more requests at once than
  // connections only made each slower (measured: fewer successes, twice the latency at twice the pool).
  const HTTP_MAX_IN_FLIGHT = c.HTTP_MAX_IN_FLIGHT ?? c.DB_POOL_SIZE;
  const HTTP_MAX_QUEUED = c.HTTP_MAX_QUEUED ?? 2 * c.DB_POOL_SIZE;
  const HTTP_MAX_QUEUED_PER_APPLICATION = c.HTTP_MAX_QUEUED_PER_APPLICATION ?? Math.max(1, HTTP_MAX_QUEUED);
  const shared = c.REDIS_URL ? "redis" : c.DATABASE_URL ? "postgres" : "memory";
  const RATE_LIMIT_BACKEND = c.RATE_LIMIT_BACKEND ?? shared;
  const WEBHOOK_PACE_BACKEND = c.WEBHOOK_PACE_BACKEND ?? shared;
  // A worker has no API port, so its health and metrics take PORT unless told otherwise.
  const METRICS_PORT = c.METRICS_PORT ?? c.PORT;
  // A demo Application holding every scope belongs on a developer's embedded database, not on a shared server.
  const DEMO = c.DEMO ?? c.DATABASE_URL === undefined;
  const DATABASE_PREPARED_STATEMENTS = c.DATABASE_PREPARED_STATEMENTS ?? c.DATABASE_DIRECT_URL === undefined;
  const { API_VERSIONS_DEPRECATED, API_VERSION_SUNSETS, ...rest } = c;
  const apiVersionLifecycles: VersionLifecycles = {};
  for (const version of API_VERSIONS) {
    const deprecatedAt = API_VERSIONS_DEPRECATED[version];
    if (deprecatedAt) apiVersionLifecycles[version] = { deprecatedAt, sunsetAt: API_VERSION_SUNSETS[version] ?? null };
  }
  return {
    ...rest,
    apiVersionLifecycles,
    DATABASE_PREPARED_STATEMENTS,
    HTTP_MAX_IN_FLIGHT,
    HTTP_MAX_QUEUED,
    HTTP_MAX_QUEUED_PER_APPLICATION,
    RATE_LIMIT_BACKEND,
    WEBHOOK_PACE_BACKEND,
    METRICS_PORT,
    DEMO,
    publicBaseUrl,
  };
}
