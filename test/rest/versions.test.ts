import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createOrder, customerCreatedData } from "../helpers/fixtures.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { fanOutEvent } from "../../src/modules/webhooks/fan-out.js";
import { runAttempt } from "../../src/modules/webhooks/attempt.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { API_VERSIONS, FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { routes } from "../../src/rest/routes.js";
import { schema } from "../../src/graphql/schema.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "../platform/support.js";

/**
 * Dated API versions: the pin, the header that overrides it, the version list and deprecation headers, and each
 * 2026-12-01 change on answers, requests, deliveries and the feed. `other` is a second API process on the same
 * database, as behind a load balancer, run with 2026-11-20 deprecated.
 */

type Body = Record<string, unknown>;

let app: TestApp;
let other: ApiProcess;
let receiver: Receiver;
let first: Tenant;
let latest: Tenant;

const DEPRECATED_AT = "2026-12-01";
const SUNSET_AT = "2027-06-01";

beforeAll(async () => {
  [app, receiver] = await Promise.all([startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "1000" }), startReceiver()]);
  other = await startApiProcess(app.databaseUrl, {
    API_VERSIONS_DEPRECATED: `${FIRST_API_VERSION}=${DEPRECATED_AT}`,
    API_VERSION_SUNSETS: `${FIRST_API_VERSION}=${SUNSET_AT}`,
  });
  [first, latest] = await Promise.all([createTenant(app, { apiVersion: FIRST_API_VERSION }), createTenant(app, { apiVersion: LATEST_API_VERSION })]);
  await createOrder(app.services.db, first.storeId);
  await createOrder(app.services.db, latest.storeId);
}, 150_000);

afterAll(async () => {
  await receiver?.close();
  destroyWebhookAgents();
  if (other) await stopApiProcess(other);
  await app?.close();
});

const orders = (t: Tenant, headers: Record<string, string> = {}) => call<Body>(app, "GET", "/public/v1/orders", { token: t.token, headers });

