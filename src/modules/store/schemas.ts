import type { JsonSchema } from "../../platform/route.js";
import { nullable, shortText } from "../../platform/schemas.js";

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
