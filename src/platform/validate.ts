import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { invalidRequest, type Violation } from "./errors.js";
import { INSTANT_RULE, parseInstant, unstorableText } from "./input.js";
import { addFormats } from "./ajv-formats.js";
import { isUuid } from "./uuid.js";
import { isRecord, type JsonSchema } from "./json.js";

/**
 * One validator per operation input, used by both doors. An input is declared once as a JSON Schema in its
 * module (the schema OpenAPI prints) and compiled here once. The REST router checks the request's path, query
 * and body with it; the GraphQL resolver checks its arguments in their JSON form (`jsonArgs`), named as REST
 * names them, so for the same bad value both doors answer the same 400 with the same `errors[]`.
 */

function makeAjv(coerce: boolean): Ajv {
  // multipleOfPrecision: 19.99 / 0.01 is not an integer in binary floating point. discriminator: a `oneOf` told
  // apart by a property (StatusChange) reports the errors of the branch its value picks, not of every branch.
  // verbose: an error carries the schema it broke, which holds what its message states (a pattern's rule).
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    strict: false,
    useDefaults: true,
    multipleOfPrecision: 6,
    discriminator: true,
    verbose: true,
  });
  addFormats(ajv);
  // The service's own rules replace ajv-formats' looser ones (which take `urn:uuid:` ids, year 0000, leap seconds).
  ajv.addFormat("uuid", { type: "string", validate: isUuid });
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => parseInstant(s) !== null });
  return ajv;
}

/** Query strings and path segments are text: coerce "20" to 20, but never "abc" to a number. */
const textAjv = makeAjv(true);
const bodyAjv = makeAjv(false);

/** What an input is to its caller: a request's path, query or body, or a GraphQL field's plain arguments. */
export type InputPart = "path" | "query" | "body" | "arguments";

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

/**
 * The schema keyword that states, in words, what a `pattern` stands for, as a message says it after the field
 * ("must not be blank"): a regular expression is not an error message.
 */
export const PATTERN_RULE = "x-pattern-rule";

/** What a format asks for, after "must be". */
const FORMAT_RULES: Record<string, string> = {
  "date-time": INSTANT_RULE,
  uuid: "a uuid",
  email: "an email address",
  uri: "an absolute URL (e.g. https://example.com/hooks)",
};

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

/** ajv types its params `any`: each is read as what it is, or not at all. */
function param(e: ErrorObject, name: string): unknown {
  const params: Record<string, unknown> = e.params;
  return params[name];
}
const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));
const plural = (n: unknown, one: string, many: string) => `${text(n)} ${n === 1 ? one : many}`;

/** `items[3].quantity`: the instance path as a client writes it, with a missing or unknown property appended. */
function fieldOf(e: ErrorObject, part: InputPart): string {
  const parts = e.instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join("");
  const named = e.keyword === "required" ? param(e, "missingProperty") : e.keyword === "additionalProperties" ? param(e, "additionalProperty") : undefined;
  return `${parts}${named === undefined ? "" : `.${text(named)}`}`.replace(/^\./, "") || part;
}

/** The values a `oneOf` told apart by `tag` takes, from its branches' enums. */
function branchValues(schema: unknown, tag: string): unknown[] {
  const branches = isRecord(schema) && Array.isArray(schema.oneOf) ? schema.oneOf : [];
  return branches.flatMap((branch: unknown) => {
    const property = isRecord(branch) && isRecord(branch.properties) ? branch.properties[tag] : undefined;
    return isRecord(property) && Array.isArray(property.enum) ? property.enum : [];
  });
}

/**
 * A discriminator's error as the plain keyword it stands for, with its property named as `required` names one:
 * the property missing, not a string, or a value no branch takes (listing those the branches take).
 */
function discriminated(e: ErrorObject): ErrorObject {
  const tag = text(param(e, "tag"));
  const at = { ...e, instancePath: `${e.instancePath}/${tag}` };
  if (param(e, "error") === "mapping") return { ...at, keyword: "enum", params: { allowedValues: branchValues(e.parentSchema, tag) } };
  if (param(e, "tagValue") === undefined) return { ...e, keyword: "required", params: { missingProperty: tag } };
  return { ...at, keyword: "type", params: { type: "string" } };
}

/**
 * What the value breaks, in words, after the field's name: ajv's own messages ("must have required property",
 * "must NOT have more than 200 characters") are a validator's, not the API's. `orNull` when null is also accepted.
 */
