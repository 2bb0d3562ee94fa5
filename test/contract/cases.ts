import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { SCOPES } from "../../src/platform/auth/scopes.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { fanOutEvent } from "../../src/modules/webhooks/fan-out.js";
import { createPortalLink } from "../../src/modules/admin/portal-links.js";
import { exportLink } from "../../src/modules/exports/service.js";
import type { TestApp } from "../helpers/app.js";
import { createCatalog, createCustomer, createOrder, fakeAddress, type FixtureProduct } from "../helpers/fixtures.js";
import { call, createTenant, getToken, type ApiResponse, type Tenant } from "../helpers/tenants.js";
import type { Receiver } from "../webhooks/receiver.js";
import type { OperationInput } from "./support/mesh.js";

/**
 * The contract cases: at least one per operation of the OpenAPI document, keyed by operationId. The Mesh
 * suite (mesh.test.ts) runs each through the built GraphQL Mesh against the live server and checks the REST
 * exchange against the document. An operation without an entry fails that suite: a new route adds its case
 * here (a success case at least; error cases where the route has its own).
 */

export interface CaseContext {
  app: TestApp;
  /** A SANDBOX store whose Application holds every scope. */
  tenant: Tenant;
  /** A webhook receiver on 127.0.0.1: every path answers 200 unless a case sets otherwise. */
  receiver: Receiver;
}

export interface CaseRun extends OperationInput {
  /** Bearer token for this run (default: the tenant's); null sends none that is valid. */
  token?: string | null;
  /** Sends no Authorization at all, as a signed link is used (the Mesh, which always sends its bearer, is bypassed). */
  anonymous?: true;
}

export interface ContractCase {
  name: string;
  /** The REST inputs; a function when they depend on data the case creates first. */
  run?: (ctx: CaseContext) => Promise<CaseRun> | CaseRun;
  /** Expected HTTP status (default: the operation's documented 2xx). */
  status?: number;
}

const limited = new Map<string, Promise<string>>();

/** A token of another tenant whose Application holds every scope but `scope` (one tenant per scope). */
export function tokenWithout(ctx: CaseContext, scope: string): Promise<string> {
  const key = `${ctx.tenant.storeId}:${scope}`;
  if (!limited.has(key))
    limited.set(
      key,
      createTenant(ctx.app, { scopes: SCOPES.filter((s) => s !== scope) }).then((t) => t.token),
    );
  return limited.get(key) as Promise<string>;
}

const production = new Map<string, Promise<string>>();

/** A token of a PRODUCTION tenant with every scope (sandbox routes refuse it). */
function productionToken(ctx: CaseContext): Promise<string> {
  const key = ctx.tenant.storeId;
  if (!production.has(key))
    production.set(
      key,
      createTenant(ctx.app, { environment: "PRODUCTION" }).then((t) => t.token),
    );
  return production.get(key) as Promise<string>;
}

const others = new Map<string, Promise<Tenant>>();

/** A second SANDBOX store, to show that one tenant's ids are unknown to another. */
function otherTenant(ctx: CaseContext): Promise<Tenant> {
  const key = ctx.tenant.storeId;
  if (!others.has(key)) others.set(key, createTenant(ctx.app));
  return others.get(key) as Promise<Tenant>;
}

const revokers = new Map<string, Promise<Tenant>>();

/**
 * The client the revocation cases authenticate as: its own, since revocations take the token endpoint's slots of
 * their client, which the token cases of the shared tenant use up.
 */
function revoker(ctx: CaseContext): Promise<Tenant> {
  const key = ctx.tenant.storeId;
  if (!revokers.has(key)) revokers.set(key, createTenant(ctx.app, { scopes: ["merchant:read"] }));
  return revokers.get(key) as Promise<Tenant>;
}

