import { isDeepStrictEqual } from "node:util";
import { QueryCompiler } from "@prisma/client/runtime/query_compiler_bg.postgresql.mjs";
import * as enums from "../../generated/prisma/enums.js";

/**
 * A query-plan cache for Prisma 6's query compiler.
 *
 * Prisma 6 compiles every call's query to a plan in WebAssembly, and building the plan's objects crosses into
 * JavaScript thousands of times: for an order detail that was 1.4 ms of the 2.1 ms of CPU the Prisma-only
 * baseline spent per request. Prisma 7 caches plans by the query's shape, with the values taken out as
 * placeholders, but Prisma 7 cannot run here (its CLI downloads a native schema engine, and our builds reach
 * only the npm registry) and no library adds a cache to Prisma 6. The 6.19 compiler already understands those
 * placeholders (`{"$type":"Param"}`) and leaves them in the plan as `{"prisma__type":"param"}`, which its
 * interpreter looks up by name. So this compiles each shape once and, on every call, puts the call's values where
 * the placeholders are: the plan the interpreter receives is the one the compiler would have built.
 *
 * Only reads are cached, and only values compared with a column in a `where` or a `cursor` become placeholders;
 * `take`, `skip`, `orderBy`, booleans, enum values (an unknown one must still fail in the compiler with Prisma's
 * own error) and the operands of JSON, scalar-list and full-text filters stay part of the shape. And the cache
 * checks rather than trusts: the first time a shape is seen, the filled plan must equal, deeply, the compiler's
 * own plan for that call, or the shape is never cached and is compiled on every call as before. Because it patches an
 * internal, test/platform/plan-cache-pin.test.ts pins the Prisma version it was written against.
 */

