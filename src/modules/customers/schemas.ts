import type { JsonSchema } from "../../platform/route.js";
import { nullable, shortText } from "../../platform/schemas.js";

export const CustomerInputSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { ...shortText(200), pattern: "\\S" },
    phone: nullable({ type: "string", maxLength: 40, pattern: "\\d" }),
    email: nullable({ type: "string", format: "email", maxLength: 254 }),
  },
};

export const CustomerPatchSchema: JsonSchema = {
  type: "object",
  minProperties: 1,
  description: "Any of name, phone, email; null clears phone or email.",
  properties: CustomerInputSchema.properties,
};
