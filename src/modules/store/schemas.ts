import type { JsonSchema } from "../../platform/route.js";
import { nullable, shortText, uuid } from "../../platform/schemas.js";
import { STORE_STATUSES } from "./status.js";

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
  required: ["id", "code", "name", "slug", "logo", "phone", "isActive", "status", "address", "openingHours", "publicSettings"],
  properties: {
    id: uuid,
    code: { type: "string", description: "Alphanumeric store code; equals the token's tenant_id" },
    name: { type: "string" },
    slug: { type: "string" },
    logo: nullable({ type: "string" }),
    phone: nullable({ type: "string" }),
    isActive: { type: "boolean" },
    status: { type: "string", enum: [...STORE_STATUSES] },
    address: nullable(AddressSchema),
    openingHours: {
      type: "array",
      items: {
        type: "object",
        required: ["dayOfWeek", "opens", "closes"],
        properties: { dayOfWeek: { type: "integer", minimum: 0, maximum: 6 }, opens: { type: "string" }, closes: { type: "string" } },
      },
    },
    publicSettings: {
      type: "object",
      description: "Settings the store publishes; the keys below are the usual ones, a store may add others",
      additionalProperties: true,
      properties: {
        currency: { type: "string", description: "ISO 4217 code, e.g. BRL" },
        timezone: { type: "string", description: "IANA zone the opening hours are in, e.g. America/Sao_Paulo" },
        acceptsDelivery: { type: "boolean" },
        acceptsPickup: { type: "boolean" },
        minimumOrder: { type: "number", description: "Smallest order total accepted, in currency units" },
      },
    },
  },
};

export const AddressInputSchema: JsonSchema = {
  type: "object",
  required: ["street", "number", "neighborhood", "city", "state", "postalCode"],
  properties: {
    street: shortText(200),
    number: shortText(20),
    neighborhood: shortText(120),
    city: shortText(120),
    state: shortText(60),
    postalCode: shortText(20),
    complement: nullable({ type: "string", maxLength: 200 }),
  },
};
