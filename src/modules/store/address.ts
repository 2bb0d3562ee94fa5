import { isRecord, type JsonSchema } from "../../platform/json.js";
import { nullable, shortText } from "../../platform/schemas.js";

/**
 * A postal address as stores, orders (deliveryAddress) and customers keep it, declared once: its fields in order
 * with the longest text each takes. Every field but `complement` is required and not blank. The TypeScript type, the
 * JSON Schema of an address in a request, the GraphQL `Address` and `AddressInput` types and the check of a stored
 * address all come from this list.
 */
const ADDRESS_FIELDS = { street: 200, number: 20, neighborhood: 120, city: 120, state: 60, postalCode: 20, complement: 200 } as const;

export const ADDRESS_FIELD_NAMES = [
  "street",
  "number",
  "neighborhood",
  "city",
  "state",
  "postalCode",
  "complement",
] as const satisfies readonly (keyof typeof ADDRESS_FIELDS)[];
export const OPTIONAL_ADDRESS_FIELD = "complement";
export type AddressField = (typeof ADDRESS_FIELD_NAMES)[number];
type RequiredAddressField = Exclude<AddressField, typeof OPTIONAL_ADDRESS_FIELD>;
const REQUIRED_ADDRESS_FIELDS = ADDRESS_FIELD_NAMES.filter((f): f is RequiredAddressField => f !== OPTIONAL_ADDRESS_FIELD);

export type Address = { [K in RequiredAddressField]: string } & { [OPTIONAL_ADDRESS_FIELD]?: string | null };

export const AddressInputSchema: JsonSchema = {
  type: "object",
  required: REQUIRED_ADDRESS_FIELDS,
  properties: Object.fromEntries(
    ADDRESS_FIELD_NAMES.map((f) => [
      f,
      f === OPTIONAL_ADDRESS_FIELD ? nullable({ type: "string", maxLength: ADDRESS_FIELDS[f] }) : shortText(ADDRESS_FIELDS[f]),
    ]),
  ),
};

function isAddress(value: unknown): value is Address {
  if (!isRecord(value)) return false;
  const complement = value[OPTIONAL_ADDRESS_FIELD];
  return (
    REQUIRED_ADDRESS_FIELDS.every((f) => typeof value[f] === "string") && (complement === undefined || complement === null || typeof complement === "string")
  );
}

/** A JSON column holding an address (or null): only ever written from a checked input, so anything else is a bug. */
export function storedAddress(value: unknown): Address | null {
  if (value === null || value === undefined) return null;
  if (!isAddress(value)) throw new Error("a stored address is not an Address");
  return value;
}