function ruleOf(e: ErrorObject, part: InputPart, orNull: boolean): string {
  const limit = param(e, "limit");
  switch (e.keyword) {
    case "required":
      return "is required";
    case "type": {
      const types = text(param(e, "type")).split(",");
      if (orNull && !types.includes("null")) types.push("null");
      return `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(" or ")}`;
    }
    case "enum": {
      const allowed = param(e, "allowedValues");
      return `must be one of: ${(Array.isArray(allowed) ? allowed : []).map(text).join(", ")}`;
    }
    case "const":
      return `must be ${text(param(e, "allowedValue"))}`;
    case "format": {
      const format = text(param(e, "format"));
      return `must be ${FORMAT_RULES[format] ?? `a valid ${format}`}`;
    }
    case "pattern": {
      const rule = e.parentSchema?.[PATTERN_RULE];
      return typeof rule === "string" ? rule : "is not in the expected format";
    }
    case "minimum":
      return `must be at least ${text(limit)}`;
    case "maximum":
      return `must be at most ${text(limit)}`;
    case "exclusiveMinimum":
      return `must be greater than ${text(limit)}`;
    case "exclusiveMaximum":
      return `must be less than ${text(limit)}`;
    case "minLength":
      return limit === 1 ? "must not be empty" : `must be at least ${plural(limit, "character", "characters")} long`;
    case "maxLength":
      return `must be at most ${plural(limit, "character", "characters")} long`;
    case "minItems":
      return `must have at least ${plural(limit, "item", "items")}`;
    case "maxItems":
      return `must have at most ${plural(limit, "item", "items")}`;
    case "minProperties": {
      const properties: unknown = e.parentSchema?.properties;
      const names = isRecord(properties) ? Object.keys(properties) : [];
      return limit === 1 && names.length > 0 ? `must set at least one of: ${names.join(", ")}` : `must set at least ${plural(limit, "field", "fields")}`;
    }
    case "maxProperties":
      return `must set at most ${plural(limit, "field", "fields")}`;
    case "additionalProperties":
      return `is not a field of this ${SUBJECTS[part]}`;
    case "multipleOf": {
      const step = Number(param(e, "multipleOf"));
      const decimals = -Math.log10(step);
      return Number.isInteger(decimals) && decimals > 0 ? `must have at most ${decimals} decimals` : `must be a multiple of ${step}`;
    }
    case "uniqueItems":
      return "must not list the same item twice";
    default:
      return "is not valid";
  }
}

/** What a message calls a part as a whole. */
const SUBJECTS: Record<InputPart, string> = { path: "path", query: "query", body: "body", arguments: "arguments" };

/** `name` is required; the body must set at least one of: … */
const subject = (field: string, part: InputPart): string => (field === part ? `the ${SUBJECTS[part]}` : `\`${field}\``);

