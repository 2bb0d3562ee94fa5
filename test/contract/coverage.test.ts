import { FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";
import { describe, expect, it } from "vitest";
import { SCOPE_DESCRIPTIONS } from "../../src/platform/auth/scopes.js";
import { loadConfig } from "../../src/platform/config.js";
import { ERROR_CATALOG } from "../../src/platform/errors.js";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../../src/modules/events/types.js";
import { PLATFORM_OPERATIONS } from "../../src/rest/openapi-platform.js";
import { acceptsIdempotencyKey } from "../../src/platform/route.js";
import { buildOpenApi, COMMON_ERROR_STATUSES, operationIds } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import type { JsonSchema } from "../../src/platform/json.js";
import { routes as routeRows } from "../../src/rest/routes.js";
import { authorizedRoutes } from "../../src/rest/authorization.js";

/** The document covers the route table exactly, and states the product rules partners rely on. */

/** The route table as the router uses it: each row with who may call it, read off its GraphQL field. */
const routes = authorizedRoutes(schema, routeRows);
const doc = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
/** The newest version's document: the shape the route table declares (an older version may take fewer parameters). */
const latest = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl, LATEST_API_VERSION);
const resolve = <T extends JsonSchema>(v: JsonSchema, kind: "parameters" | "responses"): T =>
  (typeof v.$ref === "string" ? doc.components[kind][v.$ref.split("/").pop() as string] : v) as T;

describe("route table and document", () => {
  it("every route is an operation of the document, and every operation is a route or a platform endpoint", () => {
    for (const route of routes) {
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId, `${route.method} ${route.path}`).toBe(route.operationId);
    }
    const expected = [...routes.map((r) => r.operationId), ...PLATFORM_OPERATIONS.map((p) => p.operation.operationId)].sort();
    expect([...operationIds(doc)].sort()).toEqual(expected);
  });

  it.each(routes.map((r) => [r.operationId, r] as const))("%s: parameters, body, responses and scope come from the route", (_id, route) => {
    const op = latest.paths[route.path][route.method.toLowerCase()];
    const params = (op.parameters ?? []).map((p) => resolve<{ name: string; in: string; required?: boolean }>(p, "parameters"));
    for (const name of Object.keys(route.pathParams?.properties ?? {}))
      expect(params).toContainEqual(expect.objectContaining({ name, in: "path", required: true }));
    for (const name of Object.keys(route.query?.properties ?? {})) {
      const required = (route.query?.required ?? []).includes(name);
      expect(params).toContainEqual(expect.objectContaining({ name, in: "query", required }));
    }
    expect(params.map((p) => p.name)).toContain("X-Request-Id");
    expect(params.some((p) => p.name === "Idempotency-Key")).toBe(acceptsIdempotencyKey(route));
    expect(Boolean(op.requestBody)).toBe(Boolean(route.body));

    const statuses = Object.keys(op.responses).map(Number);
    expect(statuses).toContain(route.status);
    for (const s of [...COMMON_ERROR_STATUSES, ...(route.errors ?? [])]) expect(statuses).toContain(s);
    for (const s of statuses.filter((s) => s >= 400)) {
      const response = resolve<{ content: Record<string, { schema: JsonSchema }> }>(op.responses[String(s)], "responses");
      expect(response.content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/ProblemDetails" });
    }
    const success = op.responses[String(route.status)] as { content?: unknown; headers: Record<string, unknown> };
    expect(Boolean(success.content)).toBe(route.status !== 204);
    expect(Object.keys(success.headers)).toEqual(expect.arrayContaining(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]));

    expect(op.security).toEqual([{ oauth2: route.scope ? [route.scope] : [] }]);
    expect(op["x-sandbox-only"]).toBe(route.sandboxOnly ? true : undefined);
  });

  it("every $ref resolves", () => {
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) {
        for (const x of v) walk(x);
        return;
      }
      if (typeof v !== "object" || v === null) return;
      const ref = (v as { $ref?: unknown }).$ref;
      if (typeof ref === "string") refs.add(ref);
      Object.values(v).forEach(walk);
    };
    walk(doc);
    for (const ref of refs) {
      const [, kind, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
      expect((doc.components as Record<string, Record<string, unknown>>)[kind]?.[name], ref).toBeDefined();
    }
  });
});

describe("what the document states", () => {
  it("is OpenAPI 3.1, version 2026-11-20, with the decisions in its description", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(FIRST_API_VERSION);
    const text = String(doc.info.description);
    expect(text).toContain("## Decisions");
    for (const fact of [
      "displayId",
      "orderNumber",
      "nextCursor",
      "Default `limit` is 20",
      "`Bearer`",
      "INSUFFICIENT_SCOPE",
      "PREPARING",
      "Idempotency-Key",
      "X-Service-Signature",
      "X-RateLimit-Limit",
      "sandbox",
    ]) {
      expect(text).toContain(fact);
    }
  });

  it("lists every error code and the problem-details schema", () => {
    expect(doc.components.schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_CATALOG));
    expect(doc.components.schemas.ProblemDetails.required).toEqual([
      "type",
      "title",
      "status",
      "detail",
      "code",
      "instance",
      "requestId",
      "traceId",
      "retryable",
    ]);
  });

  it("has the OAuth2 client-credentials scheme with every scope", () => {
    const flow = (doc.components.securitySchemes.oauth2 as { flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } } }).flows
      .clientCredentials;
    // Absolute: OAuth clients such as Postman's fetch it as written.
    expect(flow.tokenUrl).toBe(`${loadConfig({}).publicBaseUrl}/partner/auth/token`);
    expect(flow.scopes).toEqual(SCOPE_DESCRIPTIONS);
  });

  it("describes the token endpoint: JSON and form bodies, Basic auth, tenant_id, token_type Bearer", () => {
    const op = doc.paths["/partner/auth/token"].post;
    expect(Object.keys((op.requestBody as { content: object }).content)).toEqual(["application/json", "application/x-www-form-urlencoded"]);
    expect(op.security).toEqual([{}, { clientBasic: [] }]);
    expect(Object.keys(doc.components.schemas.TokenRequest.properties as object)).toContain("tenant_id");
    expect((doc.components.schemas.TokenResponse.properties as Record<string, JsonSchema>).token_type.enum).toEqual(["Bearer"]);
    expect(doc.paths["/.well-known/jwks.json"].get.operationId).toBe("getJwks");
  });

  it("has a webhook per event type with its envelope and the delivery headers", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES, TEST_EVENT_TYPE].sort());
    for (const [type, item] of Object.entries(doc.webhooks)) {
      const post = item.post as { parameters: { name: string }[]; requestBody: { content: { "application/json": { schema: JsonSchema } } } };
      expect(post.parameters.map((p) => p.name)).toEqual(
        expect.arrayContaining(["X-Service-Signature", "X-Service-Event-Id", "X-Service-Event-Type", "X-Service-Delivery-Id"]),
      );
      const name = String(post.requestBody.content["application/json"].schema.$ref).split("/").pop() as string;
      const envelope = doc.components.schemas[name];
      expect(envelope.required).toEqual(["eventId", "eventType", "timestamp", "tenantId", "sequence", "data"]);
      expect((envelope.properties as Record<string, JsonSchema>).eventType.enum).toEqual([type]);
    }
  });

  it("names the servers: base_url and the sandbox", () => {
    expect(doc.servers.map((s) => s.url)).toEqual(["http://127.0.0.1:3000", "{sandbox_url}"]);
    expect(buildOpenApi(routes, schema, "https://api.example.com").servers[0].url).toBe("https://api.example.com");
  });
});
