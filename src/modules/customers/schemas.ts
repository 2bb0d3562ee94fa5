import type { JsonSchema } from "../../platform/json.js";
import { cursorParam, limitParam, matching, notBlank, nullable, shortText, updatedSinceParam } from "../../platform/schemas.js";
import { SEARCH_DESCRIPTION, SEARCH_MAX_LENGTH } from "./search.js";

export const CustomerInputSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { ...shortText(200), ...notBlank },
    phone: nullable({ type: "string", maxLength: 40, ...matching("\\d", "must contain a digit") }),
    email: nullable({ type: "string", format: "email", maxLength: 254 }),
  },
};

export const CustomerPatchSchema: JsonSchema = {
  type: "object",
  minProperties: 1,
  description: "Any of name, phone, email; null clears phone or email.",
  properties: CustomerInputSchema.properties,
};

/** The customer list's arguments, by name: the GraphQL fields check them, and GET /customers takes them as its query. */
export const CUSTOMER_LIST_ARGS = {
  limit: limitParam,
  cursor: cursorParam,
  search: { type: "string", maxLength: SEARCH_MAX_LENGTH, description: SEARCH_DESCRIPTION },
  updatedSince: updatedSinceParam,
} satisfies Record<string, JsonSchema>;
