import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, getToken, grantChangeSeen, graphql } from "../helpers/tenants.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const CREATE_STORE = `mutation($input: CreateStoreInput!) { createStore(input: $input) { id code name environment } }`;
const CREATE_APP = `mutation($input: CreateApplicationInput!) { createApplication(input: $input) { application { id clientId environment scopes } clientSecret } }`;
const GRANT = `mutation($input: GrantInput!) { createGrant(input: $input) { id status } }`;
const REVOKE = `mutation($input: GrantInput!) { revokeGrant(input: $input) { id status } }`;

describe("admin GraphQL", () => {
  it("an operator creates a store, an Application and a Grant, and the partner gets a token", async () => {
    const store = await graphql<{ createStore: { id: string; code: string; environment: string } }>(app, CREATE_STORE, {
      input: { name: "Cantina", environment: "SANDBOX" },
    });
    expect(store.errors).toBeUndefined();
    expect(store.data?.createStore.code).toMatch(/^[A-Z0-9]{10}$/);
    const created = await graphql<{ createApplication: { application: { clientId: string; scopes: string[] }; clientSecret: string } }>(app, CREATE_APP, {
      input: { name: "ERP", environment: "SANDBOX", scopes: ["MERCHANT_READ", "ORDERS_READ"] },
    });
    expect(created.data?.createApplication.application.scopes).toEqual(["merchant:read", "orders:read"]);
    const { clientId } = created.data!.createApplication.application;
    const grant = await graphql<{ createGrant: { status: string } }>(app, GRANT, { input: { clientId, storeId: store.data!.createStore.id } });
    expect(grant.data?.createGrant.status).toBe("ACTIVE");
    const token = await getToken(app, clientId, created.data!.createApplication.clientSecret);
    const res = await call<{ name: string }>(app, "GET", "/public/v1/store", { token });
    expect(res.body.name).toBe("Cantina");
    const revoked = await graphql<{ revokeGrant: { status: string } }>(app, REVOKE, { input: { clientId, storeId: store.data!.createStore.code } });
    expect(revoked.data?.revokeGrant.status).toBe("REVOKED");
    await grantChangeSeen(app);
    expect((await call(app, "GET", "/public/v1/store", { token })).status).toBe(403);
  });

  it("creates admin keys that work, stored only as a hash", async () => {
    const res = await graphql<{ createAdminKey: { key: string; adminKey: { name: string; role: string; prefix: string } } }>(
      app,
      `mutation { createAdminKey(input: { name: "ops", role: SUPPORT }) { key adminKey { name role prefix } } }`,
    );
    const key = res.data!.createAdminKey.key;
    expect(key.startsWith("adm_")).toBe(true);
    expect(res.data!.createAdminKey.adminKey).toEqual({ name: "ops", role: "SUPPORT", prefix: key.slice(0, 12) });
    const rows = await app.services.db.adminKey.findMany();
    expect(JSON.stringify(rows)).not.toContain(key);
    const stores = await graphql<{ stores: { data: unknown[] } }>(app, `{ stores { data { id } } }`, {}, key);
    expect(stores.errors).toBeUndefined();
  });

  it("a revoked admin key is refused with 401", async () => {
    const res = await graphql<{ createAdminKey: { adminKey: { id: string }; key: string } }>(
      app,
      `mutation { createAdminKey(input: { name: "retired", role: VIEWER }) { adminKey { id } key } }`,
    );
    const { adminKey, key } = res.data!.createAdminKey;
    expect((await graphql(app, `{ stores { data { id } } }`, {}, key)).status).toBe(200);
    const revoked = await graphql<{ revokeAdminKey: { revokedAt: string | null } }>(app, `mutation($id: ID!) { revokeAdminKey(id: $id) { revokedAt } }`, {
      id: adminKey.id,
    });
    expect(revoked.data?.revokeAdminKey.revokedAt).toBeTruthy();
    expect((await graphql(app, `{ stores { data { id } } }`, {}, key)).status).toBe(401);
  });

  it("without a credential /graphql answers 401 problem+json", async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ stores { data { id } } }" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(((await res.json()) as { code: string }).code).toBe("UNAUTHORIZED");
  });

  it("a partner token cannot use admin fields, and a bad admin key is 401", async () => {
    const t = await createTenant(app);
    const res = await graphql(app, CREATE_STORE, { input: { name: "x", environment: "SANDBOX" } }, t.token);
    expect(res.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    expect(await app.services.db.store.count({ where: { name: "x" } })).toBe(0);
    const bad = await fetch(`${app.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer adm_wrong" },
      body: JSON.stringify({ query: "{ stores { data { id } } }" }),
    });
    expect(bad.status).toBe(401);
  });

  it("a partner token over GraphQL sees its own store and needs the same scope as REST", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const mine = await graphql<{ store: { id: string } }>(app, `{ store { id } }`, {}, t.token);
    expect(mine.data?.store.id).toBe(t.storeId);
    const none = await createTenant(app, { scopes: ["orders:read"] });
    const denied = await graphql(app, `{ store { id } }`, {}, none.token);
    expect(denied.errors?.[0].extensions?.code).toBe("INSUFFICIENT_SCOPE");
  });

  it("updateStore changes the profile partners read and emits store.updated", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const res = await graphql<{ updateStore: { status: string } }>(
      app,
      `mutation($id: ID!) { updateStore(id: $id, input: { status: PAUSED, openingHours: [{ dayOfWeek: 1, opens: "11:00", closes: "23:00" }],
        address: { street: "Rua A", number: "1", neighborhood: "Centro", city: "Recife", state: "PE", postalCode: "50000-000" } }) { status } }`,
      { id: t.storeId },
    );
    expect(res.errors).toBeUndefined();
    const store = await call<{ status: string; openingHours: unknown[]; address: { city: string } }>(app, "GET", "/public/v1/store", { token: t.token });
    expect(store.body).toMatchObject({ status: "PAUSED", openingHours: [{ dayOfWeek: 1, opens: "11:00", closes: "23:00" }], address: { city: "Recife" } });
    const event = await app.services.db.event.findFirst({ where: { storeId: t.storeId, type: "store.updated" } });
    expect(event?.data).toEqual({ storeId: t.storeId, changed: ["status", "address", "openingHours"] });
  });

  it("introspection is for administrators only", async () => {
    const t = await createTenant(app);
    const partner = await graphql(app, `{ __schema { queryType { name } } }`, {}, t.token);
    expect(partner.errors?.length).toBeGreaterThan(0);
    const admin = await graphql<{ __schema: { queryType: { name: string } } }>(app, `{ __schema { queryType { name } } }`);
    expect(admin.data?.__schema.queryType.name).toBe("Query");
  });

  it("GraphiQL is served to a browser on GET /graphql", async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/graphiql/i);
  });
});

describe("health", () => {
  it("/healthz and /readyz answer 200 when the database is migrated", async () => {
    expect((await call(app, "GET", "/healthz")).status).toBe(200);
    expect((await call(app, "GET", "/readyz")).body).toEqual({ status: "ready" });
  });

  it("unknown paths are 404 problem+json and wrong methods 405 with Allow", async () => {
    const nf = await call(app, "GET", "/nowhere");
    expect(nf.status).toBe(404);
    expect(nf.headers.get("content-type")).toContain("application/problem+json");
    const na = await call(app, "DELETE", "/partner/auth/token");
    expect(na.status).toBe(405);
    expect(na.headers.get("allow")).toBe("POST");
  });

  it("echoes a valid X-Request-Id and replaces an invalid one", async () => {
    const id = "6f1c1a52-5b5e-4f55-9d6c-2f0f0bb0e0a1";
    expect((await call(app, "GET", "/healthz", { headers: { "x-request-id": id } })).headers.get("x-request-id")).toBe(id);
    const other = (await call(app, "GET", "/healthz", { headers: { "x-request-id": "not-a-uuid" } })).headers.get("x-request-id");
    expect(other).toMatch(/^[0-9a-f-]{36}$/);
  });
});
