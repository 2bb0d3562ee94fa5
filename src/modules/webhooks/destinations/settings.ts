import type { SecretBox } from "../../../platform/crypto/encryption.js";
import { invalidRequest, unprocessable } from "../../../platform/errors.js";
import type { HostCheckResult } from "../url-safety.js";
import { BROKERS, isBroker } from "./registry.js";
import { badField, type DestinationType, type Shown } from "./types.js";

/** Every destination field a body may hold, whichever the type (each type takes some). */
export const DESTINATION_FIELDS = [...new Set(["url", ...Object.values(BROKERS).flatMap((d) => d.fields)])];

/** The destination fields of a create or PATCH body, as GraphQL passes them. */
export interface DestinationInput {
  type?: string | null;
  url?: string | null;
  exchange?: string | null;
  routingKey?: string | null;
  servers?: readonly string[] | null;
  subject?: string | null;
  topic?: string | null;
  projectId?: string | null;
  apiEndpoint?: string | null;
  queueUrl?: string | null;
  region?: string | null;
  endpoint?: string | null;
  credentials?: { accessKeyId?: string | null; secretAccessKey?: string | null; clientEmail?: string | null; privateKey?: string | null } | null;
}

/** What an endpoint stores of its destination. */
export interface StoredDestination {
  type: DestinationType;
  /** http: the URL; a broker: where it publishes, credentials left out. */
  url: string;
  /** A broker's settings as answers show them (credentials masked); null for http. */
  shown: Shown | null;
  /** A broker's full settings, encrypted; null for http. */
  ciphertext: string | null;
}

function given(input: DestinationInput): Record<string, unknown> {
  return Object.fromEntries(DESTINATION_FIELDS.flatMap((f) => (input[f as keyof DestinationInput] == null ? [] : [[f, input[f as keyof DestinationInput]]])));
}

/** Whether a body gives any destination field (beside the type). */
export function givesDestinationFields(input: DestinationInput): boolean {
  return Object.keys(given(input)).length > 0;
}

/**
 * A broker destination from a body (`base`: the endpoint's current settings, which the body's fields replace one by
 * one): its fields checked by its type (400 naming the field), its hosts by the network rules (422, as a webhook URL's).
 * `checkHost` resolves a host as the caller may (one of the Application's calls out).
 */
export async function brokerDestination(
  type: string,
  input: DestinationInput,
  base: Record<string, unknown>,
  box: SecretBox,
  checkHost: (host: string) => Promise<HostCheckResult>,
): Promise<StoredDestination> {
  if (!isBroker(type)) throw invalidRequest(`type: ${type} is not a broker type`, [{ field: "type", code: "INVALID_VALUE", message: "is not a broker type" }]);
  const destination = BROKERS[type];
  const fields = { ...base, ...given(input) };
  for (const name of DESTINATION_FIELDS) {
    if (fields[name] !== undefined && !destination.fields.includes(name)) throw badField(name, `is not a field of a ${type} endpoint`);
  }
  const settings = destination.validate(fields);
  for (const { field, host } of destination.hosts(settings)) {
    const check = await checkHost(host);
    if (!check.ok) throw unprocessable(check.message, [{ field, code: check.code, message: check.message }]);
  }
  return { type, url: destination.target(settings), shown: destination.display(settings), ciphertext: box.encrypt(JSON.stringify(settings)) };
}

/** An http endpoint's body holds no broker field. */
export function httpFieldsOnly(input: DestinationInput): void {
  for (const name of Object.keys(given(input))) {
    if (name !== "url") throw badField(name, "is not a field of an http endpoint");
  }
}

/** The settings a broker endpoint stores, decrypted, for a PATCH to change some of them. */
export function storedSettings(box: SecretBox, ciphertext: string | null): Record<string, unknown> {
  if (ciphertext === null) return {};
  const parsed: unknown = JSON.parse(box.decrypt(ciphertext));
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? Object.fromEntries(Object.entries(parsed)) : {};
}
