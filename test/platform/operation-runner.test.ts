import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import { schema } from "../../src/graphql/schema.js";
import type { OperationRunner } from "../../src/rest/execute.js";
import { prismaRunner } from "../bench/baselines/prisma-runner.js";

/**
 * The read benchmark's baseline (b) is the service with GraphQL swapped out through `runOperation`. Its ratio
 * means something only if it answers exactly what the façade answers, behind exactly the same pipeline: these
 * tests pin both, so a change to a resolver or to the pipeline cannot quietly make the baseline easier.
 */

let app: TestApp;
let tenant: Tenant;
let other: Tenant;
let server: Server;
let baselineUrl: string;
const operations: string[] = [];
const orderIds: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app, { environment: "PRODUCTION" });
  other = await createTenant(app, { environment: "PRODUCTION" });
  const { products } = await createCatalog(app.services.db, tenant.storeId);
  const customer = await createCustomer(app.services.db, tenant.storeId);
  for (let i = 0; i < 7; i++) {
    const order = await createOrder(app.services.db, tenant.storeId, {
      customerId: i % 3 === 2 ? null : i % 2 ? customer.id : undefined,
      type: i % 3 ? "DELIVERY" : "PICKUP",
      items: [
        {
          name: products[0].name,
          productId: products[0].id,
          quantity: 1 + i,
          unitPriceCents: products[0].priceCents,
          additionals: [{ name: "Extra", quantity: 1, priceCents: 300 }],
        },
        { name: products[1].name, productId: products[1].id, quantity: 1, unitPriceCents: products[1].priceCents, notes: i % 2 ? "no onions" : undefined },
      ],
      payments: [{ method: "CASH", status: "PENDING", changeForCents: i % 2 ? 10000 : null }],
    });
    orderIds.push(order.id);
  }
  const runner = prismaRunner(app.services.db);
  const counted: OperationRunner = (operation, ctx) => {
    operations.push(operation.operationId);
    return runner(operation, ctx);
  };
  server = createHttpServer(createHttpApp(app.services, schema, { runOperation: counted }));
  baselineUrl = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
  await app?.close();
});

async function get(base: string, path: string, token?: string): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe("baseline (b): the service's pipeline with the operation answered by Prisma", () => {
  it("answers the list and every detail byte for byte as the façade does", async () => {
    for (const path of ["/public/v1/orders?limit=20", "/public/v1/orders?limit=3", "/public/v1/orders", ...orderIds.map((id) => `/public/v1/orders/${id}`)]) {
      const [facade, baseline] = await Promise.all([get(app.baseUrl, path, tenant.token), get(baselineUrl, path, tenant.token)]);
      expect(facade.status, facade.text).toBe(200);
      expect(baseline.text, path).toBe(facade.text);
    }
  });

  it("keeps the pipeline in front: rate-limit headers, 401, 400 and 404 as the façade gives them", async () => {
    operations.length = 0;
    const ok = await get(baselineUrl, "/public/v1/orders?limit=2", tenant.token);
    expect(ok.headers.get("x-ratelimit-limit")).toBe("600");
    expect(Number(ok.headers.get("x-ratelimit-remaining"))).toBeLessThan(600);

    for (const [path, token] of [
      ["/public/v1/orders", undefined],
      ["/public/v1/orders?limit=0", tenant.token],
      ["/public/v1/orders/not-a-uuid", tenant.token],
    ] as const) {
      const [facade, baseline] = await Promise.all([get(app.baseUrl, path, token), get(baselineUrl, path, token)]);
      expect(baseline.status).toBe(facade.status);
      expect(JSON.parse(baseline.text).code).toBe(JSON.parse(facade.text).code);
    }
    // Only the valid request reached the runner: authentication and validation stopped the others before it.
    expect(operations).toEqual(["listOrders"]);

    const foreign = await get(baselineUrl, `/public/v1/orders/${orderIds[0]}`, other.token);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text).code).toBe("NOT_FOUND");
  });
});
