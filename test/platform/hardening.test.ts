import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { toProblem } from "../../src/http/problem.js";
import { traceIdOf } from "../../src/http/server.js";
import { expectProblem } from "./support.js";
import { RestRouter } from "../../src/rest/router.js";
import { defineRoute } from "../../src/platform/route.js";
import { graphql as typed } from "../../src/platform/schema/typed.js";
import { schema } from "../../src/graphql/schema.js";

const METRICS_TOKEN = "metrics-token-0123456789";
let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp({ GRAPHQL_MAX_DEPTH: "2", GRAPHQL_MAX_COST: "15", METRICS_TOKEN, RATE_LIMIT_TOKEN_PER_CLIENT: "2" });
  tenant = await createTenant(app, { scopes: ["merchant:read"] });
});
afterAll(() => app.close());

const tokenPath = "/partner/auth/token";

describe("request hardening", () => {
  it("refuses bodies over 1 MiB with 413, whether declared or streamed in chunks", async () => {
    const big = "x".repeat(1024 * 1024 + 1);
    expectProblem(await call(app, "POST", tokenPath, { rawBody: big, headers: { "content-type": "application/json" } }), 413, "PAYLOAD_TOO_LARGE");
    const chunk = new TextEncoder().encode("y".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${app.baseUrl}${tokenPath}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("applies the same cap to /graphql, which has none of its own", async () => {
    const query = `{ store { id } } # ${"z".repeat(1024 * 1024)}`;
    const res = await call(app, "POST", "/graphql", { token: tenant.token, body: { query } });
    expectProblem(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("answers invalid JSON with 400 and a non-JSON media type with 415", async () => {
    const bad = await call(app, "POST", tokenPath, { rawBody: '{"grant_type": "client_credentials",', headers: { "content-type": "application/json" } });
    expectProblem(bad, 400, "INVALID_REQUEST");
    const xml = await call(app, "POST", tokenPath, { rawBody: "<token/>", headers: { "content-type": "application/xml" } });
    expectProblem(xml, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("sends the security headers on successes and errors alike", async () => {
    for (const res of [await call(app, "GET", "/public/v1/store", { token: tenant.token }), await call(app, "GET", "/nowhere")]) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("strict-transport-security")).toContain("max-age=");
    }
  });

  it("answers a malformed percent-escape in a path parameter with 400, not a URIError", () => {
    const probe = defineRoute({
      operationId: "probe",
      method: "GET",
      path: "/public/v1/probe/{id}",
      tag: "Probe",
      summary: "probe",
      document: typed("query probe($id: ID!) { order(id: $id) { id } }"),
      respond: () => ({}),
      status: 200,
      response: { description: "probe" },
    });
    const router = new RestRouter(app.services, schema, [probe]);
    for (const raw of ["%", "%zz", "%E0%A4%A"])
      expect(() => router.match("GET", `/public/v1/probe/${raw}`)).toThrow(expect.objectContaining({ code: "INVALID_REQUEST" }));
    expect(router.match("GET", "/public/v1/probe/a%20b").params).toEqual({ id: "a b" });
  });

  it("never puts an unexpected error's message, stack or SQL into the response", () => {
    const err = new Error('relation "Store" does not exist: SELECT * FROM "Store"');
    const { problem } = toProblem(err, { baseUrl: "http://x", instance: "/p", requestId: "r", traceId: "t" });
    expect(problem).toMatchObject({ status: 500, code: "INTERNAL_SERVER_ERROR", retryable: true });
    expect(JSON.stringify(problem)).not.toMatch(/SELECT|relation|at .*\.ts/);
  });
});

describe("W3C traceparent", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";

  it("becomes the traceId of problem bodies", async () => {
    const res = await call(app, "GET", "/public/v1/nothing", { token: tenant.token, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(expectProblem(res, 404, "NOT_FOUND").traceId).toBe(traceId);
  });

  it("is ignored when invalid, and the request id stands in", async () => {
    const requestId = "5f0c7a0e-8d7e-4c59-9d55-2d8a8c7f3b11";
    for (const bad of [
      `ff-${traceId}-00f067aa0ba902b7-01`,
      `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
      `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`,
      "garbage",
    ]) {
      const res = await call(app, "GET", "/nowhere", { headers: { traceparent: bad, "x-request-id": requestId } });
      expect((res.body as { traceId: string }).traceId).toBe(requestId.replace(/-/g, ""));
    }
    expect(traceIdOf(`00-${traceId}-${"0".repeat(16)}-01`)).toBeNull();
    expect(traceIdOf(`00-${traceId}-00f067aa0ba902b7-01`)).toBe(traceId);
  });
});

describe("GraphQL limits", () => {
  it("refuses a document deeper than GRAPHQL_MAX_DEPTH, naming the limit", async () => {
    expect((await graphql(app, "{ store { id } }", {}, tenant.token)).data).toMatchObject({ store: { id: tenant.storeId } });
    const res = await graphql(app, "{ store { address { street } } }", {}, tenant.token);
    expect(res.data ?? null).toBeNull();
    expect(res.errors?.[0].message).toBe("Query depth limit of 2 exceeded, found 3.");
    expect(res.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", limit: "depth", max: 2 });
  });

  it("refuses a document costlier than GRAPHQL_MAX_COST, naming the limit", async () => {
    // 1 for categories, plus 10 assumed rows of 2 fields each.
    const res = await graphql(app, "{ categories { id name } }", {}, tenant.token);
    expect(res.errors?.[0].message).toBe("Query cost 21 exceeds the limit of 15.");
    expect(res.errors?.[0].extensions).toMatchObject({ code: "INVALID_REQUEST", limit: "cost", max: 15 });
  });

  it("allows introspection to administrators only", async () => {
    const query = "{ __schema { queryType { name } } }";
    const admin = await graphql<{ __schema: { queryType: { name: string } } }>(app, query, {}, ADMIN_KEY);
    expect(admin.data?.__schema.queryType.name).toBe("Query");
    const partner = await graphql(app, query, {}, tenant.token);
    expect(partner.data ?? null).toBeNull();
    expect(partner.errors?.[0].message).toMatch(/introspection/i);
    const anonymous = await graphql(app, query, {}, null);
    expect(anonymous.status).toBe(401);
  });
});

describe("GET /metrics", () => {
  it("needs the metrics token when METRICS_TOKEN is set", async () => {
    expectProblem(await call(app, "GET", "/metrics"), 401, "UNAUTHORIZED");
    expectProblem(await call(app, "GET", "/metrics", { token: "wrong-token-0123456789" }), 401, "INVALID_TOKEN");
  });

  it("exposes request, rate-limit, delivery and queue series, labelled by route template", async () => {
    await call(app, "GET", "/public/v1/store", { token: tenant.token });
    await call(app, "GET", `/public/v1/no/such/${"a".repeat(30)}`, { token: tenant.token });
    for (let i = 0; i < 3; i++)
      await call(app, "POST", tokenPath, { body: { grant_type: "client_credentials", client_id: "sbx_stuffing", client_secret: "guess" } });
    await app.services.pool.query(`SELECT graphile_worker.add_job('cleanup_rate_limits', '{}'::json, run_at := now() - interval '5 seconds')`);

    const res = await fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/public\/v1\/store",status="200"\} [1-9]/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="unmatched",status="404"\} \d+$/m);
    expect(text).not.toContain("aaaaaaaaaa");
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0.1",method="GET",route="\/public\/v1\/store",status="200"\} \d+/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/partner\/auth\/token",status="429"\} 1$/m);
    expect(text).toMatch(/^rate_limit_rejections_total\{subject="token"\} 1$/m);
    for (const status of ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"])
      expect(text).toMatch(new RegExp(`^webhook_deliveries\\{status="${status}"\\} 0$`, "m"));
    expect(text).toMatch(/^job_queue_jobs\{task="cleanup_rate_limits",state="ready"\} 1$/m);
    const lag = Number(/^job_queue_lag_seconds (\S+)$/m.exec(text)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(4);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it("maps /public/v1 paths to the template of the route the router matched and collapses unknown paths", async () => {
    const sent = [
      // Refused by the token, before the router runs: still counted under the template.
      await call(app, "PATCH", "/public/v1/orders/8a5e6c1e-0000-4000-8000-000000000000", { token: "not-a-token" }),
      await call(app, "PATCH", "/public/v1/orders/x/status", { token: "not-a-token" }),
      // The route the router would run: POST matches `{id}/test`, though `deliveries/{deliveryId}` comes first.
      await call(app, "POST", "/public/v1/webhooks/deliveries/test", { token: "not-a-token" }),
      // A wrong method is counted under the template whose path matched; the literal `deliveries` beats `{id}`.
      await call(app, "PUT", "/public/v1/webhooks/deliveries", { token: tenant.token }),
      await call(app, "PATCH", "/public/v1/orders/x/y/z", { token: tenant.token }),
      await call(app, "PATCH", "/healthz"),
      await call(app, "PATCH", "/wp-admin.php"),
    ];
    expect(sent.map((r) => r.status)).toEqual([401, 401, 401, 405, 404, 405, 404]);
    const text = await (await fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const count = (route: string, status: number, method = "PATCH") =>
      new RegExp(`^http_requests_total\\{method="${method}",route="${route}",status="${status}"\\} (\\d+)$`, "m").exec(text)?.[1];
    expect(count("/public/v1/orders/\\{id\\}", 401)).toBe("1");
    expect(count("/public/v1/orders/\\{id\\}/status", 401)).toBe("1");
    expect(count("/public/v1/webhooks/\\{id\\}/test", 401, "POST")).toBe("1");
    expect(count("/public/v1/webhooks/deliveries", 405, "PUT")).toBe("1");
    expect(count("unmatched", 404)).toBe("2");
    expect(count("/healthz", 405)).toBe("1");
  });
});
