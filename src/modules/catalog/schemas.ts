import type { JsonSchema } from "../../platform/json.js";

export const ProductStatusSchema: JsonSchema = {
  type: "object",
  required: ["isActive"],
  properties: { isActive: { type: "boolean", description: "false pauses the product" } },
};