/** Setup calls go straight to the server (not through the Mesh); a setup step that fails stops the case. */
function expectStatus<T>(res: ApiResponse<T>, status: number, what: string): T {
  if (res.status !== status) throw new Error(`setup: ${what} answered ${res.status}, not ${status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const api = <T = Record<string, unknown>>(ctx: CaseContext, method: string, path: string, body?: unknown) =>
  call<T>(ctx.app, method, path, { token: ctx.tenant.token, body });

/**
 * Records an Idempotency-Key with a first request. The case repeats the key: with another request it is
 * 409 IDEMPOTENCY_CONFLICT, with the same one the recorded response is replayed.
 */
async function usedKey(ctx: CaseContext, method: string, path: string, body?: unknown): Promise<string> {
  const key = randomUUID();
  const res = await call(ctx.app, method, path, { token: ctx.tenant.token, body, headers: { "idempotency-key": key } });
  if (res.status >= 500 || [401, 403, 429].includes(res.status)) throw new Error(`setup: the first request with the key answered ${res.status}`);
  return key;
}

const menus = new Map<string, Promise<FixtureProduct[]>>();

/** The tenant's menu, created once; cases that pause products make a menu of their own. */
function menu(ctx: CaseContext): Promise<FixtureProduct[]> {
  const key = ctx.tenant.storeId;
  if (!menus.has(key))
    menus.set(
      key,
      createCatalog(ctx.app.services.db, ctx.tenant.storeId).then((m) => m.products),
    );
  return menus.get(key) as Promise<FixtureProduct[]>;
}

const product = async (ctx: CaseContext, name: string): Promise<FixtureProduct> => {
  const found = (await menu(ctx)).find((p) => p.name === name);
  if (!found) throw new Error(`no product ${name} in the fixture menu`);
  return found;
};

const FAILING_PATH = "/contract/fail";

/** A webhook endpoint on the local receiver; at FAILING_PATH the receiver answers 500. */
async function newEndpoint(ctx: CaseContext, path = "/contract/ok", events: string[] = ["order.created", "customer.created"]): Promise<string> {
  if (path === FAILING_PATH) ctx.receiver.on(FAILING_PATH, () => ({ status: 500, body: JSON.stringify({ error: "receiver down" }) }));
  const res = await api<{ id: string }>(ctx, "POST", "/public/v1/webhooks", { url: ctx.receiver.url(path), events });
  return expectStatus(res, 201, "creating a webhook endpoint").id;
}

const endpoints = new Map<string, Promise<string>>();

/** One endpoint the read-only cases share (the tenant may hold at most 20). */
function sharedEndpoint(ctx: CaseContext): Promise<string> {
  const key = ctx.tenant.storeId;
  if (!endpoints.has(key)) endpoints.set(key, newEndpoint(ctx));
  return endpoints.get(key) as Promise<string>;
}

const drillEndpoints = new Map<string, Promise<string>>();

/** One endpoint the drill cases share, apart from the shared one (whose deliveries a drill would hold). */
function drillEndpoint(ctx: CaseContext): Promise<string> {
  const key = ctx.tenant.storeId;
  if (!drillEndpoints.has(key)) drillEndpoints.set(key, newEndpoint(ctx, "/contract/drill"));
  return drillEndpoints.get(key) as Promise<string>;
}

/** A delivery made by the test operation, so it exists once its attempt has ended. */
async function testDelivery(ctx: CaseContext, endpointId: string): Promise<string> {
  const res = await api<{ id: string }>(ctx, "POST", `/public/v1/webhooks/${endpointId}/test`);
  return expectStatus(res, 200, "sending a test event").id;
}

/** A dead-lettered delivery of the shared endpoint whose event the retention sweep has removed. */
async function expiredDelivery(ctx: CaseContext): Promise<string> {
  const id = await testDelivery(ctx, await sharedEndpoint(ctx));
  const { db } = ctx.app.services;
  const delivery = await db.webhookDelivery.update({ where: { id }, data: { status: "DEAD_LETTER" } });
  await db.event.delete({ where: { id: delivery.eventId } });
  return id;
}

/** The endpoint, after a test event to it: it has a delivery and a success or failure on record. */
async function tested(ctx: CaseContext, endpointId: string): Promise<string> {
  await testDelivery(ctx, endpointId);
  return endpointId;
}

async function deactivate(ctx: CaseContext, endpointId: string): Promise<void> {
  await ctx.app.services.db.webhookEndpoint.update({ where: { id: endpointId }, data: { status: "INACTIVE" } });
}

const forbiddenCase = (scope: string, run: Omit<CaseRun, "token"> = {}): ContractCase => ({
  name: `without ${scope} is 403`,
  status: 403,
  run: async (ctx) => ({ ...run, token: await tokenWithout(ctx, scope) }),
});

const unknownId = () => ({ id: randomUUID() });

/**
 * An export of the tenant's orders in the state `status`, recorded as the worker leaves it (a completed one with its
 * gzip file in two chunks), so the file cases need no worker run.
 */
async function recordedExport(ctx: CaseContext, status: "completed" | "running" = "completed") {
  const { db } = ctx.app.services;
  const { id: applicationId } = await db.application.findUniqueOrThrow({ where: { clientId: ctx.tenant.clientId }, select: { id: true } });
  const file = gzipSync(`${JSON.stringify({ id: randomUUID(), status: "PENDING" })}\n`);
  const done = status === "completed";
  const row = await db.export.create({
    data: {
      applicationId,
      storeId: ctx.tenant.storeId,
      resource: "orders",
      apiVersion: FIRST_API_VERSION,
      status,
      ...(done ? { objectCount: 1, bytes: file.length, sequence: 1, completedAt: new Date(), removeAt: new Date(Date.now() + 3_600_000) } : {}),
    },
  });
  if (done) {
    const half = Math.floor(file.length / 2);
    await db.exportChunk.createMany({
      data: [
        { exportId: row.id, position: 0, data: file.subarray(0, half) },
        { exportId: row.id, position: 1, data: file.subarray(half) },
      ],
    });
  }
  return row;
}

/** The signed link of a completed export, as its `url` holds it: the query's `expires` and `signature`. */
async function signedLink(ctx: CaseContext): Promise<{ id: string; expires: string; signature: string }> {
  const { config, box } = ctx.app.services;
  const row = await recordedExport(ctx);
  const link = exportLink(config, box, row, Date.now());
  if (!link) throw new Error("setup: a completed export has no link");
  const query = new URL(link.url).searchParams;
  return { id: row.id, expires: query.get("expires") ?? "", signature: query.get("signature") ?? "" };
}

export const CONTRACT_CASES: Record<string, ContractCase[]> = {
  createToken: [
    {
      name: "client credentials in a JSON body",
      run: ({ tenant }) => ({ body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret }, token: null }),
    },
    {
      name: "a wrong secret is 401 INVALID_CLIENT",
      status: 401,
      run: ({ tenant }) => ({ body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: "wrong" }, token: null }),
    },
    {
      name: "scope narrows the token",
      run: ({ tenant }) => ({
        body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret, scope: "orders:read catalog:read" },
        token: null,
      }),
    },
    {
      name: "a scope the Application is not granted is 400 invalid_scope",
      status: 400,
      run: ({ tenant }) => ({
        body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret, scope: "orders:read orders:delete" },
        token: null,
      }),
    },
  ],
  revokeToken: [
    {
      name: "revokes a fresh token of the client",
      run: async (ctx) => {
        const { clientId, clientSecret } = await revoker(ctx);
        return { body: { token: await getToken(ctx.app, clientId, clientSecret), client_id: clientId, client_secret: clientSecret }, token: null };
      },
    },
    {
      name: "an unknown token is 200 as well",
      run: async (ctx) => {
        const { clientId, clientSecret } = await revoker(ctx);
        return { body: { token: "no-such-token", client_id: clientId, client_secret: clientSecret }, token: null };
      },
    },
    {
      name: "a wrong secret is 401 invalid_client",
      status: 401,
      run: async (ctx) => ({ body: { token: "no-such-token", client_id: (await revoker(ctx)).clientId, client_secret: "wrong" }, token: null }),
    },
  ],
  exchangePortalLink: [
    {
      name: "a fresh link signs in",
      run: async ({ app, tenant }) => {
        const { url } = await createPortalLink(
          app.services.db,
          { clientId: tenant.clientId, storeId: tenant.storeId },
          { baseUrl: app.baseUrl, maxTtlMinutes: 60, createdBy: "contract" },
        );
        return { body: { link_secret: new URLSearchParams(new URL(url).hash.slice(1)).get("link_secret") }, token: null };
      },
    },
    { name: "an unknown link is 401 INVALID_TOKEN", status: 401, run: () => ({ body: { link_secret: "no-such-link" }, token: null }) },
  ],
  getJwks: [{ name: "the public keys" }],
  getAuthorizationServerMetadata: [{ name: "the OAuth 2.0 metadata" }],
  getOpenApiDocument: [{ name: "the document itself" }],
  listApiVersions: [{ name: "every version, newest first" }],
  getApplication: [{ name: "the token's Application and its version" }],
  updateApplication: [
    // The shared tenant stays on the version the suite checks against: it is pinned to the one it has.
    { name: "pins the Application to a version", run: () => ({ body: { apiVersion: FIRST_API_VERSION } }) },
    { name: "an unknown version is 400 INVALID_API_VERSION", status: 400, run: () => ({ body: { apiVersion: "2026-13-01" } }) },
  ],
  getStore: [
    { name: "a new store" },
    {
      name: "a store with address, opening hours and settings",
      run: async ({ app, tenant }) => {
        await app.services.db.store.update({
          where: { id: tenant.storeId },
          data: {
            logo: "https://cdn.example/logo.png",
            phone: "+55 11 5555-0100",
            status: "PAUSED",
            address: { street: "Rua A", number: "10", neighborhood: "Centro", city: "São Paulo", state: "SP", postalCode: "01000-000", complement: null },
            openingHours: [{ dayOfWeek: 1, opens: "11:00", closes: "23:00" }],
            publicSettings: { currency: "BRL", acceptsPickup: true },
          },
        });
        return { headers: { "X-Request-Id": "0b6c3c8e-6f3e-4a5e-9d57-2f1c1c9a4b10" } };
      },
    },
    { name: "without merchant:read is 403", status: 403, run: async (ctx) => ({ token: await tokenWithout(ctx, "merchant:read") }) },
    { name: "with a bad token is 401", status: 401, run: () => ({ token: "not-a-jwt" }) },
  ],

  listOrders: [
    {
      name: "a first page of orders of every shape",
      run: async ({ app, tenant }) => {
        const db = app.services.db;
        const customer = await createCustomer(db, tenant.storeId);
        await createOrder(db, tenant.storeId, { customerId: customer.id, status: "DELIVERED", couponCode: "BEMVINDO10", discountCents: 500 });
        await createOrder(db, tenant.storeId, { type: "PICKUP", customerId: null, payments: [{ method: "CASH", status: "PENDING", changeForCents: 10000 }] });
        await createOrder(db, tenant.storeId, { status: "CANCELLED", items: [{ name: "Pudim de leite", quantity: 3, unitPriceCents: 1400, productId: null }] });
        return { query: { limit: 2 } };
      },
    },
    {
      name: "by status, changed since a moment",
      run: async ({ app, tenant }) => {
        const since = new Date(Date.now() - 60_000);
        await createOrder(app.services.db, tenant.storeId, { status: "READY", type: "PICKUP" });
        return { query: { status: "READY", updated_since: since.toISOString() } };
      },
    },
    { name: "an unknown cursor is 400", status: 400, run: () => ({ query: { cursor: randomUUID() } }) },
    forbiddenCase("orders:read"),
  ],
  createOrder: [
    {
      name: "a scheduled DELIVERY order that creates its customer",
      run: async (ctx) => {
        const pizza = await product(ctx, "Pizza Margherita");
        const coke = await product(ctx, "Coca-Cola 350ml");
        return {
          headers: { "Idempotency-Key": randomUUID() },
          body: {
            type: "DELIVERY",
            customer: { name: "Marina Costa", phone: "+55 11 98888-7777", email: "marina.costa@example.com" },
            items: [
              { productId: pizza.id, quantity: 2, notes: "Bem passada", additionals: [{ name: "Borda de catupiry", quantity: 1 }] },
              { productId: coke.id, quantity: 1, notes: null },
            ],
            deliveryAddress: { ...fakeAddress(), complement: "Casa 2" },
            scheduledFor: new Date(Date.now() + 3 * 3600_000).toISOString(),
            notes: "Portão azul",
          },
        };
      },
    },
    {
      name: "a PICKUP order for a known customer, paid in cash with change",
      run: async (ctx) => {
        const coke = await product(ctx, "Coca-Cola 350ml");
        const customer = await createCustomer(ctx.app.services.db, ctx.tenant.storeId);
        return {
          body: {
            type: "PICKUP",
            customerId: customer.id,
            items: [{ productId: coke.id, quantity: 2 }],
            payments: [{ method: "CASH", value: 13, changeFor: 20 }],
          },
        };
      },
    },
    {
      name: "an unknown product is 422 UNKNOWN_PRODUCT",
      status: 422,
      run: () => ({ body: { type: "PICKUP", items: [{ productId: randomUUID(), quantity: 1 }] } }),
    },
    {
      name: "a paused product is 422 PRODUCT_INACTIVE",
      status: 422,
      run: async ({ app, tenant }) => {
        const { products } = await createCatalog(app.services.db, tenant.storeId);
        await app.services.db.product.update({ where: { id: products[0].id }, data: { isActive: false } });
        return { body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] } };
      },
    },
    {
      name: "payments that do not add up are 422 PAYMENT_MISMATCH",
      status: 422,
      run: async (ctx) => {
        const coke = await product(ctx, "Coca-Cola 350ml");
        return { body: { type: "PICKUP", items: [{ productId: coke.id, quantity: 1 }], payments: [{ method: "PIX", value: 1 }] } };
      },
    },
    {
      name: "a DELIVERY order without an address is 400",
      status: 400,
      run: async (ctx) => ({ body: { type: "DELIVERY", items: [{ productId: (await product(ctx, "Brownie")).id, quantity: 1 }] } }),
    },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const coke = await product(ctx, "Coca-Cola 350ml");
        const key = await usedKey(ctx, "POST", "/public/v1/orders", { type: "PICKUP", items: [{ productId: coke.id, quantity: 1 }] });
        return { headers: { "Idempotency-Key": key }, body: { type: "PICKUP", items: [{ productId: coke.id, quantity: 2 }] } };
      },
    },
    forbiddenCase("orders:write", { body: { type: "PICKUP", items: [{ productId: randomUUID(), quantity: 1 }] } }),
    {
      name: "without a valid token is 401",
      status: 401,
      run: () => ({ token: null, body: { type: "PICKUP", items: [{ productId: randomUUID(), quantity: 1 }] } }),
    },
  ],
  getOrderById: [
    {
      name: "a scheduled DELIVERY order with coupon, notes and cash change",
      run: async ({ app, tenant }) => {
        const order = await createOrder(app.services.db, tenant.storeId, {
          status: "DISPATCHED",
          couponCode: "PIZZA5",
          discountCents: 500,
          scheduledFor: new Date(Date.now() + 7200_000),
          notes: "Interfone quebrado, ligar ao chegar",
          payments: [{ method: "CASH", status: "PENDING", changeForCents: 10000 }],
        });
        return { path: { id: order.id } };
      },
    },
    {
      name: "a cancelled PICKUP order without a customer",
      run: async ({ app, tenant }) => ({
        path: { id: (await createOrder(app.services.db, tenant.storeId, { type: "PICKUP", status: "CANCELLED", customerId: null })).id },
      }),
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    {
      name: "another store's order is 404",
      status: 404,
      run: async (ctx) => ({ path: { id: (await createOrder(ctx.app.services.db, (await otherTenant(ctx)).storeId)).id } }),
    },
    forbiddenCase("orders:read", { path: unknownId() }),
  ],
  updateOrderStatus: [
    {
      name: "PENDING to CONFIRMED",
      run: async ({ app, tenant }) => ({
        path: { id: (await createOrder(app.services.db, tenant.storeId)).id },
        headers: { "Idempotency-Key": randomUUID() },
        body: { status: "CONFIRMED" },
      }),
    },
    {
      name: "a cancellation with its reason",
      run: async ({ app, tenant }) => ({
        path: { id: (await createOrder(app.services.db, tenant.storeId, { status: "PREPARING" })).id },
        body: { status: "CANCELLED", reason: "Sem entregador disponível" },
      }),
    },
    {
      name: "a retry with the same Idempotency-Key replays the recorded response",
      run: async (ctx) => {
        const { id } = await createOrder(ctx.app.services.db, ctx.tenant.storeId, { status: "READY" });
        const body = { status: "DISPATCHED" };
        return { path: { id }, headers: { "Idempotency-Key": await usedKey(ctx, "PATCH", `/public/v1/orders/${id}/status`, body) }, body };
      },
    },
    {
      name: "a move the lifecycle does not allow is 422 INVALID_TRANSITION",
      status: 422,
      run: async ({ app, tenant }) => ({
        path: { id: (await createOrder(app.services.db, tenant.storeId, { status: "DELIVERED" })).id },
        body: { status: "PREPARING" },
      }),
    },
    {
      name: "DISPATCHED for a PICKUP order is 422 INVALID_TRANSITION",
      status: 422,
      run: async ({ app, tenant }) => ({
        path: { id: (await createOrder(app.services.db, tenant.storeId, { type: "PICKUP", status: "READY" })).id },
        body: { status: "DISPATCHED" },
      }),
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { status: "CONFIRMED" } }) },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const { id } = await createOrder(ctx.app.services.db, ctx.tenant.storeId);
        const key = await usedKey(ctx, "PATCH", `/public/v1/orders/${id}/status`, { status: "CONFIRMED" });
        return { path: { id }, headers: { "Idempotency-Key": key }, body: { status: "CANCELLED", reason: "Cliente desistiu" } };
      },
    },
    forbiddenCase("orders:write", { path: unknownId(), body: { status: "CONFIRMED" } }),
  ],
  listCustomers: [
    {
      name: "a search by name across pages",
      run: async ({ app, tenant }) => {
        const db = app.services.db;
        await createCustomer(db, tenant.storeId, { name: "Zuleica Contrato" });
        await createCustomer(db, tenant.storeId, { name: "Zacarias Contrato", phone: null, email: null, addresses: [] });
        return { query: { search: "contrato", limit: 1 } };
      },
    },
    {
      name: "changed since a moment",
      run: async ({ app, tenant }) => {
        await createCustomer(app.services.db, tenant.storeId);
        return { query: { updated_since: new Date(Date.now() - 60_000).toISOString() } };
      },
    },
    forbiddenCase("customers:read"),
  ],
  createCustomer: [
    {
      name: "with phone and email",
      run: () => ({
        headers: { "Idempotency-Key": randomUUID() },
        body: { name: "Renata Albuquerque", phone: "(11) 97777-1234", email: "renata.albuquerque@example.com" },
      }),
    },
    { name: "a name only", run: () => ({ body: { name: "Otávio Prado" } }) },
    {
      name: "a retry with the same Idempotency-Key replays the recorded response",
      run: async (ctx) => {
        const body = { name: "Lúcia Repetida", phone: "11 95555-0000" };
        return { headers: { "Idempotency-Key": await usedKey(ctx, "POST", "/public/v1/customers", body) }, body };
      },
    },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => ({
        headers: { "Idempotency-Key": await usedKey(ctx, "POST", "/public/v1/customers", { name: "Primeiro Nome" }) },
        body: { name: "Outro Nome" },
      }),
    },
    forbiddenCase("customers:write", { body: { name: "Sem Permissão" } }),
  ],
  getCustomerById: [
    {
      name: "a customer with addresses and orders",
      run: async ({ app, tenant }) => {
        const db = app.services.db;
        const customer = await createCustomer(db, tenant.storeId, { addresses: [fakeAddress(3), fakeAddress(4)] });
        await createOrder(db, tenant.storeId, { customerId: customer.id, status: "DELIVERED", createdAt: new Date(Date.now() - 86_400_000) });
        await createOrder(db, tenant.storeId, { customerId: customer.id });
        return { path: { id: customer.id } };
      },
    },
    {
      name: "a customer without contact data, addresses or orders",
      run: async ({ app, tenant }) => ({
        path: { id: (await createCustomer(app.services.db, tenant.storeId, { phone: null, email: null, addresses: [] })).id },
      }),
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    forbiddenCase("customers:read", { path: unknownId() }),
  ],
  updateCustomer: [
    {
      name: "a new email",
      run: async ({ app, tenant }) => ({
        path: { id: (await createCustomer(app.services.db, tenant.storeId)).id },
        headers: { "Idempotency-Key": randomUUID() },
        body: { email: "novo.email@example.com" },
      }),
    },
    {
      name: "null clears the phone",
      run: async ({ app, tenant }) => ({
        path: { id: (await createCustomer(app.services.db, tenant.storeId)).id },
        body: { phone: null, name: "Nome Corrigido" },
      }),
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { name: "Ninguém" } }) },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const { id } = await createCustomer(ctx.app.services.db, ctx.tenant.storeId);
        const key = await usedKey(ctx, "PATCH", `/public/v1/customers/${id}`, { name: "Primeira Mudança" });
        return { path: { id }, headers: { "Idempotency-Key": key }, body: { name: "Segunda Mudança" } };
      },
    },
    forbiddenCase("customers:write", { path: unknownId(), body: { name: "Sem Permissão" } }),
  ],
  listCategories: [
    {
      name: "the active categories",
      run: async (ctx) => {
        await menu(ctx);
        return {};
      },
    },
    forbiddenCase("catalog:read"),
  ],
  listProducts: [
    {
      name: "a page with a paused product",
      run: async (ctx) => {
        await ctx.app.services.db.product.update({ where: { id: (await product(ctx, "Água mineral 500ml")).id }, data: { isActive: false } });
        return { query: { limit: 5 } };
      },
    },
    {
      name: "the next page",
      run: async (ctx) => {
        const first = await api<{ pagination: { nextCursor: string } }>(ctx, "GET", "/public/v1/catalog/products?limit=3");
        return { query: { limit: 3, cursor: expectStatus(first, 200, "the first page").pagination.nextCursor } };
      },
    },
    forbiddenCase("catalog:read"),
  ],
  getProductById: [
    { name: "a product with variations and additionals", run: async (ctx) => ({ path: { id: (await product(ctx, "Pizza Calabresa")).id } }) },
    { name: "a product without variations or additionals", run: async (ctx) => ({ path: { id: (await product(ctx, "Suco de laranja 500ml")).id } }) },
    {
      name: "a paused product without a description",
      run: async (ctx) => {
        const water = await product(ctx, "Água mineral 500ml");
        await ctx.app.services.db.product.update({ where: { id: water.id }, data: { isActive: false } });
        return { path: { id: water.id } };
      },
    },
    {
      name: "a product with an unavailable additional",
      run: async (ctx) => {
        const brownie = await product(ctx, "Brownie");
        await ctx.app.services.db.productAdditional.updateMany({ where: { productId: brownie.id }, data: { isAvailable: false } });
        return { path: { id: brownie.id } };
      },
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    forbiddenCase("catalog:read", { path: unknownId() }),
  ],
  setProductStatus: [
    {
      name: "pausing a product",
      run: async ({ app, tenant }) => ({
        path: { id: (await createCatalog(app.services.db, tenant.storeId)).products[2].id },
        headers: { "Idempotency-Key": randomUUID() },
        body: { isActive: false },
      }),
    },
    {
      name: "resuming a paused product",
      run: async ({ app, tenant }) => {
        const { products } = await createCatalog(app.services.db, tenant.storeId);
        await app.services.db.product.update({ where: { id: products[1].id }, data: { isActive: false } });
        return { path: { id: products[1].id }, body: { isActive: true } };
      },
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { isActive: false } }) },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const { id } = (await createCatalog(ctx.app.services.db, ctx.tenant.storeId)).products[0];
        const key = await usedKey(ctx, "PATCH", `/public/v1/catalog/products/${id}/status`, { isActive: false });
        return { path: { id }, headers: { "Idempotency-Key": key }, body: { isActive: true } };
      },
    },
    forbiddenCase("catalog:write", { path: unknownId(), body: { isActive: false } }),
  ],
  seedSandbox: [
    { name: "a first seed", run: () => ({ headers: { "Idempotency-Key": randomUUID() } }) },
    { name: "seeding again duplicates nothing" },
    { name: "a PRODUCTION token is 403", status: 403, run: async (ctx) => ({ token: await productionToken(ctx) }) },
    {
      name: "an Idempotency-Key used on another route is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => ({ headers: { "Idempotency-Key": await usedKey(ctx, "POST", "/public/v1/sandbox/orders", { scenario: "pickup" }) } }),
    },
  ],
  fireSandboxEvent: [
    ...["order.ready", "customer.updated", "store.updated"].map((type): ContractCase => ({ name: `fires ${type}`, run: () => ({ body: { type } }) })),
    { name: "catalog.updated answers 202 with the pending change", status: 202, run: () => ({ body: { type: "catalog.updated" } }) },
    { name: "a PRODUCTION token is 403", status: 403, run: async (ctx) => ({ token: await productionToken(ctx), body: { type: "order.created" } }) },
    forbiddenCase("customers:read", { body: { type: "customer.updated" } }),
  ],
  createSandboxOrder: [
    ...["delivery", "pickup", "scheduled", "cash", "online_payment", "with_discount", "cancelled"].map(
      (scenario): ContractCase => ({ name: `the ${scenario} scenario`, run: () => ({ body: { scenario } }) }),
    ),
    {
      name: "overrides replace the scenario's items, customer, fee, discount, notes and time",
      run: async (ctx) => {
        const { id } = (await createCatalog(ctx.app.services.db, ctx.tenant.storeId)).products[0];
        const customer = { name: "Olga Override", phone: "+55 11 95555-0000", email: null };
        const overrides = {
          items: [{ productId: id, quantity: 2 }],
          customer,
          deliveryFee: 7.25,
          discount: 1.5,
          notes: null,
          scheduledFor: "2031-05-04T18:30:00Z",
        };
        return { body: { scenario: "scheduled", overrides } };
      },
    },
    {
      name: "simulate: the order then moves on its own, a status every stepSeconds",
      run: () => ({ body: { scenario: "pickup", simulate: { until: "READY", stepSeconds: 600 } } }),
    },
    {
      name: "simulate until a status the order does not reach is 422",
      status: 422,
      run: () => ({ body: { scenario: "pickup", simulate: { until: "DISPATCHED" } } }),
    },
    {
      name: "an unknown product in overrides.items is 422",
      status: 422,
      run: () => ({ body: { scenario: "pickup", overrides: { items: [{ productId: randomUUID(), quantity: 1 }] } } }),
    },
    { name: "a PRODUCTION token is 403", status: 403, run: async (ctx) => ({ token: await productionToken(ctx), body: { scenario: "delivery" } }) },
    {
      name: "an Idempotency-Key reused with another scenario is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => ({
        headers: { "Idempotency-Key": await usedKey(ctx, "POST", "/public/v1/sandbox/orders", { scenario: "pickup" }) },
        body: { scenario: "cash" },
      }),
    },
  ],
  createWebhookEndpoint: [
    {
      name: "an endpoint on a local receiver",
      run: (ctx) => ({
        headers: { "Idempotency-Key": randomUUID() },
        body: {
          url: ctx.receiver.url("/contract/created"),
          events: ["order.created", "order.cancelled", "customer.updated", "catalog.updated", "store.updated"],
        },
      }),
    },
    {
      name: "a rateLimit out of range is 400",
      status: 400,
      run: (ctx) => ({ body: { url: ctx.receiver.url("/contract/created"), events: ["order.created"], rateLimit: 10_001 } }),
    },
    {
      name: "a cloud metadata address is 422 PRIVATE_NETWORK",
      status: 422,
      run: () => ({ body: { url: "http://169.254.169.254/latest/meta-data/", events: ["order.created"] } }),
    },
    {
      name: "an event whose read scope the token lacks is 403",
      status: 403,
      run: async (ctx) => ({ token: await tokenWithout(ctx, "orders:read"), body: { url: ctx.receiver.url("/contract/x"), events: ["order.created"] } }),
    },
    {
      name: "an Idempotency-Key reused with another body is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const key = await usedKey(ctx, "POST", "/public/v1/webhooks", { url: "http://169.254.169.254/", events: ["order.created"] });
        return { headers: { "Idempotency-Key": key }, body: { url: ctx.receiver.url("/contract/x"), events: ["order.created"] } };
      },
    },
    forbiddenCase("webhooks:manage", { body: { url: "https://hooks.example.com/x", events: ["order.created"] } }),
  ],
  listWebhookEndpoints: [
    {
      name: "the endpoints, one of them failing",
      run: async (ctx) => {
        await sharedEndpoint(ctx);
        await tested(ctx, await newEndpoint(ctx, FAILING_PATH));
        return {};
      },
    },
    forbiddenCase("webhooks:manage"),
  ],
  listWebhookDeliveries: [
    {
      name: "one endpoint's deliveries, a page with a next link",
      run: async (ctx) => {
        const endpointId = await newEndpoint(ctx);
        await testDelivery(ctx, endpointId);
        await testDelivery(ctx, endpointId);
        return { query: { endpointId, limit: 1 } };
      },
    },
    {
      name: "delivered test events",
      run: async (ctx) => {
        await tested(ctx, await sharedEndpoint(ctx));
        return { query: { status: "DELIVERED", eventType: "webhook.test" } };
      },
    },
    { name: "failed deliveries", run: () => ({ query: { status: "FAILED" } }) },
    forbiddenCase("webhooks:manage"),
  ],
  getWebhookDeliveryById: [
    { name: "a delivered test event", run: async (ctx) => ({ path: { deliveryId: await testDelivery(ctx, await sharedEndpoint(ctx)) } }) },
    {
      name: "a delivery fanned out from an event, not yet attempted",
      run: async (ctx) => {
        const { db, pool } = ctx.app.services;
        const endpointId = await newEndpoint(ctx, "/contract/ok", ["store.updated"]);
        const event = await db.$transaction((tx) => emitEvent(tx, ctx.tenant.storeId, "store.updated", { storeId: ctx.tenant.storeId, changed: ["phone"] }));
        await fanOutEvent(pool, event.id);
        const delivery = await db.webhookDelivery.findFirstOrThrow({ where: { eventId: event.id, endpointId }, select: { id: true } });
        return { path: { deliveryId: delivery.id } };
      },
    },
    { name: "a delivery the receiver refused", run: async (ctx) => ({ path: { deliveryId: await testDelivery(ctx, await newEndpoint(ctx, FAILING_PATH)) } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: { deliveryId: randomUUID() } }) },
    forbiddenCase("webhooks:manage", { path: { deliveryId: randomUUID() } }),
  ],
  replayWebhookDelivery: [
    {
      name: "a delivered event, queued again",
      run: async (ctx) => ({ path: { deliveryId: await testDelivery(ctx, await sharedEndpoint(ctx)) }, headers: { "Idempotency-Key": randomUUID() } }),
    },
    {
      name: "a dead letter",
      run: async (ctx) => {
        const deliveryId = await testDelivery(ctx, await newEndpoint(ctx, FAILING_PATH));
        await ctx.app.services.db.webhookDelivery.update({ where: { id: deliveryId }, data: { status: "DEAD_LETTER" } });
        return { path: { deliveryId } };
      },
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: { deliveryId: randomUUID() } }) },
    {
      name: "a delivery of an INACTIVE endpoint is 422 ENDPOINT_INACTIVE",
      status: 422,
      run: async (ctx) => {
        const endpointId = await newEndpoint(ctx);
        const deliveryId = await testDelivery(ctx, endpointId);
        await deactivate(ctx, endpointId);
        return { path: { deliveryId } };
      },
    },
    {
      name: "a delivery whose event is past retention is 422 EVENT_EXPIRED",
      status: 422,
      run: async (ctx) => ({ path: { deliveryId: await expiredDelivery(ctx) } }),
    },
    {
      name: "an Idempotency-Key used for another delivery is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => {
        const key = await usedKey(ctx, "POST", `/public/v1/webhooks/deliveries/${randomUUID()}/replay`);
        return { path: { deliveryId: await testDelivery(ctx, await sharedEndpoint(ctx)) }, headers: { "Idempotency-Key": key } };
      },
    },
    forbiddenCase("webhooks:manage", { path: { deliveryId: randomUUID() } }),
  ],
  listWebhookDeliveryAttempts: [
    { name: "a delivered test event", run: async (ctx) => ({ path: { deliveryId: await testDelivery(ctx, await sharedEndpoint(ctx)) } }) },
    { name: "a delivery the receiver refused", run: async (ctx) => ({ path: { deliveryId: await testDelivery(ctx, await newEndpoint(ctx, FAILING_PATH)) } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: { deliveryId: randomUUID() } }) },
    forbiddenCase("webhooks:manage", { path: { deliveryId: randomUUID() } }),
  ],
  updateWebhookEndpoint: [
    {
      name: "a new URL and every event type",
      run: async (ctx) => ({ path: { id: await newEndpoint(ctx) }, body: { url: ctx.receiver.url("/contract/moved"), events: ["*"] } }),
    },
    { name: "set INACTIVE", run: async (ctx) => ({ path: { id: await newEndpoint(ctx) }, body: { status: "INACTIVE" } }) },
    {
      name: "an INACTIVE endpoint set ACTIVE again",
      run: async (ctx) => {
        const id = await newEndpoint(ctx);
        await deactivate(ctx, id);
        return { path: { id }, body: { status: "ACTIVE" } };
      },
    },
    { name: "an unsafe URL is 422", status: 422, run: async (ctx) => ({ path: { id: await newEndpoint(ctx) }, body: { url: "http://169.254.169.254/" } }) },
    { name: "its pace (rateLimit)", run: async (ctx) => ({ path: { id: await sharedEndpoint(ctx) }, body: { rateLimit: 1000 } }) },
    {
      name: "a fault drill",
      run: async (ctx) => ({ path: { id: await drillEndpoint(ctx) }, body: { drill: { duplicateRate: 0.5, reorderWindowSeconds: 10, maxDelaySeconds: 5 } } }),
    },
    { name: "drill: null ends it", run: async (ctx) => ({ path: { id: await drillEndpoint(ctx) }, body: { drill: null } }) },
    { name: "a drill out of range is 400", status: 400, run: () => ({ path: unknownId(), body: { drill: { maxDelaySeconds: 301 } } }) },
    // Above the maximum: the Mesh itself refuses what is not positive before calling.
    { name: "a rateLimit out of range is 400", status: 400, run: () => ({ path: unknownId(), body: { rateLimit: 10_001 } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { status: "ACTIVE" } }) },
    forbiddenCase("webhooks:manage", { path: unknownId(), body: { status: "ACTIVE" } }),
  ],
  recoverWebhookDeliveries: [
    {
      name: "the failed deliveries of the last hour",
      run: async (ctx) => {
        const id = await newEndpoint(ctx, FAILING_PATH);
        await testDelivery(ctx, id);
        return { path: { id }, body: { since: new Date(Date.now() - 3_600_000).toISOString() } };
      },
    },
    {
      name: "an INACTIVE endpoint is 422 ENDPOINT_INACTIVE",
      status: 422,
      run: async (ctx) => {
        const id = await newEndpoint(ctx);
        await deactivate(ctx, id);
        return { path: { id }, body: { since: new Date(Date.now() - 3_600_000).toISOString() } };
      },
    },
    {
      name: "a window whose only failed delivery is past retention is 422 EVENT_EXPIRED",
      status: 422,
      run: async (ctx) => {
        const delivery = await ctx.app.services.db.webhookDelivery.findUniqueOrThrow({ where: { id: await expiredDelivery(ctx) } });
        const since = delivery.createdAt;
        return { path: { id: delivery.endpointId }, body: { since: since.toISOString(), until: new Date(since.getTime() + 1).toISOString() } };
      },
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { since: new Date().toISOString() } }) },
    forbiddenCase("webhooks:manage", { path: unknownId(), body: { since: new Date().toISOString() } }),
  ],
  backfillWebhookEndpoint: [
    // The endpoint is the shared one: a store holds at most 20. Validation and INACTIVE: test/webhooks/backfill.test.ts.
    { name: "every subscribed event of the store", run: async (ctx) => ({ path: { id: await sharedEndpoint(ctx) }, body: { afterSequence: 0 } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId(), body: { afterSequence: 0 } }) },
    forbiddenCase("webhooks:manage", { path: unknownId(), body: { afterSequence: 0 } }),
  ],
  getWebhookEndpointById: [
    { name: "an endpoint that delivered", run: async (ctx) => ({ path: { id: await tested(ctx, await sharedEndpoint(ctx)) } }) },
    { name: "an endpoint whose receiver fails", run: async (ctx) => ({ path: { id: await tested(ctx, await newEndpoint(ctx, FAILING_PATH)) } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    {
      name: "another tenant's endpoint is 404",
      status: 404,
      run: async (ctx) => {
        const other = await otherTenant(ctx);
        const body = { url: ctx.receiver.url("/contract/other"), events: ["order.created"] };
        const res = await call<{ id: string }>(ctx.app, "POST", "/public/v1/webhooks", { token: other.token, body });
        return { path: { id: expectStatus(res, 201, "creating another tenant's endpoint").id } };
      },
    },
    forbiddenCase("webhooks:manage", { path: unknownId() }),
  ],
  deleteWebhookEndpoint: [
    { name: "an endpoint with deliveries", run: async (ctx) => ({ path: { id: await tested(ctx, await newEndpoint(ctx)) } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    forbiddenCase("webhooks:manage", { path: unknownId() }),
  ],
  testWebhookEndpoint: [
    { name: "a receiver that answers 200", run: async (ctx) => ({ path: { id: await sharedEndpoint(ctx) }, headers: { "Idempotency-Key": randomUUID() } }) },
    { name: "a receiver that answers 500", run: async (ctx) => ({ path: { id: await newEndpoint(ctx, FAILING_PATH) } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    {
      name: "an INACTIVE endpoint is 422 ENDPOINT_INACTIVE",
      status: 422,
      run: async (ctx) => {
        const id = await newEndpoint(ctx);
        await deactivate(ctx, id);
        return { path: { id } };
      },
    },
    {
      name: "an Idempotency-Key used for another endpoint is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => ({
        path: { id: await sharedEndpoint(ctx) },
        headers: { "Idempotency-Key": await usedKey(ctx, "POST", `/public/v1/webhooks/${randomUUID()}/test`) },
      }),
    },
    forbiddenCase("webhooks:manage", { path: unknownId() }),
  ],
  rotateWebhookEndpointSecret: [
    { name: "a new secret", run: async (ctx) => ({ path: { id: await newEndpoint(ctx) }, headers: { "Idempotency-Key": randomUUID() } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
    {
      name: "an Idempotency-Key used for another endpoint is 409 IDEMPOTENCY_CONFLICT",
      status: 409,
      run: async (ctx) => ({
        path: { id: await sharedEndpoint(ctx) },
        headers: { "Idempotency-Key": await usedKey(ctx, "POST", `/public/v1/webhooks/${randomUUID()}/rotate-secret`) },
      }),
    },
    forbiddenCase("webhooks:manage", { path: unknownId() }),
  ],
  listEvents: [
    {
      name: "the first page, one event of each kind the store has",
      run: async (ctx) => {
        await ctx.app.services.db.$transaction((tx) => emitEvent(tx, ctx.tenant.storeId, "store.updated", { storeId: ctx.tenant.storeId, changed: ["phone"] }));
        return { query: { limit: 100 } };
      },
    },
    { name: "only order.created, after a sequence", run: () => ({ query: { types: "order.created", after: "1", limit: 2 } }) },
    { name: "a PRODUCTION token reads its own store's feed", run: async (ctx) => ({ token: await productionToken(ctx) }) },
    { name: "an after above the store's latest sequence is 400", status: 400, run: () => ({ query: { after: "9999999999" } }) },
  ],
  createExport: [
    { name: "every order", run: () => ({ body: { resource: "orders" } }) },
    { name: "customers changed since an instant", run: () => ({ body: { resource: "customers", updatedSince: "2025-03-01T00:00:00.000Z" } }) },
    forbiddenCase("catalog:read", { body: { resource: "products" } }),
  ],
  listExports: [
    {
      name: "the Application's exports",
      run: async (ctx) => {
        await api(ctx, "POST", "/public/v1/exports", { resource: "products" });
        return {};
      },
    },
    { name: "a page of one", run: () => ({ query: { limit: 1 } }) },
  ],
  getExportById: [
    {
      name: "an export of the store",
      run: async (ctx) => ({
        path: { id: expectStatus(await api<{ id: string }>(ctx, "POST", "/public/v1/exports", { resource: "orders" }), 202, "an export").id },
      }),
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
  ],
  downloadExportFile: [
    { name: "the whole file, with the token", run: async (ctx) => ({ path: { id: (await recordedExport(ctx)).id } }) },
    {
      name: "a byte range resumes the download (206)",
      status: 206,
      run: async (ctx) => ({ path: { id: (await recordedExport(ctx)).id }, headers: { Range: "bytes=4-" } }),
    },
    {
      name: "by the signed link, without a token",
      run: async (ctx) => {
        const { id, expires, signature } = await signedLink(ctx);
        return { path: { id }, query: { expires, signature }, anonymous: true };
      },
    },
    {
      name: "an altered signed link is 403",
      status: 403,
      run: async (ctx) => {
        const { id, expires } = await signedLink(ctx);
        return { path: { id }, query: { expires, signature: "altered" }, anonymous: true };
      },
    },
    { name: "an export not completed yet is 409", status: 409, run: async (ctx) => ({ path: { id: (await recordedExport(ctx, "running")).id } }) },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: unknownId() }) },
  ],
  getEventById: [
    {
      name: "an event of the store",
      run: async (ctx) => {
        const event = await ctx.app.services.db.$transaction((tx) =>
          emitEvent(tx, ctx.tenant.storeId, "store.updated", { storeId: ctx.tenant.storeId, changed: ["name"] }),
        );
        return { path: { eventId: event.id } };
      },
    },
    {
      name: "another store's event is 404",
      status: 404,
      run: async (ctx) => {
        const other = await otherTenant(ctx);
        const event = await ctx.app.services.db.$transaction((tx) =>
          emitEvent(tx, other.storeId, "store.updated", { storeId: other.storeId, changed: ["name"] }),
        );
        return { path: { eventId: event.id } };
      },
    },
    { name: "an unknown id is 404", status: 404, run: () => ({ path: { eventId: randomUUID() } }) },
  ],
};
