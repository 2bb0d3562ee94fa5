import { expect, it } from "vitest";
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
