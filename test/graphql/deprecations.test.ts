import { introspectionFromSchema, printSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";
import { removedGraphqlFields } from "../../src/modules/versions/render.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createOrder } from "../helpers/fixtures.js";
import { createTenant, graphql } from "../helpers/tenants.js";

/** The fields a REST version removed stay in GraphQL, deprecated with the reason their version change gives, and resolve. */

const ORDER_REASON = "Removed from the REST API in 2026-12-01. Orders drop `displayId` and `totalAmount`: read `orderNumber` (an integer) and `total`.";
const CURSOR_REASON = "Removed from the REST API in 2026-12-01. `pagination` drops `cursor`: pass `nextCursor` back as the `cursor` query parameter.";

describe("deprecations from the version changes", () => {
  it("marks each removed field with its change's reason, in introspection and in the printed schema", () => {
    expect(removedGraphqlFields()).toEqual([
      { type: "Order", field: "displayId", reason: ORDER_REASON },
      { type: "Order", field: "totalAmount", reason: ORDER_REASON },
      { type: "Pagination", field: "cursor", reason: CURSOR_REASON },
    ]);
    const types = introspectionFromSchema(schema).__schema.types;
    const deprecated = types.flatMap((type) =>
      "fields" in type && (type.name === "Order" || type.name === "Pagination")
        ? type.fields.filter((field) => field.isDeprecated).map((field) => [`${type.name}.${field.name}`, field.deprecationReason])
        : [],
    );
    expect(deprecated).toEqual([
      ["Order.displayId", ORDER_REASON],
      ["Order.totalAmount", ORDER_REASON],
      ["Pagination.cursor", CURSOR_REASON],
    ]);
    const printed = printSchema(schema);
    expect(printed).toContain(`displayId: String! @deprecated(reason: ${JSON.stringify(ORDER_REASON)})`);
    expect(printed).toContain(`cursor: String @deprecated(reason: ${JSON.stringify(CURSOR_REASON)})`);
  });

  describe("over /graphql", () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await startTestApp();
    });
    afterAll(() => app?.close());

    it("still resolves the deprecated fields", async () => {
      const tenant = await createTenant(app, { scopes: ["orders:read"] });
      const order = await createOrder(app.services.db, tenant.storeId);
      const res = await graphql<{ orders: { data: Record<string, unknown>[]; pagination: Record<string, unknown> } }>(
        app,
        "{ orders(limit: 1) { data { orderNumber displayId total totalAmount } pagination { cursor nextCursor } } }",
        {},
        tenant.token,
      );
      expect(res.errors).toBeUndefined();
      const [read] = res.data?.orders.data ?? [];
      const total = order.totalCents / 100;
      expect(read).toEqual({ orderNumber: order.orderNumber, displayId: String(order.orderNumber), total, totalAmount: total });
      expect(res.data?.orders.pagination.cursor).toBe(res.data?.orders.pagination.nextCursor);
    });
  });
});
