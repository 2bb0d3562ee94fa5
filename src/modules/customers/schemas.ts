import type { JsonSchema } from "../../platform/json.js";
import { cursorParam, limitParam, matching, notBlank, nullable, shortText, updatedSinceParam } from "../../platform/schemas.js";
import { defineBody, defineQuery } from "../../platform/validate.js";
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

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const listCustomersInput = defineQuery({
  limit: limitParam,
  cursor: cursorParam,
  search: { type: "string", maxLength: SEARCH_MAX_LENGTH, description: SEARCH_DESCRIPTION },
  updated_since: updatedSinceParam,
});

export const createCustomerInput = defineBody(CustomerInputSchema);

export const updateCustomerInput = defineBody(CustomerPatchSchema);
