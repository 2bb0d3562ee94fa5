import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import * as addFormatsModule from "ajv-formats";
import { invalidRequest, type Violation } from "../errors.js";
import type { JsonSchema } from "./route.js";

// ajv-formats is CommonJS: under ESM its function arrives as the module's `default`.
const addFormats = addFormatsModule.default as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes: coerce, strict: false, useDefaults: true });
  addFormats(ajv);
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

/** Runs a validator; any violation is a 400 listing every bad field (DECISIONS §6). */
export function check(validate: ValidateFunction, value: unknown, where: "path" | "query" | "body"): void {
  if (validate(value)) return;
  const seen = new Set<string>();
  const violations: Violation[] = [];
  for (const e of validate.errors ?? []) {
    // `oneOf`/`anyOf`/`if` wrappers repeat what their branches already said.
    if (["oneOf", "anyOf", "if", "not"].includes(e.keyword)) continue;
    const field = fieldOf(e);
    const key = `${field}:${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push({ field, code: CODES[e.keyword] ?? e.keyword.toUpperCase(), message: `${field} ${e.message ?? "is invalid"}` });
  }
  const where_ = where === "body" ? "request body" : where === "query" ? "query parameters" : "path";
  throw invalidRequest(`The ${where_} failed validation: ${violations.map((v) => v.message).join("; ")}.`, violations);
}
