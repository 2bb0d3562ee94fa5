export { AddressInputSchema } from "./address.js";
import { shortText, uuid } from "../../platform/schemas.js";
import { defineQuery } from "../../platform/validate.js";

/** The arguments of `store(id, code)`: either names a store; a partner token may name only its own. */
export const storeLookupInput = defineQuery({ id: uuid, code: shortText(64, "The store code (a token's tenant_id)") });
