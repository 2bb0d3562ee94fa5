import { readFileSync } from "node:fs";
import { getOperationAST, parse } from "graphql";
import { createClient } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";
import { queryCost } from "../../src/graphql/limits.js";
import { createAdminKey } from "../../src/modules/admin/operations.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog } from "../helpers/fixtures.js";

/** docs/dashboards.md promises its examples run as written: each one runs here with a VIEWER key. */

const guide = readFileSync("docs/dashboards.md", "utf8");
const examples = [...guide.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => {
  const document = parse(m[1]);
  const operation = getOperationAST(document);
  if (!operation?.name) throw new Error(`docs/dashboards.md: name every example operation:\n${m[1]}`);
  return {
    text: m[1],
    document,
    name: operation.name.value,
    kind: operation.operation,
    variables: (operation.variableDefinitions ?? []).map((v) => v.variable.name.value),
  };
});

let app: TestApp;
let t: Tenant;
let viewer: string;
let orderId: string;

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  const { products } = await createCatalog(app.services.db, t.storeId);
  const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
    token: t.token,
    body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] },
  });
  expect(res.status).toBe(201);
  orderId = res.body.id;
  viewer = (await createAdminKey(app.services.db, { name: "dashboard", role: "VIEWER" })).key;
});
afterAll(() => app.close());

/** The example's variables: the store is the test's, every other one is left out (each is optional). */
const variablesOf = (names: string[]) => Object.fromEntries(names.filter((n) => n === "store").map((n) => [n, t.storeId]));

describe("docs/dashboards.md", () => {
  it("has the examples it describes", () => {
    expect(examples.map((e) => e.name)).toEqual(["Stores", "StoreDashboard", "Overview", "Follow"]);
  });

  it("every query example runs with a VIEWER key and answers the store's data", async () => {
    for (const example of examples.filter((e) => e.kind === "query")) {
      const res = await graphql<Record<string, unknown>>(app, example.text, variablesOf(example.variables), viewer);
      expect(res.errors, example.name).toBeUndefined();
      expect(JSON.stringify(res.data), example.name).toContain(t.storeCode);
    }
    const dashboard = examples.find((e) => e.name === "StoreDashboard");
    const res = await graphql<{ store: { orders: { data: { orderNumber: number; status: string }[] } } }>(
      app,
      dashboard?.text ?? "",
      { store: t.storeId },
      viewer,
    );
    expect(res.data?.store.orders.data).toEqual([expect.objectContaining({ status: "PENDING" })]);
  });

  it("the subscription example streams the store's events from `after`", async () => {
    const follow = examples.find((e) => e.name === "Follow");
    const client = createClient({ url: `${app.baseUrl}/graphql`, headers: { authorization: `Bearer ${viewer}` }, retryAttempts: 0 });
    try {
      const first = await new Promise<{ eventType: string; data: { orderId?: string } }>((resolve, reject) => {
        const dispose = client.subscribe<{ storeEvents: { eventType: string; data: { orderId?: string } } }>(
          { query: follow?.text ?? "", variables: { store: t.storeId, after: "0" } },
          {
            next: (result) => {
              dispose();
              if (result.data) resolve(result.data.storeEvents);
              else reject(new Error(JSON.stringify(result.errors)));
            },
            error: reject,
            complete: () => undefined,
          },
        );
      });
      expect(first).toMatchObject({ eventType: "order.created", data: { orderId } });
    } finally {
      client.dispose();
    }
  });

  it("states the examples' costs as the cost analysis counts them", () => {
    const cost = (name: string) => queryCost(schema, examples.find((e) => e.name === name)?.document ?? parse("{ __typename }"), { store: t.storeId });
    expect(guide).toContain(`\`Overview\` above costs\n${cost("Overview")} `);
    expect(guide).toContain(`\`StoreDashboard\` ${cost("StoreDashboard")}.`);
  });
});
