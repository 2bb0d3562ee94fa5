import { Session } from "node:inspector/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createOrder } from "../helpers/fixtures.js";
import { LATEST_API_VERSION } from "../../src/platform/versions.js";

/**
 * Which files of the service a request runs (functions with a call during it, by V8's precise coverage, after a warm-up
 * request): the hop-by-hop figures of docs/architecture.md, and the rule that a request runs no domain it has no
 * business with.
 */

let app: TestApp;
let t: Tenant;
let orderId: string;
const session = new Session();

beforeAll(async () => {
  app = await startTestApp();
  // In the newest version: the path as the code runs it, with no version change to apply.
  t = await createTenant(app, { apiVersion: LATEST_API_VERSION });
  await createCatalog(app.services.db, t.storeId);
  for (let i = 0; i < 3; i++) orderId = (await createOrder(app.services.db, t.storeId, { status: "PENDING" })).id;
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
});
afterAll(() => app.close());

async function touched(work: () => Promise<unknown>): Promise<string[]> {
  await work(); // warm: first-call lazy work is not the steady state
  await session.post("Profiler.takePreciseCoverage"); // resets counts
  await work();
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const files = new Set<string>();
  for (const script of result) {
    const m = /\/(src|workers)\/(.+\.ts)/.exec(script.url);
    if (!m || m[2].startsWith("generated/")) continue;
    if (script.functions.some((f) => f.ranges[0].count > 0 && f.functionName !== "")) files.add(`${m[1]}/${m[2]}`);
  }
  return [...files].sort();
}

const domainsOf = (files: string[]) => [...new Set(files.filter((f) => f.startsWith("src/modules/")).map((f) => f.split("/")[2]))].sort();

it("a list read runs the orders domain (with the store's Address), the versions (which render the answer), the platform and the HTTP and REST adapters only", async () => {
  const files = await touched(async () => {
    const r = await call(app, "GET", "/public/v1/orders?limit=20", { token: t.token });
    expect(r.status).toBe(200);
  });
  expect(domainsOf(files)).toEqual(["orders", "store", "versions"]);
  expect(files.filter((f) => f.startsWith("src/graphql/") || f.startsWith("workers/"))).toEqual([]);
  // The figure docs/architecture.md gives: files with code that ran for the request.
  expect(files.length).toBeLessThanOrEqual(40);
});

it("a status change runs the orders domain, the platform's events and nothing of webhooks (the worker fans out)", async () => {
  let n = 0;
  const files = await touched(async () => {
    const r = await call(app, "PATCH", `/public/v1/orders/${orderId}/status`, { token: t.token, body: { status: n++ === 0 ? "CONFIRMED" : "PREPARING" } });
    expect(r.status).toBe(200);
  });
  expect(domainsOf(files)).toEqual(["orders", "store", "versions"]);
  expect(files).toContain("src/platform/events/outbox.ts");
  expect(files.length).toBeLessThanOrEqual(48);
});
