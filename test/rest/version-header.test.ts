import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant } from "../helpers/tenants.js";
import { FIRST_API_VERSION, LATEST_API_VERSION, type ApiVersion } from "../../src/platform/versions.js";

/**
 * Every /public/v1 answer given once the caller's grant is read names the version it is given in, errors and 429s
 * included: the request's Api-Version, else the Application's pin. A store here takes 6 requests a minute.
 */

const STORE_LIMIT = 6;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_SANDBOX_STORE: String(STORE_LIMIT) });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** A 200, a 400 for a bad query parameter, a 404 for an unknown order and for an unknown route, then 429s. */
async function answers(token: string, headers: Record<string, string>): Promise<{ status: number; version: string | null }[]> {
  const paths = ["/public/v1/orders", "/public/v1/orders?limit=abc", `/public/v1/orders/${randomUUID()}`, "/public/v1/nothing-here"];
  while (paths.length <= STORE_LIMIT) paths.push("/public/v1/orders");
  const out = [];
  for (const path of paths) {
    const res = await call(app, "GET", path, { token, headers });
    out.push({ status: res.status, version: res.headers.get("api-version") });
  }
  return out;
}

function expectEveryAnswerIn(got: { status: number; version: string | null }[], version: ApiVersion): void {
  expect(got.slice(0, 4).map((a) => a.status)).toEqual([200, 400, 404, 404]);
  expect(got.at(-1)?.status).toBe(429);
  expect(got.filter((a) => a.version !== version)).toEqual([]);
}

describe("the Api-Version answer header", () => {
  it("is the Application's pin on a 200, a 400, a 404 and a 429", async () => {
    const t = await createTenant(app, { apiVersion: FIRST_API_VERSION });
    expectEveryAnswerIn(await answers(t.token, {}), FIRST_API_VERSION);
  });

  it("is the request's Api-Version on each of them", async () => {
    const t = await createTenant(app, { apiVersion: FIRST_API_VERSION });
    expectEveryAnswerIn(await answers(t.token, { "api-version": LATEST_API_VERSION }), LATEST_API_VERSION);
  });
});
