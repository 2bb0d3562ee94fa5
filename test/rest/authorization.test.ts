import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";
import { graphql as typed } from "../../src/platform/schema/typed.js";
import { authorizedRoutes, partnerRule } from "../../src/rest/authorization.js";
import { routes } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql } from "../helpers/tenants.js";

/**
 * Who may call a route is declared once, on its GraphQL field's authScopes: the router reads it from there, so a
 * route's 403s and the field's 403s are one rule with one message.
 */
describe("a route's rule is its field's", () => {
  const table = new Map(authorizedRoutes(schema, routes).map((r) => [r.operationId, r]));

  it("reads the scope, the sandbox-only rule and the open fields", () => {
    expect(table.get("listOrders")).toMatchObject({ scope: "orders:read", sandboxOnly: false });
    expect(table.get("updateOrderStatus")).toMatchObject({ scope: "orders:write", sandboxOnly: false });
    expect(table.get("listWebhookDeliveries")).toMatchObject({ scope: "webhooks:manage", sandboxOnly: false });
    expect(table.get("createSandboxOrder")).toMatchObject({ scope: null, sandboxOnly: true });
    expect(table.get("listEvents")).toMatchObject({ scope: null, sandboxOnly: false });
    // Every route but the feed's, the sandbox's, the Application's own and the exports' needs a scope (an export needs its resource's, which its field checks).
    const open = [...table.values()].filter((r) => r.scope === null).map((r) => r.operationId);
    expect(open.sort()).toEqual([
      "createExport",
      "createSandboxOrder",
      "fireSandboxEvent",
      "getApplication",
      "getEventById",
      "getExportById",
      "listEvents",
      "listExports",
      "seedSandbox",
      "updateApplication",
    ]);
  });

  it("refuses at start a field no partner token may use", () => {
    expect(() => partnerRule(schema, typed("query { applications(limit: 1) { data { id } } }"), "adminOnly")).toThrow(/no partner token may use it/);
  });

  it("refuses at start an operation whose root fields need different scopes", () => {
    expect(() => partnerRule(schema, typed("query { orders(limit: 1) { data { id } } customers(limit: 1) { data { id } } }"), "mixed")).toThrow(
      /different scopes/,
    );
  });
});

describe("one message for a PRODUCTION token at a sandbox operation", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("REST and GraphQL answer the same 403", async () => {
    const { token } = await createTenant(app, { environment: "PRODUCTION" });
    const rest = await call(app, "POST", "/public/v1/sandbox/orders", { token, body: { scenario: "delivery" } });
    expect(rest.status).toBe(403);
    const viaGraphql = await graphql(app, "mutation { sandboxCreateOrder(scenario: DELIVERY) { id } }", {}, token);
    expect(viaGraphql.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(viaGraphql.errors?.[0]?.message).toBe(rest.body.detail);
    expect(rest.body.detail).toMatch(/SANDBOX tokens only/);
  });
});
