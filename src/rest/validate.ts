import { invalidRequest } from "../platform/errors.js";
import type { JsonSchema } from "../platform/json.js";

/**
 * The query string as an object. Every parameter is single-valued (a list is one comma-separated value), so
 * one given twice is a 400 naming it rather than silently taking either value.
 */
export function queryOf(params: URLSearchParams): Record<string, string> {
  const query = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of params) {
    if (query.has(name)) repeated.add(name);
    else query.set(name, value);
  }
  if (repeated.size > 0) {
    const names = [...repeated];
    throw invalidRequest(
      `Each query parameter may be given once (send a list as one comma-separated value); repeated: ${names.join(", ")}.`,
      names.map((field) => ({ field, code: "REPEATED_PARAMETER", message: `\`${field}\` is given more than once` })),
    );
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays a plain key.
  return Object.fromEntries(query);
}

/**
 * Keeps only the fields a body schema declares (recursively through objects, arrays and nullable
 * unions, as deep as the schema goes, no deeper). Unknown fields are ignored rather than refused (a client may send an item's unitPrice, which the
 * catalog's price replaces), and they never reach GraphQL, whose input types would reject them.
 */
export function pickDeclared(value: unknown, schema: JsonSchema): unknown {
  if (value === null || typeof value !== "object") return value;
  const variants = (schema.anyOf as JsonSchema[] | undefined)?.filter((s) => s.type !== "null");
  if (variants?.length === 1) return pickDeclared(value, variants[0]);
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items ? value.map((v) => pickDeclared(v, items)) : value;
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties || schema.additionalProperties === true) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(properties)) {
    if (Object.hasOwn(value, key)) out[key] = pickDeclared((value as Record<string, unknown>)[key], sub);
  }
  return out;
}
