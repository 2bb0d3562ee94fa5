import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import { DELIVERED_EVENTS } from "../../src/modules/events/types.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { eventSchemaName } from "../../src/rest/openapi-platform.js";
import type { JsonSchema } from "../../src/platform/json.js";
import { routes } from "../../src/rest/routes.js";
import { defineBody, type OperationInput } from "../../src/platform/validate.js";
import { startWorker } from "../../workers/runner.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createCatalog, fakeAddress } from "../helpers/fixtures.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { createApplication, createGrant } from "../../src/modules/admin/operations.js";
import { createExport } from "../../src/modules/exports/service.js";

/**
 * What each event really carries against its published webhook schema: every field the code emits is documented
 * and required, and nothing is documented that the code does not send.
 */

const doc = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
let app: TestApp;
let t: Tenant;
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp({ CATALOG_EVENT_WINDOW_MS: "100", WEBHOOK_RETRY_SCHEDULE: "10ms", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  t = await createTenant(app);
  receiver = await startReceiver();
  // The operational webhook events: a receiver that is gone, and one that always fails (its deliveries dead-letter).
  receiver.on("/gone", () => ({ status: 410 }));
  receiver.on("/down", () => ({ status: 500 }));
});
afterAll(async () => {
  await receiver.close();
  destroyWebhookAgents();
  await app.close();
});

/** What the input's check says about a value it refuses. */
function refusal(input: OperationInput, value: unknown): string {
  try {
    input.check(value);
    return "accepted";
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

async function send<T = { id: string }>(method: string, path: string, body: unknown): Promise<T> {
  const res = await call<T>(app, method, path, { token: t.token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Emits every event type through the service's own doors: REST for partners, GraphQL for the admin's store change. */
async function emitEveryType(): Promise<void> {
  await send("POST", "/public/v1/webhooks", { url: receiver.url("/down"), events: ["store.updated"] });
  const gone = await send("POST", "/public/v1/webhooks", { url: receiver.url("/gone"), events: ["order.created"] });
  await send("POST", `/public/v1/webhooks/${gone.id}/test`, undefined);
  const [a, b] = (await createCatalog(app.services.db, t.storeId)).products;
  const customer = await send("POST", "/public/v1/customers", { name: "Ana Lima", phone: "+55 11 90000-0001" });
  await send("PATCH", `/public/v1/customers/${customer.id}`, { email: "ana@example.com" });
  const delivery = await send("POST", "/public/v1/orders", {
    type: "DELIVERY",
    customerId: customer.id,
    items: [{ productId: a.id, quantity: 1 }],
    deliveryAddress: fakeAddress(),
  });
  for (const status of ["CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"]) {
    await send("PATCH", `/public/v1/orders/${delivery.id}/status`, { status });
  }
  const pickup = await send("POST", "/public/v1/orders", { type: "PICKUP", items: [{ productId: a.id, quantity: 1 }] });
  await send("PATCH", `/public/v1/orders/${pickup.id}/status`, { status: "CANCELLED", reason: "Closed early" });
  await send("PATCH", `/public/v1/catalog/products/${b.id}/status`, { isActive: false });
  await send("PATCH", `/public/v1/catalog/products/${b.id}/status`, { isActive: true });
  const store = await graphql(app, `mutation($id: ID!) { updateStore(id: $id, input: { name: "Renamed" }) { id } }`, { id: t.storeId });
  expect(store.errors).toBeUndefined();
  // export.completed; and export.failed, from an Application on the store that no longer reads what it asked for.
  await send("POST", "/public/v1/exports", { resource: "products" });
  const reader = await createApplication(app.services.db, { name: "Reader", environment: "SANDBOX", scopes: ["catalog:read"] });
  await createGrant(app.services.db, { clientId: reader.application.clientId, storeId: t.storeId });
  const claims = { clientId: reader.application.clientId, storeCode: t.storeCode, environment: "SANDBOX" as const, scopes: new Set(["catalog:read" as const]) };
  const principal = await app.services.grants.admit({ ...claims, tokenId: "contract", expiresAt: Date.now() + 60_000 });
  await app.services.db.$transaction((tx) =>
    createExport(tx, app.services.config, principal, { resource: "products", updatedSince: null, apiVersion: principal.apiVersion }),
  );
  await app.services.db.application.update({ where: { id: reader.application.id }, data: { scopes: ["orders:read"] } });
}

it("every event's data is exactly what its published webhook schema lists as required", async () => {
  await emitEveryType();
  const worker = await startWorker(app.services, app.databaseUrl);
  try {
    // catalog.updated is emitted when the aggregation window closes, by the worker; the operational events as
    // the failing endpoint's delivery runs out of attempts.
    const deadline = Date.now() + 15_000;
    const missing = async () =>
      (await app.services.db.event.count({ where: { storeId: t.storeId, type: "catalog.updated" } })) < 2 ||
      (await app.services.db.event.count({ where: { storeId: t.storeId, type: "webhook.delivery.dead_lettered" } })) < 1 ||
      (await app.services.db.event.count({ where: { storeId: t.storeId, type: { in: ["export.completed", "export.failed"] } } })) < 2;
    while ((await missing()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await worker.stop();
  }
  const events = await app.services.db.event.findMany({ where: { storeId: t.storeId } });
  expect(new Set(events.map((e) => e.type))).toEqual(new Set(Object.keys(DELIVERED_EVENTS)));

  const departures = events.flatMap((event) => {
    const data = (doc.components.schemas[eventSchemaName(event.type)].properties as Record<string, JsonSchema>).data;
    const required = [...(data.required as string[])].sort().join(", ");
    const documented = Object.keys(data.properties as object)
      .sort()
      .join(", ");
    const emitted = Object.keys(event.data as object)
      .sort()
      .join(", ");
    const input = defineBody(data);
    return [
      ...(documented === required ? [] : [`${event.type} documents ${documented}, requires ${required}`]),
      ...(emitted === required ? [] : [`${event.type} emits ${emitted}, requires ${required}`]),
      ...(input.accepts(event.data) ? [] : [`${event.type} ${JSON.stringify(event.data)}: ${refusal(input, event.data)}`]),
    ];
  });
  expect([...new Set(departures)]).toEqual([]);
});
