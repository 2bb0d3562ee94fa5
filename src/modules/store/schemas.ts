import type { JsonSchema } from "../../platform/json.js";
import { nullable, shortText, uuid } from "../../platform/schemas.js";
import { defineQuery } from "../../platform/validate.js";

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

/** The arguments of `store(id, code)`: either names a store; a partner token may name only its own. */
export const storeLookupInput = defineQuery({ id: uuid, code: shortText(64, "The store code (a token's tenant_id)") });
