import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, graphql } from "../helpers/tenants.js";
import { hashingStats } from "../../src/platform/crypto/hash.js";
import { expectProblem } from "../platform/support.js";

/**
 * The bound on slow hashing is process-wide, and this file runs in a process of its own: one hash at a time and
 * one waiting, so a burst of credential checks overflows it at once.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    SECRET_HASH_CONCURRENCY: "1",
    SECRET_HASH_QUEUE: "1",
    RATE_LIMIT_TOKEN_FAILURES_PER_ADDRESS: "1000",
    RATE_LIMIT_TOKEN_PER_CLIENT: "1000",
  });
});
afterAll(() => app.close());

const tokenRequest = () =>
  call(app, "POST", "/partner/auth/token", {
    body: { grant_type: "client_credentials", client_id: `sbx_${randomBytes(12).toString("hex")}`, client_secret: "guess" },
  });

describe("the bound on secret hashing", () => {
  it("runs at most the configured number of hashes at once; past the queue, token requests get 503 with Retry-After", async () => {
    const before = hashingStats();
    const responses = await Promise.all(Array.from({ length: 30 }, tokenRequest));
    const after = hashingStats();
    expect(after.peakRunning).toBe(1);
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    // The one running and the one waiting are both checked; the others were refused without hashing.
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(2);
    expect(after.started - before.started).toBe(statuses.filter((s) => s === 401).length);
    expect(after.refused - before.refused).toBe(statuses.filter((s) => s === 503).length);
    const shed = responses.find((r) => r.status === 503);
    if (!shed) throw new Error("no token request was shed");
    expectProblem(shed, 503, "SERVICE_UNAVAILABLE");
    expect(shed.headers.get("retry-after")).toBe("1");
  });

  it("bounds Application creation by the same gate", async () => {
    const before = hashingStats();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        graphql<{ createApplication: { clientSecret: string } }>(
          app,
          `mutation($name: String!) { createApplication(input: { name: $name, environment: SANDBOX, scopes: [MERCHANT_READ] }) { clientSecret } }`,
          { name: `burst ${i}` },
        ),
      ),
    );
    const after = hashingStats();
    expect(after.peakRunning).toBe(1);
    const created = results.filter((r) => r.data?.createApplication.clientSecret);
    const shed = results.filter((r) => r.errors?.[0]?.extensions?.code === "SERVICE_UNAVAILABLE");
    expect(created.length + shed.length).toBe(20);
    expect(after.started - before.started).toBe(created.length);
    expect(shed.length).toBeGreaterThanOrEqual(1);
  });
});
