import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { builder } from "../../src/platform/schema/builder.js";
import "../../src/graphql/schema.js";
import { defineRoute } from "../../src/platform/route.js";
import { shortText, uuid } from "../../src/platform/schemas.js";
import { defineBody, definePath } from "../../src/platform/validate.js";
import { buildCodeOpenApi } from "../../src/rest/openapi.js";
import { authorizedRoutes } from "../../src/rest/authorization.js";

/**
 * An operation is declared once, as its GraphQL field: its scope (`authScopes`) and its input (`input`). A REST row
 * that says only its method, path, document and answer gets both from the field, and so does the OpenAPI
 * document: the request schema, the path parameter and the scope appear without the row naming any of them.
 */
const labelInput = defineBody({ type: "object", required: ["label"], properties: { label: shortText(40, "What the kitchen prints") } });

builder.mutationField("labelOrder", (t) =>
  t.boolean({
    description: "A probe operation: labels an order.",
    authScopes: { scope: "orders:write" },
    args: { id: t.arg.id({ required: true }), label: t.arg.string({ required: true }) },
    input: { args: { id: uuid }, object: { schema: labelInput.schema } },
    resolve: () => true,
  }),
);
const schema = builder.toSchema({ sortSchema: true });

const document = parse("mutation labelOrder($id: ID!, $label: String!) { labelOrder(id: $id, label: $label) }");
const row = defineRoute({
  operationId: "labelOrder",
  method: "POST",
  path: "/public/v1/orders/{id}/label",
  tag: "Orders",
  summary: "Label an order",
  document,
  respond: (data) => ({ body: data }),
  status: 200,
  response: { description: "Labelled", component: "LabelResult" },
});

describe("an operation added as a field and a row with its method and path", () => {
  it("has the field's scope and input on the route", () => {
    const [route] = authorizedRoutes(schema, [row]);
    expect(route).toMatchObject({ scope: "orders:write", sandboxOnly: false, pathParams: definePath({ id: uuid }), body: labelInput });
    expect(route.query).toBeUndefined();
  });

  it("appears in the OpenAPI document with its request schema, path parameter and scope", () => {
    const doc = buildCodeOpenApi([row], schema, "http://api.test.local");
    const operation = doc.paths["/public/v1/orders/{id}/label"]?.post;
    expect(operation).toBeDefined();
    expect(operation?.security).toEqual([{ oauth2: ["orders:write"] }]);
    expect(operation?.description).toContain("Scope: `orders:write`.");
    expect(operation?.requestBody).toEqual({
      required: true,
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["label"],
            properties: { label: { type: "string", minLength: 1, maxLength: 40, description: "What the kitchen prints" } },
          },
        },
      },
    });
    expect(operation?.parameters).toContainEqual({ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } });
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "403", "404"]));
  });
});
