import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { invalidRequest, type Violation } from "./errors.js";
import { INSTANT_RULE, parseInstant, unstorableText } from "./input.js";
import { addFormats } from "./ajv-formats.js";
import { isUuid } from "./uuid.js";
import type { JsonSchema } from "./route.js";

/**
 * One validator per operation input, used by both doors. An input is declared once as a JSON Schema in its
 * module (the schema OpenAPI prints) and compiled here once. The REST router checks the request's path, query
 * and body with it; the GraphQL resolver checks its arguments in their JSON form (`jsonArgs`), named as REST
 * names them, so for the same bad value both doors answer the same 400 with the same `errors[]`.
 */

function makeAjv(coerce: boolean): Ajv {
  // multipleOfPrecision: 19.99 / 0.01 is not an integer in binary floating point. discriminator: a `oneOf` told
  // apart by a property (StatusChange) reports the errors of the branch its value picks, not of every branch.
  const ajv = new Ajv({ allErrors: true, coerceTypes: coerce, strict: false, useDefaults: true, multipleOfPrecision: 6, discriminator: true });
  addFormats(ajv);
  // The service's own rules replace ajv-formats' looser ones (which take `urn:uuid:` ids, year 0000, leap seconds).
  ajv.addFormat("uuid", { type: "string", validate: isUuid });
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => parseInstant(s) !== null });
  return ajv;
}

/** Query strings and path segments are text: coerce "20" to 20, but never "abc" to a number. */
const textAjv = makeAjv(true);
const bodyAjv = makeAjv(false);

export type InputPart = "path" | "query" | "body";

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

/** `items[3].quantity`: the instance path as a client writes it, with a missing property appended. */
function fieldOf(e: ErrorObject, part: InputPart): string {
  const parts = e.instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join("");
  const missing = e.keyword === "required" ? `.${(e.params as { missingProperty: string }).missingProperty}` : "";
  return `${parts}${missing}`.replace(/^\./, "") || part;
}

/**
 * A discriminator's error as the plain keyword it stands for, with its property named as `required` names one:
 * the property missing, not a string, or a value no branch takes.
 */
function discriminated(e: ErrorObject): ErrorObject {
  const { error, tag, tagValue } = e.params as { error: "tag" | "mapping"; tag: string; tagValue: unknown };
  const at = { ...e, instancePath: `${e.instancePath}/${tag}` };
  if (error === "mapping") return { ...at, keyword: "enum", message: "must be equal to one of the allowed values" };
  if (tagValue === undefined) return { ...e, keyword: "required", params: { missingProperty: tag }, message: `must have required property '${tag}'` };
  return { ...at, keyword: "type", params: { type: "string" }, message: "must be string" };
}

function messageOf(e: ErrorObject, field: string): string {
  const hint = e.keyword === "format" ? FORMAT_HINTS[(e.params as { format: string }).format] : undefined;
  return `${field} ${hint ?? e.message ?? "is invalid"}`;
}

function violationsOf(errors: ErrorObject[], part: InputPart): Violation[] {
  const seen = new Set<string>();
  const violations: Violation[] = [];
  for (const raw of errors) {
    const e = raw.keyword === "discriminator" ? discriminated(raw) : raw;
    // `oneOf`/`anyOf`/`if` wrappers repeat what their branches already said, and a nullable's null branch
    // ("must be null") only restates that the value failed the other one.
    if (["oneOf", "anyOf", "if", "not"].includes(e.keyword)) continue;
    if (e.keyword === "type" && (e.params as { type: unknown }).type === "null") continue;
    const field = fieldOf(e, part);
    const key = `${field}:${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push({ field, code: CODES[e.keyword] ?? e.keyword.toUpperCase(), message: messageOf(e, field) });
  }
  return violations;
}

const WHERE: Record<InputPart, string> = { path: "path", query: "query parameters", body: "request body" };

/** One operation input: its schema, compiled once, and the check both doors run. */
export class OperationInput {
  private readonly validate: ValidateFunction;

  constructor(
    readonly part: InputPart,
    /** The schema as declared (OpenAPI finds its named parts by identity). */
    readonly schema: JsonSchema,
  ) {
    this.validate = (part === "body" ? bodyAjv : textAjv).compile(schema);
  }

  /** Path and query parameters by name; a body's top-level fields. */
  get properties(): Record<string, JsonSchema> {
    return (this.schema.properties ?? {}) as Record<string, JsonSchema>;
  }

  get required(): string[] {
    return (this.schema.required ?? []) as string[];
  }

  /** Whether the schema accepts the value. Like `check`, it coerces text parameters and fills defaults in it. */
  accepts(value: unknown): boolean {
    return this.validate(value);
  }

  /**
   * Runs the schema, and the text rule on every string (a NUL or an unpaired surrogate cannot be stored); any
   * violation is a 400 INVALID_REQUEST listing every bad field.
   */
  check(value: unknown): void {
    const valid = this.validate(value);
    const violations = unstorableText(value);
    if (valid && violations.length === 0) return;
    violations.push(...violationsOf(valid ? [] : (this.validate.errors ?? []), this.part));
    throw invalidRequest(`The ${WHERE[this.part]} failed validation: ${violations.map((v) => v.message).join("; ")}.`, violations);
  }
}

/** A request body's input. */
export const defineBody = (schema: JsonSchema): OperationInput => new OperationInput("body", schema);

/** Path parameters, each required. */
export const definePath = (properties: Record<string, JsonSchema>): OperationInput =>
  new OperationInput("path", { type: "object", properties, required: Object.keys(properties), additionalProperties: true });

/** Query parameters; undeclared ones are ignored. */
export const defineQuery = (properties: Record<string, JsonSchema>, required: string[] = []): OperationInput =>
  new OperationInput("query", { type: "object", properties, required, additionalProperties: true });

/** A GraphQL value as JSON carries it: a DateTime as its ISO string; null stays null, as in a JSON body. */
export function jsonOf(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonOf);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, jsonOf(v)]),
  );
}

/**
 * GraphQL arguments as REST's parameters or body fields: in their JSON form, and an argument given as null
 * is one not given (the REST façade passes an absent query parameter as null).
 */
export function jsonArgs(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, jsonOf(v)]),
  );
}