/** Distinct shapes kept, least recently used first out: the REST routes use a few dozen. */
const MAX_SHAPES = 256;
const PARAM_PREFIX = "plan_cache_";
const ENUM_VALUES: ReadonlySet<string> = new Set(Object.values(enums).flatMap((e) => Object.values(e as Record<string, string>)));
/** Reads only: a write's data would make nearly every call a new shape, and writes are not where the time goes. */
const READ_ACTIONS = new Set(["findMany", "findFirst", "findFirstOrThrow", "findUnique", "findUniqueOrThrow", "count", "aggregate", "groupBy"]);
/** Keys whose value is itself a where (or a list of them). */
const NESTED_WHERE = new Set(["AND", "OR", "NOT", "some", "every", "none", "is", "isNot"]);
/** Filter operators whose operand is a value or a list of values. */
const VALUE_OPERATORS = new Set(["equals", "not", "lt", "lte", "gt", "gte", "in", "notIn", "contains", "startsWith", "endsWith"]);
/** Scalar-list, JSON and full-text operators: their operands stay in the shape (see `operand`). */
const LITERAL_OPERATORS = new Set([
  "mode",
  "search",
  "has",
  "hasSome",
  "hasEvery",
  "isEmpty",
  "isSet",
  "string_contains",
  "string_starts_with",
  "string_ends_with",
  "array_contains",
  "array_starts_with",
  "array_ends_with",
]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Shape {
  key: string;
  values: Json[];
}

interface CachedPlan {
  plan: unknown;
  /** The plan's objects and arrays that hold a placeholder somewhere below: the only ones copied per call. */
  holders: WeakSet<object>;
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The placeholders go only where a plain value is compared with a column: a wrong guess elsewhere (a JSON
 * path, say) can make the compiler panic, and a panic restarts Prisma's engine. Anything else stays in the key.
 */
function operand(v: Json, values: Json[]): Json {
  if ((typeof v === "string" && !ENUM_VALUES.has(v)) || typeof v === "number") {
    values.push(v);
    return { $type: "Param", value: `${PARAM_PREFIX}${values.length - 1}` };
  }
  if (isObject(v) && v.$type === "DateTime" && typeof v.value === "string") return operand(v.value, values);
  // A list is an `in` list; an object under an operator is a JSON value or a nested filter: left as they are.
  if (Array.isArray(v)) return v.map((x) => (typeof x === "object" ? x : operand(x, values)));
  return v;
}

/** A where, a cursor, a relation filter's where, or a list of them. */
function where(v: Json, values: Json[]): Json {
  if (Array.isArray(v)) return v.map((x) => where(x, values));
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) out[k] = NESTED_WHERE.has(k) ? where(v[k], values) : condition(v[k], values);
  return out;
}

/** What a where says about one field: a value, an operator object, a compound key or a to-one relation's where. */
function condition(v: Json, values: Json[]): Json {
  if (!isObject(v) || v.$type !== undefined) return Array.isArray(v) ? v : operand(v, values);
  if ("path" in v) return v; // a JSON filter
  const out: JsonObject = {};
  for (const k of Object.keys(v)) {
    if (LITERAL_OPERATORS.has(k)) out[k] = v[k];
    else if (NESTED_WHERE.has(k)) out[k] = where(v[k], values);
    else out[k] = VALUE_OPERATORS.has(k) ? operand(v[k], values) : condition(v[k], values);
  }
  return out;
}

function parameterizeQuery(query: JsonObject, values: Json[]): JsonObject {
  const out: JsonObject = { ...query };
  if (isObject(query.arguments)) {
    const args: JsonObject = { ...query.arguments };
    if (args.where !== undefined) args.where = where(args.where, values);
    if (args.cursor !== undefined) args.cursor = where(args.cursor, values);
    out.arguments = args;
  }
  if (isObject(query.selection)) {
    const selection: JsonObject = {};
    for (const k of Object.keys(query.selection)) {
      const field = query.selection[k];
      selection[k] = isObject(field) ? parameterizeQuery(field, values) : field;
    }
    out.selection = selection;
  }
  return out;
}

function shapeOf(request: string): Shape | null {
  const parsed = JSON.parse(request) as Json;
  if (!isObject(parsed) || !isObject(parsed.query) || typeof parsed.action !== "string" || !READ_ACTIONS.has(parsed.action)) return null;
  const values: Json[] = [];
  const key = JSON.stringify({ ...parsed, query: parameterizeQuery(parsed.query, values) });
  return { key, values };
}

function isPlaceholder(node: object): node is { prisma__type: "param"; prisma__value: { name: string } } {
  const value = (node as { prisma__value?: { name?: unknown } }).prisma__value;
  return (node as { prisma__type?: unknown }).prisma__type === "param" && typeof value?.name === "string" && value.name.startsWith(PARAM_PREFIX);
}

/** Marks every object and array on a path to one of our placeholders; true when `node` is or holds one. */
function markHolders(node: unknown, holders: WeakSet<object>): boolean {
  if (typeof node !== "object" || node === null) return false;
  if (isPlaceholder(node)) return true;
  let holds = false;
  for (const child of Array.isArray(node) ? node : Object.values(node)) holds = markHolders(child, holders) || holds;
  if (holds) holders.add(node);
  return holds;
}

/** A copy of the plan's paths to placeholders, with the call's values in place; the rest is shared. */
function fill(node: unknown, cached: CachedPlan, values: readonly Json[]): unknown {
  if (typeof node !== "object" || node === null) return node;
  if (isPlaceholder(node)) return values[Number(node.prisma__value.name.slice(PARAM_PREFIX.length))];
  if (!cached.holders.has(node)) return node;
  if (Array.isArray(node)) return node.map((child) => fill(child, cached, values));
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(node)) out[k] = fill(child, cached, values);
  return out;
}

/** Cached plans by shape, or null for a shape whose filled plan did not match the compiler's. */
const plans = new Map<string, CachedPlan | null>();
const calls = { cached: 0, compiled: 0 };

function remember(key: string, entry: CachedPlan | null): void {
  if (plans.size >= MAX_SHAPES) plans.delete(plans.keys().next().value as string);
  plans.set(key, entry);
}

/**
 * The kind of a raw statement's parameter, as fine as the compiler's typing of it: an integer is typed int or
 * bigint by its size, so both are kinds apart, and a tagged value (a date, bytes) by its tag.
 */
function kindOf(v: Json): string {
  if (typeof v === "number") return Number.isInteger(v) ? (Math.abs(v) < 2 ** 31 ? "int" : "integer") : "float";
  if (isObject(v)) return typeof v.prisma__type === "string" ? v.prisma__type : "object";
  return Array.isArray(v) ? "array" : v === null ? "null" : typeof v;
}

/** A raw statement's plan is its text and its parameters' types with the parameters beside them (`args`). */
interface RawPlan {
  type: "query";
  args: { type: "rawSql"; sql: string; args: Json[] };
}

