import type { JsonSchema } from "./route.js";

/** JSON schemas of response bodies: printed into OpenAPI and checked by the contract tests. */

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });
export const uuid: JsonSchema = { type: "string", format: "uuid" };
export const dateTime: JsonSchema = { type: "string", format: "date-time" };
export const money: JsonSchema = { type: "number", multipleOf: 0.01, description: "Amount with at most two decimals" };

export const AddressSchema: JsonSchema = {
  type: "object",
  required: ["street", "number", "neighborhood", "city", "state", "postalCode"],
  properties: {
    street: { type: "string" },
    number: { type: "string" },
    neighborhood: { type: "string" },
    city: { type: "string" },
    state: { type: "string" },
    postalCode: { type: "string" },
    complement: nullable({ type: "string" }),
  },
};

export const StoreSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "slug", "logo", "phone", "isActive"],
  properties: {
    id: uuid,
    code: { type: "string", description: "Alphanumeric store code; equals the token's tenant_id" },
    name: { type: "string" },
    slug: { type: "string" },
    logo: nullable({ type: "string" }),
    phone: nullable({ type: "string" }),
    isActive: { type: "boolean" },
    status: { type: "string", enum: ["OPEN", "CLOSED", "PAUSED"] },
    address: nullable(AddressSchema),
    openingHours: {
      type: "array",
      items: {
        type: "object",
        required: ["dayOfWeek", "opens", "closes"],
        properties: { dayOfWeek: { type: "integer", minimum: 0, maximum: 6 }, opens: { type: "string" }, closes: { type: "string" } },
      },
    },
    publicSettings: { type: "object", additionalProperties: true },
  },
};
