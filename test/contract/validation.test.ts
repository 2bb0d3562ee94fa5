import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "../../src/platform/auth/scopes.js";
import { loadConfig } from "../../src/platform/config.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import type { JsonSchema } from "../../src/platform/json.js";
import { authorizedRoutes, type AuthorizedRoute as Route } from "../../src/rest/authorization.js";
import { routes as routeRows } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { fillPath, invalidText, validValue, wrongTypeValue } from "./support/examples.js";
import { exchange } from "./support/http.js";
import { ContractValidator } from "./support/validator.js";

/**
 * The server's 400s, 401s and 403s agree with the document: requests the document calls invalid are refused
 * with the documented problem, for every route of the table (the router validates with the same schemas).
 */

/** The route table as the router uses it: each row with who may call it, read off its GraphQL field. */
const routes = authorizedRoutes(schema, routeRows);
const doc = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
const validator = new ContractValidator(doc);

/** Whether the document (the tenants' version) declares the query parameter: an older version may take fewer. */
const documentedQuery = (route: Route, name: string) =>
  (doc.paths[route.path]?.[route.method.toLowerCase()]?.parameters ?? []).some((p) => p.in === "query" && p.name === name);

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTenant(app);
});

afterAll(async () => {
  await app?.close();
});

// Creating a tenant costs a slow secret hash: one per missing scope, shared by the routes that need it.
const limitedTokens = new Map<string, Promise<string>>();
const tokenWithout = (scope: string): Promise<string> => {
  if (!limitedTokens.has(scope))
    limitedTokens.set(
      scope,
      createTenant(app, { scopes: SCOPES.filter((s) => s !== scope) }).then((t) => t.token),
    );
  return limitedTokens.get(scope) as Promise<string>;
};
let productionToken: Promise<string> | null = null;

/** A request to the route that passes every check but the one under test. */
function target(route: Route, query: Record<string, string> = {}): string {
  const required = new Set(route.query?.required ?? []);
  const params = new URLSearchParams();
  for (const [name, schema] of Object.entries(route.query?.properties ?? {})) if (required.has(name)) params.set(name, String(validValue(schema)));
  for (const [k, v] of Object.entries(query)) params.set(k, v);
  const qs = params.toString();
  return `${fillPath(route.path, route.pathParams?.properties)}${qs ? `?${qs}` : ""}`;
}

async function expectInvalid(route: Route, path: string, body: unknown, fields: string[]): Promise<void> {
  const res = await exchange(app, route.method, path, { token: tenant.token, body });
  expect(res.status, res.body).toBe(400);
  expect(validator.check(res)).toEqual([]);
  expect(res.json?.code).toBe("INVALID_REQUEST");
  const errors = (res.json?.errors ?? []) as { field: string; code: string; message: string }[];
  expect(errors.length, "errors[] lists the violations").toBeGreaterThan(0);
  for (const field of fields)
    expect(
      errors.map((e) => e.field),
      `errors[] names ${field}`,
    ).toContain(field);
}

const withBody = routes.filter((r) => r.body);

describe.each(withBody.map((r) => [r.operationId, r] as const))("%s: invalid bodies are 400 with errors[]", (_id, route) => {
  const body = route.body?.schema ?? {};
  const properties = (body.properties ?? {}) as Record<string, JsonSchema>;
  const required = (body.required ?? []) as string[];

  it.skipIf(body.type !== "object")("a JSON array instead of an object", async () => {
    await expectInvalid(route, target(route), ["not", "an", "object"], []);
  });

  it.skipIf(required.length === 0)("an empty object: every required field is named", async () => {
    await expectInvalid(route, target(route), {}, required);
  });

  const wrong = Object.entries(properties)
    .map(([name, schema]) => [name, wrongTypeValue(schema)] as const)
    .filter(([, v]) => v !== undefined);
  it.skipIf(wrong.length === 0)("every field with a wrong type is named", async () => {
    const valid = Object.fromEntries(required.map((name) => [name, validValue(properties[name] ?? {})]));
    await expectInvalid(
      route,
      target(route),
      { ...valid, ...Object.fromEntries(wrong) },
      wrong.map(([name]) => name),
    );
  });
});

const queryChecks = routes.flatMap((route) =>
  Object.entries(route.query?.properties ?? {})
    .map(([name, schema]) => ({ route, name, value: invalidText(schema) }))
    .filter((c): c is { route: Route; name: string; value: string } => c.value !== undefined && documentedQuery(route, c.name)),
);

// Top-level (not in a describe): a describe that finds no route to check would fail as empty.
it.each(queryChecks.map((c) => [`${c.route.operationId} ?${c.name}=${c.value}`, c] as const))(
  "an invalid query parameter is 400 with errors[]: %s",
  async (_t, { route, name, value }) => {
    const body = route.body ? validValue(route.body.schema) : undefined;
    const res = await exchange(app, route.method, target(route, { [name]: value }), { token: tenant.token, body });
    expect(res.status, res.body).toBe(400);
    expect(validator.check(res)).toEqual([]);
    expect(((res.json?.errors ?? []) as { field: string }[]).map((e) => e.field)).toContain(name);
  },
);

const pathChecks = routes.flatMap((route) =>
  Object.entries(route.pathParams?.properties ?? {})
    .map(([name, schema]) => ({ route, name, value: invalidText(schema) }))
    .filter((c): c is { route: Route; name: string; value: string } => c.value !== undefined),
);

it.each(pathChecks.map((c) => [`${c.route.operationId} {${c.name}}=${c.value}`, c] as const))(
  "an invalid path parameter is 400: %s",
  async (_t, { route, name, value }) => {
    const path = fillPath(route.path.replace(`{${name}}`, encodeURIComponent(value)), route.pathParams?.properties);
    const res = await exchange(app, route.method, path, { token: tenant.token, body: route.body ? validValue(route.body.schema) : undefined });
    expect(res.status, res.body).toBe(400);
    expect(validator.check(res)).toEqual([]);
  },
);

describe("401 and 403 answers are the documented problems", () => {
  it.each(routes.map((r) => [r.operationId, r] as const))("%s", async (_id, route) => {
    const path = target(route);
    const anonymous = await exchange(app, route.method, path);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json?.code).toBe("UNAUTHORIZED");
    expect(validator.check(anonymous)).toEqual([]);

    const badToken = await exchange(app, route.method, path, { token: "not-a-jwt" });
    expect(badToken.status).toBe(401);
    expect(badToken.json?.code).toBe("INVALID_TOKEN");
    expect(validator.check(badToken)).toEqual([]);

    if (route.scope) {
      const res = await exchange(app, route.method, path, { token: await tokenWithout(route.scope) });
      expect(res.status).toBe(403);
      expect(res.json?.code).toBe("INSUFFICIENT_SCOPE");
      expect(String(res.json?.detail)).toContain(route.scope);
      expect(validator.check(res)).toEqual([]);
    }
    if (route.sandboxOnly) {
      productionToken ??= createTenant(app, { environment: "PRODUCTION" }).then((t) => t.token);
      const res = await exchange(app, route.method, path, { token: await productionToken });
      expect(res.status).toBe(403);
      expect(res.json?.code).toBe("FORBIDDEN");
      expect(validator.check(res)).toEqual([]);
    }
  });
});
