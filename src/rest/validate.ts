import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { invalidRequest } from "../platform/errors.js";
import { INSTANT_RULE, parseInstant, unstorableText } from "../platform/input.js";
import { addFormats } from "../platform/ajv-formats.js";
import { isUuid } from "../platform/uuid.js";
import type { JsonSchema } from "../platform/route.js";

function makeAjv(coerce: boolean): Ajv {
  // multipleOfPrecision: 19.99 / 0.01 is not an integer in binary floating point.
  const ajv = new Ajv({ allErrors: true, coerceTypes: coerce, strict: false, useDefaults: true, multipleOfPrecision: 6 });
  addFormats(ajv);
  // The service's own rules replace ajv-formats' looser ones (which take `urn:uuid:` ids, year 0000, leap seconds).
  ajv.addFormat("uuid", { type: "string", validate: isUuid });
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => parseInstant(s) !== null });
  return ajv;
}

/** Query strings and path segments are text: coerce "20" to 20, but never "abc" to a number. */
const textAjv = makeAjv(true);
const bodyAjv = makeAjv(false);

export interface InputValidators {
  path?: ValidateFunction;
  query?: ValidateFunction;
  body?: ValidateFunction;
}

export function compileObject(properties: Record<string, JsonSchema>, required: string[] = []): ValidateFunction {
  return textAjv.compile({ type: "object", properties, required, additionalProperties: true });
}

export function compileBody(schema: JsonSchema): ValidateFunction {
  return bodyAjv.compile(schema);
}

function fieldOf(e: ErrorObject): string {
  const parts = e.instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join("");
  const missing = e.keyword === "required" ? `.${(e.params as { missingProperty: string }).missingProperty}` : "";
  return `${parts}${missing}`.replace(/^\./, "") || "body";
}

const CODES: Record<string, string> = {
  required: "REQUIRED",
  type: "INVALID_TYPE",
  enum: "INVALID_VALUE",
  const: "INVALID_VALUE",
  format: "INVALID_FORMAT",
  pattern: "INVALID_FORMAT",
  minimum: "OUT_OF_RANGE",
  maximum: "OUT_OF_RANGE",
  exclusiveMinimum: "OUT_OF_RANGE",
  minLength: "TOO_SHORT",
  maxLength: "TOO_LONG",
  minItems: "TOO_FEW",
  maxItems: "TOO_MANY",
  additionalProperties: "UNKNOWN_FIELD",
  multipleOf: "INVALID_VALUE",
};

/** What a format error asks for, where ajv's "must match format" would not say. */
const FORMAT_HINTS: Record<string, string> = {
  "date-time": `must be ${INSTANT_RULE}`,
};

function messageOf(e: ErrorObject, field: string): string {
  const hint = e.keyword === "format" ? FORMAT_HINTS[(e.params as { format: string }).format] : undefined;
  return `${field} ${hint ?? e.message ?? "is invalid"}`;
}

/**
 * Runs a validator, and the text rule on every string (a NUL or an unpaired surrogate cannot be stored); any
 * violation is a 400 listing every bad field.
 */
export function check(validate: ValidateFunction, value: unknown, where: "path" | "query" | "body"): void {
  const valid = validate(value);
  const violations = unstorableText(value);
  if (valid && violations.length === 0) return;
  const seen = new Set<string>();
  for (const e of valid ? [] : (validate.errors ?? [])) {
    // `oneOf`/`anyOf`/`if` wrappers repeat what their branches already said.
    if (["oneOf", "anyOf", "if", "not"].includes(e.keyword)) continue;
    const field = fieldOf(e);
    const key = `${field}:${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push({ field, code: CODES[e.keyword] ?? e.keyword.toUpperCase(), message: messageOf(e, field) });
  }
  const where_ = where === "body" ? "request body" : where === "query" ? "query parameters" : "path";
  throw invalidRequest(`The ${where_} failed validation: ${violations.map((v) => v.message).join("; ")}.`, violations);
}

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
      names.map((field) => ({ field, code: "REPEATED_PARAMETER", message: `${field} is given more than once` })),
    );
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays a plain key.
  return Object.fromEntries(query);
}

/**
 * Keeps only the fields a body schema declares (recursively through objects, arrays and nullable
 * unions). Unknown fields are ignored rather than refused (a client may send an item's unitPrice, which the
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