/** A GET to the other process. */
async function there(path: string, token?: string): Promise<{ status: number; headers: Headers; body: Body }> {
  const res = await fetch(`${other.baseUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body: unknown = await res.json();
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error(`${path}: not an object`);
  return { status: res.status, headers: res.headers, body: { ...body } };
}

function expectFirstShape(body: Body): void {
  const [order] = body.data as Body[];
  expect(order).toMatchObject({ displayId: String(order.orderNumber), totalAmount: order.total });
  expect(Object.keys(body.pagination as Body).sort()).toEqual(["cursor", "hasMore", "nextCursor"]);
}

function expectLatestShape(body: Body): void {
  const [order] = body.data as Body[];
  expect(order).not.toHaveProperty("displayId");
  expect(order).not.toHaveProperty("totalAmount");
  expect(Object.keys(body.pagination as Body).sort()).toEqual(["hasMore", "nextCursor"]);
}

describe("the pin and the Api-Version header", () => {
  it("answers each Application in its pinned version and names it in Api-Version", async () => {
    const a = await orders(first);
    expect(a.status).toBe(200);
    expect(a.headers.get("api-version")).toBe(FIRST_API_VERSION);
    expectFirstShape(a.body);
    const b = await orders(latest);
    expect(b.headers.get("api-version")).toBe(LATEST_API_VERSION);
    expectLatestShape(b.body);
  });

  it("lets a request's Api-Version override the pin, both ways", async () => {
    const up = await orders(first, { "api-version": LATEST_API_VERSION });
    expect(up.headers.get("api-version")).toBe(LATEST_API_VERSION);
    expectLatestShape(up.body);
    const down = await orders(latest, { "api-version": FIRST_API_VERSION });
    expect(down.headers.get("api-version")).toBe(FIRST_API_VERSION);
    expectFirstShape(down.body);
  });

  it("answers an unknown version with 400 INVALID_API_VERSION listing the known ones, and changes nothing", async () => {
    for (const given of ["2026-11-21", "latest", ""]) {
      const res = await call<Body>(app, "PATCH", "/public/v1/application", {
        token: first.token,
        headers: { "api-version": given },
        body: { apiVersion: LATEST_API_VERSION },
      });
      expect(res.status, given).toBe(400);
      expect(res.body).toMatchObject({ code: "INVALID_API_VERSION", errors: [{ field: "Api-Version", known: [...API_VERSIONS] }] });
      expect(String(res.body.detail)).toContain(API_VERSIONS.join(", "));
    }
    expect((await call<Body>(app, "GET", "/public/v1/application", { token: first.token })).body.apiVersion).toBe(FIRST_API_VERSION);
  });

  it("names the version on answers that fail before the caller is known: the requested one, else the latest", async () => {
    const res = await call(app, "GET", "/public/v1/orders");
    expect(res.status).toBe(401);
    expect(res.headers.get("api-version")).toBe(LATEST_API_VERSION);
    const requested = await call(app, "GET", "/public/v1/orders", { headers: { "api-version": FIRST_API_VERSION } });
    expect(requested.status).toBe(401);
    expect(requested.headers.get("api-version")).toBe(FIRST_API_VERSION);
    const unknown = await call(app, "GET", "/public/v1/orders", { headers: { "api-version": "2020-01-01" } });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("api-version")).toBe(LATEST_API_VERSION);
  });
});

describe("GET and PATCH /public/v1/application", () => {
  it("reads and re-pins the Application; the next request on another process is answered in the new version", async () => {
    const t = await createTenant(app, { apiVersion: FIRST_API_VERSION, scopes: ["orders:read"] });
    await createOrder(app.services.db, t.storeId);
    const read = await call<Body>(app, "GET", "/public/v1/application", { token: t.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ clientId: t.clientId, name: "Test app", environment: "SANDBOX", scopes: ["orders:read"], apiVersion: FIRST_API_VERSION });

    // The other process has the grant, and so the pin, cached.
    expectFirstShape((await there("/public/v1/orders", t.token)).body);
    const bad = await call<Body>(app, "PATCH", "/public/v1/application", { token: t.token, body: { apiVersion: "2027-01-01" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "INVALID_API_VERSION" });

    const patched = await call<Body>(app, "PATCH", "/public/v1/application", { token: t.token, body: { apiVersion: LATEST_API_VERSION } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ clientId: t.clientId, apiVersion: LATEST_API_VERSION });
    const here = await orders(t);
    expect(here.headers.get("api-version")).toBe(LATEST_API_VERSION);
    // The other process clears its cached grants when the change's notification arrives, a moment after the commit.
    await expect
      .poll(async () => (await there("/public/v1/orders", t.token)).headers.get("api-version"), { timeout: 5000, interval: 20 })
      .toBe(LATEST_API_VERSION);
    expectLatestShape((await there("/public/v1/orders", t.token)).body);
  });

  it("lets administrators create an Application on a version and re-pin it", async () => {
    const created = await graphql<{ createApplication: { application: { clientId: string; apiVersion: string } } }>(
      app,
      `mutation { createApplication(input: { name: "pinned", environment: SANDBOX, scopes: [ORDERS_READ], apiVersion: "${FIRST_API_VERSION}" }) { application { clientId apiVersion } } }`,
    );
    expect(created.data?.createApplication.application.apiVersion).toBe(FIRST_API_VERSION);
    const clientId = created.data?.createApplication.application.clientId;
    const fresh = await graphql<{ createApplication: { application: { apiVersion: string } } }>(
      app,
      `mutation { createApplication(input: { name: "fresh", environment: SANDBOX, scopes: [ORDERS_READ] }) { application { apiVersion } } }`,
    );
    expect(fresh.data?.createApplication.application.apiVersion).toBe(LATEST_API_VERSION);
    const set = await graphql<{ setApplicationApiVersion: { apiVersion: string } }>(
      app,
      `mutation($clientId: String!) { setApplicationApiVersion(clientId: $clientId, apiVersion: "${LATEST_API_VERSION}") { apiVersion } }`,
      { clientId },
    );
    expect(set.data?.setApplicationApiVersion.apiVersion).toBe(LATEST_API_VERSION);
    const unknown = await graphql(app, `mutation($clientId: String!) { setApplicationApiVersion(clientId: $clientId, apiVersion: "v2") { apiVersion } }`, {
      clientId,
    });
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: "INVALID_API_VERSION" });
  });
});

describe("GET /public/v1/versions and deprecation", () => {
  it("lists the versions newest first, without a credential", async () => {
    const res = await call<{ data: Body[]; latest: string }>(app, "GET", "/public/v1/versions");
    expect(res.status).toBe(200);
    expect(res.body.latest).toBe(LATEST_API_VERSION);
    expect(res.body.data.map((v) => v.version)).toEqual([...API_VERSIONS].reverse());
    expect(res.body.data[0]).toMatchObject({ status: "latest" });
    // A version listed is served, so none was released after today, whatever date its name gives.
    const today = new Date().toISOString().slice(0, 10);
    for (const { version, releasedAt } of res.body.data) expect(String(releasedAt) <= today, `${version} released ${releasedAt}`).toBe(true);
    expect(res.body.data[0].changes).toEqual(expect.arrayContaining([expect.stringContaining("displayId")]));
    expect(res.body.data[1]).toMatchObject({ status: "supported" });
    expect(res.body.data[1]).not.toHaveProperty("sunsetAt");
  });

  it("marks a deprecated version's answers with Deprecation, Sunset and Link, and lists it as deprecated", async () => {
    const res = await there("/public/v1/orders", first.token);
    expect(res.headers.get("deprecation")).toBe(`@${Date.parse(`${DEPRECATED_AT}T00:00:00Z`) / 1000}`);
    expect(res.headers.get("sunset")).toBe(new Date(`${SUNSET_AT}T00:00:00Z`).toUTCString());
    expect(res.headers.get("link")).toMatch(/<http:\/\/[^>]+\/public\/v1\/versions>; rel="deprecation"/);
    const problem = await there("/public/v1/orders/not-a-uuid", first.token);
    expect(problem.status).toBe(400);
    expect(problem.headers.get("deprecation")).toMatch(/^@\d+$/);
    const current = await there("/public/v1/orders", latest.token);
    expect(current.headers.get("deprecation")).toBeNull();
    expect(current.headers.get("sunset")).toBeNull();
    const list = await there("/public/v1/versions");
    expect((list.body.data as Body[])[1]).toMatchObject({ version: FIRST_API_VERSION, status: "deprecated", deprecatedAt: DEPRECATED_AT, sunsetAt: SUNSET_AT });
  });

  it("refuses a deprecation setting it cannot read", async () => {
    await expect(startTestApp({ API_VERSIONS_DEPRECATED: "2020-01-01=2026-12-01" })).rejects.toThrow(/API_VERSIONS_DEPRECATED/);
    await expect(startTestApp({ API_VERSION_SUNSETS: `${FIRST_API_VERSION}=2027-01-01` })).rejects.toThrow(/not in API_VERSIONS_DEPRECATED/);
  });
});

describe("the OpenAPI document per version", () => {
  it("serves the latest by default and any version with ?version=", async () => {
    const latestDoc = await call<{ info: { version: string } }>(app, "GET", "/public/v1/openapi.json");
    expect(latestDoc.body.info.version).toBe(LATEST_API_VERSION);
    const firstDoc = await call(app, "GET", `/public/v1/openapi.json?version=${FIRST_API_VERSION}`);
    expect(firstDoc.body).toEqual(JSON.parse(JSON.stringify(buildOpenApi(routes, schema, app.services.config.publicBaseUrl, FIRST_API_VERSION))));
    const bad = await call<Body>(app, "GET", "/public/v1/openapi.json?version=1.0.0");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "INVALID_API_VERSION" });
  });
});

describe("webhooks across versions", () => {
  async function register(t: Tenant, path: string, apiVersion?: string): Promise<Body> {
    const res = await call<Body>(app, "POST", "/public/v1/webhooks", {
      token: t.token,
      body: { url: receiver.url(path), events: ["customer.created"], ...(apiVersion ? { apiVersion } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  async function deliverCustomerCreated(t: Tenant): Promise<string> {
    const event = await app.services.db.$transaction((tx) => emitEvent(tx, t.storeId, "customer.created", customerCreatedData()));
    for (const attempt of await fanOutEvent(app.services.pool, event.id)) await runAttempt(app.services, attempt);
    return event.id;
  }

  const sent = (path: string, eventId: string) => {
    const request = receiver.requests(path).find((r) => JSON.parse(r.body).eventId === eventId);
    if (!request) throw new Error(`${path} received no ${eventId}`);
    return { version: request.headers["api-version"], data: JSON.parse(request.body).data as Body };
  };

  it("renders each delivery in its endpoint's version, keeps it in the attempt log, and follows a PATCH", async () => {
    const t = await createTenant(app, { apiVersion: FIRST_API_VERSION });
    const old = await register(t, "/v-old");
    const fresh = await register(t, "/v-new", LATEST_API_VERSION);
    expect(old).not.toHaveProperty("apiVersion"); // 2026-11-20 answers exactly as before
    const shown = await call<Body>(app, "GET", `/public/v1/webhooks/${fresh.id}`, { token: t.token, headers: { "api-version": LATEST_API_VERSION } });
    expect(shown.body.apiVersion).toBe(LATEST_API_VERSION);
    const defaulted = await call<Body>(app, "GET", `/public/v1/webhooks/${old.id}`, { token: t.token, headers: { "api-version": LATEST_API_VERSION } });
    expect(defaulted.body.apiVersion).toBe(FIRST_API_VERSION); // the Application's pin at creation

    const eventId = await deliverCustomerCreated(t);
    expect(sent("/v-old", eventId)).toEqual({ version: FIRST_API_VERSION, data: expect.objectContaining({ phone: "" }) });
    expect(sent("/v-new", eventId)).toEqual({ version: LATEST_API_VERSION, data: expect.objectContaining({ phone: null }) });

    const deliveries = await call<{ data: Body[] }>(app, "GET", `/public/v1/webhooks/deliveries?endpointId=${fresh.id}`, {
      token: t.token,
      headers: { "api-version": LATEST_API_VERSION },
    });
    const [delivery] = deliveries.body.data;
    const attempts = await call<{ data: { requestHeaders: Record<string, string> }[] }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, {
      token: t.token,
    });
    expect(attempts.body.data[0].requestHeaders["Api-Version"]).toBe(LATEST_API_VERSION);
    const detail = await call<Body>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}`, { token: t.token });
    expect((detail.body.payload as Body).data).toMatchObject({ phone: null }); // what the endpoint was sent

    const patched = await call<Body>(app, "PATCH", `/public/v1/webhooks/${old.id}`, { token: t.token, body: { apiVersion: LATEST_API_VERSION } });
    expect(patched.status).toBe(200);
    const bad = await call<Body>(app, "PATCH", `/public/v1/webhooks/${old.id}`, { token: t.token, body: { apiVersion: "someday" } });
    expect(bad.body).toMatchObject({ code: "INVALID_API_VERSION" });
    const next = await deliverCustomerCreated(t);
    expect(sent("/v-old", next).version).toBe(LATEST_API_VERSION);
    expect(sent("/v-old", next).data.phone).toBeNull();
  });

  it("answers the webhook lists as { data, pagination } in 2026-12-01, with limit and cursor", async () => {
    const t = await createTenant(app, { apiVersion: LATEST_API_VERSION });
    const ids = [(await register(t, "/p1")).id, (await register(t, "/p2")).id, (await register(t, "/p3")).id];
    const page1 = await call<{ data: Body[]; pagination: Body }>(app, "GET", "/public/v1/webhooks?limit=2", { token: t.token });
    expect(page1.body.data.map((e) => e.id)).toEqual(ids.slice(0, 2));
    expect(page1.body.pagination).toEqual({ hasMore: true, nextCursor: ids[1] });
    const page2 = await call<{ data: Body[]; pagination: Body }>(app, "GET", `/public/v1/webhooks?limit=2&cursor=${ids[1]}`, { token: t.token });
    expect(page2.body).toMatchObject({ data: [{ id: ids[2] }], pagination: { hasMore: false, nextCursor: null } });
    for (const query of ["limit=0", "limit=abc", `cursor=${first.clientId}`]) {
      const res = await call<Body>(app, "GET", `/public/v1/webhooks?${query}`, { token: t.token });
      expect(res.status, query).toBe(400);
    }
    const old = await call<Body[]>(app, "GET", "/public/v1/webhooks?limit=1", { token: t.token, headers: { "api-version": FIRST_API_VERSION } });
    expect(old.body.map((e) => e.id)).toEqual(ids); // the first version's bare array ignores limit, as it did

    await deliverCustomerCreated(t);
    const deliveries = await call<{ data: Body[]; pagination: Body }>(app, "GET", "/public/v1/webhooks/deliveries?limit=2", { token: t.token });
    expect(deliveries.body.data).toHaveLength(2);
    expect(deliveries.body.pagination).toEqual({ hasMore: true, nextCursor: deliveries.headers.get("x-next-cursor") });
    const rest = await call<{ data: Body[]; pagination: Body }>(
      app,
      "GET",
      `/public/v1/webhooks/deliveries?limit=2&cursor=${deliveries.body.pagination.nextCursor}`,
      {
        token: t.token,
      },
    );
    expect(rest.body).toMatchObject({ data: [expect.any(Object)], pagination: { hasMore: false, nextCursor: null } });
  });

  it("renders the event feed in the request's version", async () => {
    const t = await createTenant(app, { apiVersion: FIRST_API_VERSION });
    const event = await app.services.db.$transaction((tx) => emitEvent(tx, t.storeId, "customer.created", customerCreatedData()));
    const feed = (version: string) =>
      call<{ data: Body[]; pagination: Body }>(app, "GET", "/public/v1/events", { token: t.token, headers: { "api-version": version } });
    const old = await feed(FIRST_API_VERSION);
    expect(old.body.data[0]).toMatchObject({ eventId: event.id, data: { phone: "" } });
    expect(old.body.pagination).toHaveProperty("cursor");
    const now = await feed(LATEST_API_VERSION);
    expect(now.body.data[0]).toMatchObject({ eventId: event.id, data: { phone: null } });
    expect(now.body.pagination).not.toHaveProperty("cursor");
    const one = await call<Body>(app, "GET", `/public/v1/events/${event.id}`, { token: t.token, headers: { "api-version": LATEST_API_VERSION } });
    expect(one.body.data).toMatchObject({ phone: null });
  });
});