const isRawPlan = (plan: unknown, sql: string, values: Json[]): plan is RawPlan =>
  isObject(plan) &&
  plan.type === "query" &&
  isObject(plan.args) &&
  plan.args.type === "rawSql" &&
  plan.args.sql === sql &&
  isDeepStrictEqual(plan.args.args, values);

/** Raw statements ($queryRaw) by text and parameter kinds; null for one whose plan is not the expected form. */
const rawPlans = new Map<string, RawPlan | null>();

/**
 * `$queryRaw`: the compiler only wraps the statement, yet costs as much as a read's plan. Its plan is cached by
 * text and parameter kinds, when the first call's plan holds that call's parameters as they were sent, and each
 * call gets that plan with its own parameters.
 */
function compileRaw(compile: (request: string) => unknown, request: string, raw: { query: string; parameters: string }): unknown {
  const values = JSON.parse(raw.parameters) as Json[];
  const key = `${raw.query}\u0000${values.map(kindOf).join(",")}`;
  const cached = rawPlans.get(key);
  if (cached) {
    calls.cached += 1;
    return { ...cached, args: { ...cached.args, args: values } };
  }
  calls.compiled += 1;
  const plan = compile(request);
  if (cached === undefined) {
    if (rawPlans.size >= MAX_SHAPES) rawPlans.delete(rawPlans.keys().next().value as string);
    rawPlans.set(key, isRawPlan(plan, raw.query, values) ? plan : null);
  }
  return plan;
}

/** A `$queryRaw` request's statement and its parameters (a JSON array in a string), or null for any other request. */
function rawOf(request: string): { query: string; parameters: string } | null {
  if (!request.startsWith('{"action":"queryRaw"')) return null;
  const args = (JSON.parse(request) as { query?: { arguments?: { query?: unknown; parameters?: unknown } } }).query?.arguments;
  return typeof args?.query === "string" && typeof args.parameters === "string" ? { query: args.query, parameters: args.parameters } : null;
}

function compileCached(compile: (request: string) => unknown, request: string): unknown {
  const raw = rawOf(request);
  if (raw) return compileRaw(compile, request, raw);
  const shape = shapeOf(request);
  if (!shape || shape.values.length === 0) {
    calls.compiled += 1;
    return compile(request);
  }
  const cached = plans.get(shape.key);
  if (cached !== undefined) {
    // Least recently used goes first: touching an entry moves it to the back of the Map's order.
    plans.delete(shape.key);
    plans.set(shape.key, cached);
    calls[cached ? "cached" : "compiled"] += 1;
    return cached ? fill(cached.plan, cached, shape.values) : compile(request);
  }
  calls.compiled += 1;
  // First sight: the compiler's own plan answers this call (and throws Prisma's own errors).
  const plan = compile(request);
  let entry: CachedPlan | null = null;
  try {
    const template = compile(shape.key);
    const candidate: CachedPlan = { plan: template, holders: new WeakSet() };
    markHolders(template, candidate.holders);
    if (isDeepStrictEqual(fill(template, candidate, shape.values), plan)) entry = candidate;
  } catch {
    // The compiler refused a placeholder in this shape: compile it every time. (A compiler panic instead
    // restarts Prisma's engine and fails this call; placeholders only go where `operand` allows to avoid that.)
  }
  remember(shape.key, entry);
  return plan;
}

let installed = false;

/** Routes every Prisma client in this process through the cache; idempotent. */
export function installPlanCache(): void {
  if (installed) return;
  installed = true;
  const compile = QueryCompiler.prototype.compile;
  QueryCompiler.prototype.compile = function compileWithCache(this: QueryCompiler, request: string): unknown {
    return compileCached((r) => compile.call(this, r), request);
  };
}

export interface PlanCacheStats {
  /** Shapes whose plan is cached, and shapes refused because the filled plan differed from the compiler's. */
  shapes: { cached: number; refused: number };
  /** Plans this process took from the cache, and plans the compiler built, since it started. */
  plans: { cached: number; compiled: number };
}

export function planCacheStats(): PlanCacheStats {
  let refused = 0;
  for (const entry of [...plans.values(), ...rawPlans.values()]) if (entry === null) refused += 1;
  return { shapes: { cached: plans.size + rawPlans.size - refused, refused }, plans: { ...calls } };
}
