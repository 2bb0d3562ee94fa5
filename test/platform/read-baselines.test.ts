import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { runScript, type ServiceProcess } from "../helpers/process.js";

/**
 * The read benchmark's strong baseline (a), in both of its ways of building JSON, and its Fastify + Prisma peer:
 * the bench fails before timing when they answer otherwise than the façade, and these tests keep that from
 * happening first in a benchmark run. They also pin what the baselines check per request (token, scope, grant),
 * so none of them gets cheaper by checking less.
 */

let app: TestApp;
let tenant: Tenant;
let other: Tenant;
const orderIds: string[] = [];
const baselines: { name: string; process: ServiceProcess; baseUrl: string }[] = [];

beforeAll(async () => {
  app = await startTestApp();
  [tenant, other] = await Promise.all([createTenant(app, { environment: "PRODUCTION" }), createTenant(app, { environment: "PRODUCTION" })]);
  const { products } = await createCatalog(app.services.db, tenant.storeId);
  const customer = await createCustomer(app.services.db, tenant.storeId);
  for (let i = 0; i < 6; i++) {
    const order = await createOrder(app.services.db, tenant.storeId, {
      customerId: i % 3 === 2 ? null : i % 2 ? customer.id : undefined,
      type: i % 3 ? "DELIVERY" : "PICKUP",
      items: [
        {
          name: products[0].name,
          productId: products[0].id,
          quantity: 1 + i,
          unitPriceCents: products[0].priceCents,
          additionals: i % 2 ? [] : [{ name: "Extra", quantity: 1, priceCents: 350 }],
        },
        { name: products[1].name, productId: products[1].id, quantity: 1, unitPriceCents: products[1].priceCents, notes: i % 2 ? "no onions" : undefined },
      ],
      payments: [{ method: "CASH", status: "PENDING", changeForCents: i % 2 ? 10000 : null }],
    });
    orderIds.push(order.id);
  }
  orderIds.push((await createOrder(app.services.db, other.storeId)).id);
  const env = { DATABASE_URL: app.databaseUrl, DB_POOL_SIZE: "2", API_URL: app.baseUrl, ISSUER: app.services.issuer };
  const scripts = [
    ["(a) JSON in SQL", "pg-server.ts", { BASELINE_JSON: "sql" }],
    ["(a) JSON in JS", "pg-server.ts", { BASELINE_JSON: "js" }],
    ["Fastify + Prisma", "fastify-prisma-server.ts", {}],
  ] as const;
  for (const [name, file, extra] of scripts) {
    const process = runScript(`test/bench/baselines/${file}`, [], { ...env, ...extra });
    baselines.push({ name, process, baseUrl: "" });
  }
  await Promise.all(
    baselines.map(async (b) => {
      await b.process.waitFor(/"msg":"listening".*"port":\d+/);
      b.baseUrl = `http://127.0.0.1:${/"port":(\d+)/.exec(b.process.output())?.[1]}`;
    }),
  );
});
afterAll(async () => {
  await Promise.all(
    baselines.map((b) => {
      b.process.child.kill("SIGTERM");
      return b.process.exited;
    }),
  );
  await app?.close();
});

async function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, body: JSON.parse(await res.text()) };
}

/** The façade's answer and each baseline's, to one request (one request id for all, so problems compare in full). */
async function answers(
  path: string,
  token?: string,
): Promise<{ facade: { status: number; body: unknown }; theirs: [string, { status: number; body: unknown }][] }> {
  const headers: Record<string, string> = { "x-request-id": randomUUID(), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const [facade, ...theirs] = await Promise.all([app.baseUrl, ...baselines.map((b) => b.baseUrl)].map((base) => get(base, path, headers)));
  return { facade, theirs: theirs.map((t, i) => [baselines[i].name, t]) };
}

const codeOf = (body: unknown): unknown => (typeof body === "object" && body !== null && "code" in body ? body.code : undefined);

describe("the read baselines answer as the façade does", () => {
  it("first pages of several sizes and every detail, JSON equal in full", async () => {
    const own = orderIds.slice(0, 6);
    for (const path of [
      "/public/v1/orders",
      "/public/v1/orders?limit=20",
      "/public/v1/orders?limit=4",
      "/public/v1/orders?limit=1",
      ...own.map((id) => `/public/v1/orders/${id}`),
    ]) {
      const { facade, theirs } = await answers(path, tenant.token);
      expect(facade.status, path).toBe(200);
      for (const [name, answer] of theirs) expect(answer, `${name} ${path}`).toEqual(facade);
    }
  });

  it("another store's order and an unknown id: the same 404 problem", async () => {
    for (const path of [`/public/v1/orders/${orderIds[6]}`, `/public/v1/orders/${randomUUID()}`]) {
      const { facade, theirs } = await answers(path, tenant.token);
      expect(facade.status).toBe(404);
      for (const [name, answer] of theirs) expect(answer, `${name} ${path}`).toEqual(facade);
    }
  });

  it("check the token, its scope and the grant on every request, with the façade's status and code", async () => {
    const noScope = await createTenant(app, { environment: "PRODUCTION", scopes: ["customers:read"] });
    const revoked = await createTenant(app, { environment: "PRODUCTION" });
    await app.services.pool.query(`UPDATE "Grant" SET status = 'REVOKED' WHERE "storeId" = $1`, [revoked.storeId]);
    const [header, payload] = tenant.token.split(".");
    const forged = `${header}.${payload}.${Buffer.alloc(64).toString("base64url")}`;
    for (const [token, status] of [
      [undefined, 401],
      ["not-a-jwt", 401],
      [forged, 401],
      [noScope.token, 403],
      [revoked.token, 403],
    ] as const) {
      for (const path of ["/public/v1/orders", `/public/v1/orders/${orderIds[0]}`]) {
        const { facade, theirs } = await answers(path, token);
        expect(facade.status).toBe(status);
        for (const [name, answer] of theirs) {
          expect(answer.status, `${name} ${path}`).toBe(status);
          expect(codeOf(answer.body), `${name} ${path}`).toBe(codeOf(facade.body));
        }
      }
    }
  });
});