function violationsOf(errors: ErrorObject[], part: InputPart): Violation[] {
  // A nullable (`anyOf: [X, { type: "null" }]`) fails its null branch too: that says null is accepted there.
  const nullable = new Set(errors.filter((e) => e.keyword === "type" && param(e, "type") === "null").map((e) => e.instancePath));
  const seen = new Set<string>();
  const violations: Violation[] = [];
  for (const raw of errors) {
    const e = raw.keyword === "discriminator" ? discriminated(raw) : raw;
    // `oneOf`/`anyOf`/`if` wrappers repeat what their branches already said, and a nullable's null branch
    // ("must be null") only restates that the value failed the other one.
    if (["oneOf", "anyOf", "if", "not"].includes(e.keyword)) continue;
    if (e.keyword === "type" && param(e, "type") === "null") continue;
    const field = fieldOf(e, part);
    const key = `${field}:${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const violation: Violation = {
      field,
      code: CODES[e.keyword] ?? e.keyword.toUpperCase(),
      message: `${subject(field, part)} ${ruleOf(e, part, nullable.has(e.instancePath))}`,
    };
    const allowed = e.keyword === "enum" ? param(e, "allowedValues") : e.keyword === "const" ? [param(e, "allowedValue")] : undefined;
    if (Array.isArray(allowed)) violation.allowed = allowed;
    violations.push(violation);
  }
  return violations;
}

const WHERE: Record<InputPart, string> = { path: "path", query: "query parameters", body: "request body", arguments: "arguments" };

/** One operation input: its schema, compiled once, and the check both doors run. */
export class OperationInput {
  // Private by name, so two inputs of the same part and schema compare equal.
  readonly #validate: ValidateFunction;

  constructor(
    readonly part: InputPart,
    /** The schema as declared (OpenAPI finds its named parts by identity). */
    readonly schema: JsonSchema,
  ) {
    this.#validate = (part === "body" ? bodyAjv : textAjv).compile(schema);
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
    return this.#validate(value);
  }

  /**
   * Runs the schema, and the text rule on every string (a NUL or an unpaired surrogate cannot be stored); any
   * violation is a 400 INVALID_REQUEST listing every bad field.
   */
  check(value: unknown): void {
    const valid = this.#validate(value);
    const violations = unstorableText(value);
    if (valid && violations.length === 0) return;
    violations.push(...violationsOf(valid ? [] : (this.#validate.errors ?? []), this.part));
    throw invalidRequest(`The ${WHERE[this.part]} failed validation: ${violations.map((v) => v.message).join("; ")}.`, violations);
  }
}

/**
 * An operation's input as its GraphQL field declares it (the field's `input` option, src/platform/schema/builder.ts),
 * in the field's own words: each plain argument's schema by argument name, and at most one object checked whole,
 * either one argument's value (`arg`, e.g. `input`) or the field's other arguments together (a status and its
 * reason, whose rule spans both). The REST façade binds HTTP names to these and derives its validators from them.
 */
export interface ArgsInput<Args = Record<string, unknown>> {
  args?: { [K in keyof Args & string]?: JsonSchema };
  object?: { schema: JsonSchema; arg?: keyof Args & string };
}

/** The arguments an input's object holds: its one argument, or every argument not declared plainly. */
export function objectArgs(input: ArgsInput, argNames: readonly string[]): string[] {
  if (!input.object) return [];
  const { arg } = input.object;
  if (arg !== undefined) return [arg];
  const plain = new Set(Object.keys(input.args ?? {}));
  return argNames.filter((name) => !plain.has(name));
}

/** The field's check of its arguments: the plain ones together, named by argument, then the object. */
export class ArgsCheck {
  readonly plain?: OperationInput;
  readonly object?: OperationInput;

  constructor(private readonly input: ArgsInput) {
    if (input.args) this.plain = new OperationInput("arguments", { type: "object", properties: input.args, additionalProperties: true });
    if (input.object) this.object = new OperationInput("body", input.object.schema);
  }

  check(args: Record<string, unknown>): void {
    const given = jsonArgs(args);
    const isPlain = (name: string) => Object.hasOwn(this.input.args ?? {}, name);
    this.plain?.check(Object.fromEntries(Object.entries(given).filter(([name]) => isPlain(name))));
    if (!this.object) return;
    const arg = this.input.object?.arg;
    this.object.check(arg === undefined ? Object.fromEntries(Object.entries(given).filter(([name]) => !isPlain(name))) : (given[arg] ?? {}));
  }
}

/** A field's `input` option read back at start, as Pothos keeps it in the field's extensions; null if it declares none. */
export function declaredArgs(option: unknown): ArgsInput | null {
  if (!isRecord(option)) return null;
  const input: ArgsInput = {};
  if (option.args !== undefined) {
    if (!isRecord(option.args) || !Object.values(option.args).every(isRecord)) throw new Error("a field's input.args is not a schema per argument");
    input.args = Object.fromEntries(Object.entries(option.args).filter((entry): entry is [string, JsonSchema] => isRecord(entry[1])));
  }
  if (option.object !== undefined) {
    const { object } = option;
    if (!isRecord(object) || !isRecord(object.schema) || (object.arg !== undefined && typeof object.arg !== "string"))
      throw new Error("a field's input.object is not { schema, arg? }");
    input.object = typeof object.arg === "string" ? { schema: object.schema, arg: object.arg } : { schema: object.schema };
  }
  return input;
}

/** A request body's input. */
export const defineBody = (schema: JsonSchema): OperationInput => new OperationInput("body", schema);

/** Path parameters, each required. */
export const definePath = (properties: Record<string, JsonSchema>): OperationInput =>
  new OperationInput("path", { type: "object", properties, required: Object.keys(properties), additionalProperties: true });

/** Query parameters; undeclared ones are ignored. */
export const defineQuery = (properties: Record<string, JsonSchema>, required: string[] = []): OperationInput =>
  new OperationInput("query", { type: "object", properties, required, additionalProperties: true });

/**
 * A GraphQL value as JSON carries it: a DateTime as its ISO string; null stays null, as in a JSON body. Recursive:
 * input types bound an argument's nesting, and a JSON scalar's was held to JSON_MAX_DEPTH (variables and literals).
 */
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
