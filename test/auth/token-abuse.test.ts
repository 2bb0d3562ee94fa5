import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { randomBytes } from "node:crypto";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import { hashingStats } from "../../src/platform/crypto/hash.js";
import { addressKey, sourceAddress } from "../../src/http/address.js";
import { expectProblem, startOfFreshMinute } from "../platform/support.js";

/**
 * Credential stuffing at the token endpoint, from distinct loopback source addresses: the server listens on
 * 127.0.0.1, and each client socket is bound to its own 127.0.0.x (all of 127/8 is loopback on Linux).
 */
const FAILURES_PER_ADDRESS = 5;
const PER_CLIENT = 3;

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_TOKEN_FAILURES_PER_ADDRESS: String(FAILURES_PER_ADDRESS), RATE_LIMIT_TOKEN_PER_CLIENT: String(PER_CLIENT) });
  tenant = await createTenant(app, { scopes: ["merchant:read"] });
  await startOfFreshMinute(10);
});
afterAll(() => app.close());

/** POST /partner/auth/token from `localAddress`, on a connection of its own. */
function requestToken(
  localAddress: string,
  clientId: string,
  clientSecret: string,
  extraHeaders: Record<string, string> = {},
): Promise<ApiResponse<Record<string, unknown>>> {
  return post(localAddress, "/partner/auth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }, extraHeaders);
}

/** A JSON POST to `path` from `localAddress`, on a connection of its own. */
function post(
  localAddress: string,
  path: string,
  fields: Record<string, string>,
  extraHeaders: Record<string, string> = {},
): Promise<ApiResponse<Record<string, unknown>>> {
  const body = JSON.stringify(fields);
  const headers = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...extraHeaders };
  return new Promise((resolve, reject) => {
    const url = new URL(path, app.baseUrl);
    const req = request(url, { method: "POST", localAddress, agent: false, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") headers.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers, body: JSON.parse(text) as Record<string, unknown> });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const randomClientId = () => `sbx_${randomBytes(12).toString("hex")}`;

describe("token endpoint against credential stuffing", () => {
  it("refuses a flood of random client_ids from one address with 429 before hashing, once its failures reach the limit", async () => {
    const flooder = "127.0.0.11";
    const before = hashingStats().started;
    const workers = 4;
    const statuses: number[] = [];
    let refusal: ApiResponse<Record<string, unknown>> | undefined;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < 10; i++) {
          const res = await requestToken(flooder, randomClientId(), "guess");
          statuses.push(res.status);
          if (res.status === 429) refusal = res;
        }
      }),
    );
    const hashed = hashingStats().started - before;
    // A request is admitted only while fewer than the limit have failed; at most the other workers' requests
    // can be between that check and their recorded failure.
    expect(hashed).toBeGreaterThanOrEqual(FAILURES_PER_ADDRESS);
    expect(hashed).toBeLessThanOrEqual(FAILURES_PER_ADDRESS + workers - 1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(hashed);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - hashed);

    if (!refusal) throw new Error("no request was refused");
    const problem = expectProblem(refusal, 429, "RATE_LIMIT_EXCEEDED");
    expect(problem.detail).toMatch(/failed token requests from this address/);
    expect(Number(refusal.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    // The address is refused even with the right credentials, before they are checked; another address is not.
    const afterFlood = hashingStats().started;
    expect((await requestToken(flooder, tenant.clientId, tenant.clientSecret)).status).toBe(429);
    // X-Forwarded-For is the client's own claim unless TRUSTED_PROXY_HOPS says a proxy wrote it.
    expect((await requestToken(flooder, tenant.clientId, tenant.clientSecret, { "x-forwarded-for": "203.0.113.7" })).status).toBe(429);
    expect(hashingStats().started).toBe(afterFlood);
    expect((await requestToken("127.0.0.12", tenant.clientId, tenant.clientSecret)).status).toBe(200);
  });

  it("wrong guesses for a known client_id from one address do not lock its partner out from another", async () => {
    const guesser = "127.0.0.13";
    const statuses: number[] = [];
    for (let i = 0; i < PER_CLIENT + 2; i++) statuses.push((await requestToken(guesser, tenant.clientId, `guess-${i}`)).status);
    expect(statuses).toEqual([...Array<number>(PER_CLIENT).fill(401), 429, 429]);
    const refused = await requestToken(guesser, tenant.clientId, tenant.clientSecret);
    expect(expectProblem(refused, 429, "RATE_LIMIT_EXCEEDED").detail).toMatch(/token requests of this client_id from this address/);

    const partner = await requestToken("127.0.0.14", tenant.clientId, tenant.clientSecret);
    expect(partner.status).toBe(200);
    expect(partner.body).toMatchObject({ token_type: "Bearer", tenant_id: tenant.storeCode });
  });

  it("successful token requests do not count as failures of their address", async () => {
    const busy = "127.0.0.15";
    const other = await createTenant(app, { scopes: ["merchant:read"] });
    for (const t of [tenant, other]) {
      for (let i = 0; i < PER_CLIENT; i++) expect((await requestToken(busy, t.clientId, t.clientSecret)).status).toBe(200);
    }
    // Six successes from one address, over its failure limit of five: a wrong guess is still answered 401.
    expect((await requestToken(busy, randomClientId(), "guess")).status).toBe(401);
  });
});

describe("cross-site browser posts and revocations", () => {
  it("cross-site posts with wrong credentials are refused before they are checked or counted: the address is not locked out", async () => {
    const visitor = "127.0.0.16";
    const before = hashingStats().started;
    for (let i = 0; i < 40; i++) {
      const res = await requestToken(visitor, tenant.clientId, `guess-${i}`, { "sec-fetch-site": "cross-site" });
      expect(expectProblem(res, 403, "FORBIDDEN")).toMatchObject({ error: "invalid_request" });
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
    expect(hashingStats().started).toBe(before);
    const own = await requestToken(visitor, tenant.clientId, tenant.clientSecret, { "sec-fetch-site": "same-origin" });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
  });

  it("a revocation whose client fails to authenticate counts toward its address's failure limit", async () => {
    const guesser = "127.0.0.17";
    for (let i = 0; i < FAILURES_PER_ADDRESS; i++) {
      const res = await post(guesser, "/partner/auth/revoke", { token: tenant.token, client_id: randomClientId(), client_secret: "guess" });
      expect(res.status).toBe(401);
    }
    expect((await requestToken(guesser, tenant.clientId, tenant.clientSecret)).status).toBe(429);
    const refused = await post(guesser, "/partner/auth/revoke", { token: tenant.token, client_id: tenant.clientId, client_secret: tenant.clientSecret });
    expect(expectProblem(refused, 429, "RATE_LIMIT_EXCEEDED").detail).toMatch(/failed token requests from this address/);
  });

  it("revocations take the token endpoint's slots of their client and address", async () => {
    const busy = "127.0.0.18";
    const revoke = () => post(busy, "/partner/auth/revoke", { token: "unknown", client_id: tenant.clientId, client_secret: tenant.clientSecret });
    for (let i = 0; i < PER_CLIENT; i++) expect((await revoke()).status).toBe(200);
    expect(expectProblem(await revoke(), 429, "RATE_LIMIT_EXCEEDED").detail).toMatch(/token requests of this client_id from this address/);
    expect((await requestToken(busy, tenant.clientId, tenant.clientSecret)).status).toBe(429);
  });
});

describe("the source address a token request is limited by", () => {
  it("is the socket's peer unless trusted proxies are configured, then the entry they appended", () => {
    expect(sourceAddress("127.0.0.1", "203.0.113.7", 0)).toBe("127.0.0.1");
    expect(sourceAddress("10.0.0.2", "198.51.100.1, 203.0.113.7", 1)).toBe("203.0.113.7");
    expect(sourceAddress("10.0.0.2", "198.51.100.1, 203.0.113.7, 10.0.0.1", 2)).toBe("203.0.113.7");
    expect(sourceAddress("10.0.0.2", ["198.51.100.1", "203.0.113.7"], 1)).toBe("203.0.113.7");
    // Without the header, or with garbage where the proxy's entry should be, the peer it is.
    expect(sourceAddress("10.0.0.2", undefined, 1)).toBe("10.0.0.2");
    expect(sourceAddress("10.0.0.2", "not-an-address", 1)).toBe("10.0.0.2");
  });

  it("groups IPv6 by /64 and unwraps IPv4-mapped addresses", () => {
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2::ffff")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
  });
});
