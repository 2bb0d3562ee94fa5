import type { JsonSchema } from "../../platform/json.js";
import { cursorParam, limitParam } from "../../platform/schemas.js";
import { defineBody, defineQuery } from "../../platform/validate.js";

export const ProductStatusSchema: JsonSchema = {
  type: "object",
  required: ["isActive"],
  properties: { isActive: { type: "boolean", description: "false pauses the product" } },
};

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const listProductsInput = defineQuery({ limit: limitParam, cursor: cursorParam });

export const productStatusInput = defineBody(ProductStatusSchema);
