import { expect, it } from "vitest";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { ConfigError, loadConfig } from "../../src/platform/config.js";

it("defaults are the documented ones", () => {
  const c = loadConfig({});
  expect(c).toMatchObject({
    PORT: 3000,
    DATA_DIR: ".data",
    ACCESS_TOKEN_TTL_SECONDS: 3600,
    WEBHOOK_TIMEOUT_MS: 5000,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
    ROLE: "all",
  });
  expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([60_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 57_600_000]);
  expect(c.publicBaseUrl).toBe("http://127.0.0.1:3000");
});

it("reports every bad variable at once, one line each, naming it", () => {
  let message = "";
  try {
    loadConfig({
      PORT: "eighty",
      DATABASE_URL: "mysql://x",
      WEBHOOK_RETRY_SCHEDULE: "1m,soon",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "maybe",
      LOG_LEVEL: "loud",
      ROLE: "both",
    });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    message = (e as Error).message;
  }
  for (const name of ["PORT", "DATABASE_URL", "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_ALLOW_PRIVATE_NETWORKS", "LOG_LEVEL", "ROLE"]) {
    expect(message).toMatch(new RegExp(`^  ${name}: `, "m"));
  }
  expect(message).toContain('"soon" is not a duration');
});

it("parses a short retry schedule for tests and operators", () => {
  expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "100ms,2s,1m" }).WEBHOOK_RETRY_SCHEDULE).toEqual([100, 2000, 60_000]);
});

it("bounds slow clients by 15 s for headers and 30 s per request, and refuses a header bound above the request bound", () => {
  expect(loadConfig({})).toMatchObject({ HTTP_HEADERS_TIMEOUT_MS: 15_000, HTTP_REQUEST_TIMEOUT_MS: 30_000 });
  expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: "40000" })).toThrow(/^ {2}HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS \(30000\)/m);
});

it("picks the rate-limit counters from the setup unless RATE_LIMIT_BACKEND says", () => {
  const backend = (env: Record<string, string>) => loadConfig(env).RATE_LIMIT_BACKEND;
  const db = "postgresql://127.0.0.1/x";
  expect(backend({})).toBe("memory");
  expect(backend({ DATABASE_URL: db })).toBe("postgres");
  expect(backend({ REDIS_URL: "redis://127.0.0.1:6379" })).toBe("redis");
  expect(backend({ DATABASE_URL: db, REDIS_URL: "redis://127.0.0.1:6379" })).toBe("redis");
  expect(backend({ DATABASE_URL: db, RATE_LIMIT_BACKEND: "memory" })).toBe("memory");
  expect(() => loadConfig({ RATE_LIMIT_BACKEND: "redis" })).toThrow(/RATE_LIMIT_BACKEND: redis needs REDIS_URL/);
  expect(() => loadConfig({ REDIS_URL: "http://x" })).toThrow(/REDIS_URL: must be a redis/);
});

it("caches grants for 4 s by default, 0 turns it off, and refuses more than the 5 s a revocation may take", () => {
  expect(loadConfig({}).GRANT_CACHE_TTL_MS).toBe(4000);
  expect(loadConfig({ GRANT_CACHE_TTL_MS: "0" }).GRANT_CACHE_TTL_MS).toBe(0);
  expect(loadConfig({ GRANT_CACHE_TTL_MS: "5000" }).GRANT_CACHE_TTL_MS).toBe(5000);
  expect(() => loadConfig({ GRANT_CACHE_TTL_MS: "5001" })).toThrow(
    /^ {2}GRANT_CACHE_TTL_MS: must be at most 5000 \(a revoked grant must fail within 5 seconds\) \(got "5001"\)$/m,
  );
  expect(() => loadConfig({ GRANT_CACHE_TTL_MS: "-1" })).toThrow(/GRANT_CACHE_TTL_MS: must be 0 or more/);
});

it("makes the demo on the embedded database only unless DEMO says, and serves a worker's health on PORT unless METRICS_PORT says", () => {
  expect(loadConfig({}).DEMO).toBe(true);
  expect(loadConfig({ DATABASE_URL: "postgresql://127.0.0.1/x" }).DEMO).toBe(false);
  expect(loadConfig({ DATABASE_URL: "postgresql://127.0.0.1/x", DEMO: "true" }).DEMO).toBe(true);
  expect(loadConfig({ DEMO: "false" }).DEMO).toBe(false);
  expect(loadConfig({ PORT: "4000" }).METRICS_PORT).toBe(4000);
  expect(loadConfig({ PORT: "4000", METRICS_PORT: "9464" }).METRICS_PORT).toBe(9464);
});

it("takes only Ed25519 private keys whose x matches d in JWT_PRIVATE_JWKS, and never repeats a secret setting's value", () => {
  const jwk = { ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid: "k1" };
  const other = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
  expect(loadConfig({ JWT_PRIVATE_JWKS: JSON.stringify([jwk]) }).JWT_PRIVATE_JWKS).toEqual([jwk]);
  const refused = (value: unknown) => () => loadConfig({ JWT_PRIVATE_JWKS: JSON.stringify(value) });
  expect(refused([{ ...jwk, x: other.x }])).toThrow(/JWT_PRIVATE_JWKS: key "k1": its x is not the public half of its d$/m);
  expect(refused([{ ...jwk, kty: "RSA" }])).toThrow(/key "k1" is not a private Ed25519 JWK/);
  expect(refused([{ ...jwk, kid: undefined }])).toThrow(/key 1 has no kid/);
  expect(refused([{ ...jwk, d: "eA" }])).toThrow(/key "k1" is not a valid Ed25519 key/);
  expect(refused([])).toThrow(/must be a JSON array of private Ed25519 JWKs/);
  for (const [name, value] of [
    ["JWT_PRIVATE_JWKS", JSON.stringify([{ ...jwk, x: other.x }])],
    ["MASTER_KEY", randomBytes(31).toString("base64")],
    ["ADMIN_API_KEY", "short-secret"],
    ["DATABASE_URL", "mysql://user:hunter2@db/x"],
  ]) {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^ {2}${name}: [^(]*$`, "m"));
  }
});

it("takes read replicas and a direct URL beside DATABASE_URL: a direct URL means a pooler, so no named statements there", () => {
  const plain = loadConfig({ DATABASE_URL: "postgresql://db/partner" });
  expect(plain).toMatchObject({ DATABASE_REPLICA_URLS: [], REPLICA_MAX_LAG_MS: 5000, REPLICA_POLL_MS: 100, DATABASE_PREPARED_STATEMENTS: true });
  const pooled = loadConfig({
    DATABASE_URL: "postgresql://pgbouncer:6432/partner",
    DATABASE_DIRECT_URL: "postgresql://primary/partner",
    DATABASE_REPLICA_URLS: " postgresql://r1/partner, postgres://r2/partner ,",
  });
  expect(pooled).toMatchObject({
    DATABASE_REPLICA_URLS: ["postgresql://r1/partner", "postgres://r2/partner"],
    DATABASE_PREPARED_STATEMENTS: false,
    REPLICA_PREPARED_STATEMENTS: true,
  });
  expect(
    loadConfig({ DATABASE_URL: "postgresql://p/x", DATABASE_DIRECT_URL: "postgresql://d/x", DATABASE_PREPARED_STATEMENTS: "true" })
      .DATABASE_PREPARED_STATEMENTS,
  ).toBe(true);
});

it("refuses replicas or a direct URL without DATABASE_URL (embedded has neither), and a replica URL that is no postgresql:// URL, without echoing it", () => {
  expect(() => loadConfig({ DATABASE_REPLICA_URLS: "postgresql://r1/partner" })).toThrow(/DATABASE_REPLICA_URLS: needs DATABASE_URL/);
  expect(() => loadConfig({ DATABASE_DIRECT_URL: "postgresql://d/partner" })).toThrow(/DATABASE_DIRECT_URL: needs DATABASE_URL/);
  let message = "";
  try {
    loadConfig({ DATABASE_URL: "postgresql://p/x", DATABASE_REPLICA_URLS: "postgresql://r1/x,mysql://user:secret@r2/x" });
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toMatch(/DATABASE_REPLICA_URLS: must be comma-separated postgresql:\/\/ URLs/);
  expect(message).not.toContain("secret");
});

it("queues up to the whole queue for one Application by default, and names the replacement of the removed per-Application share", () => {
  const c = loadConfig({ DB_POOL_SIZE: "10" });
  expect(c).toMatchObject({ HTTP_MAX_IN_FLIGHT: 10, HTTP_MAX_QUEUED: 20, HTTP_MAX_QUEUED_PER_APPLICATION: 20 });
  expect(loadConfig({ HTTP_MAX_QUEUED: "0" }).HTTP_MAX_QUEUED_PER_APPLICATION).toBe(1);
  expect(() => loadConfig({ HTTP_MAX_PER_APPLICATION: "15" })).toThrow(/HTTP_MAX_PER_APPLICATION: was removed: .*HTTP_MAX_QUEUED_PER_APPLICATION/);
});
