import type { JsonSchema } from "./json.js";
import { MAX_AMOUNT, MAX_YEAR, MIN_YEAR } from "./input.js";
import { defineQuery, PATTERN_RULE } from "./validate.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./schema/pagination.js";

/** JSON Schema building blocks shared by every domain's request schemas (responses come from GraphQL selections). */

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });

/** The value branch of a `nullable` schema (a selected nullable field that a response always carries). */
export function nonNull(schema: JsonSchema): JsonSchema {
  const [value, none] = Array.isArray(schema.anyOf) ? schema.anyOf : [];
  const isNull = typeof none === "object" && none !== null && "type" in none && none.type === "null";
  if (!isNull || typeof value !== "object" || value === null) throw new Error("nonNull: the schema is not a nullable one");
  return { ...value };
}

export const uuid: JsonSchema = { type: "string", format: "uuid" };

/** A `pattern` with the rule it stands for in words, which an error message gives after the field's name. */
export const matching = (pattern: string, rule: string): JsonSchema => ({ pattern, [PATTERN_RULE]: rule });

/** Text with something in it besides spaces. */
export const notBlank = matching("\\S", "must not be blank");

export const dateTime: JsonSchema = { type: "string", format: "date-time" };

/** The Location header of a 201: the new resource's path, relative to the API's base URL. */
export const locationHeader = (path: string) => ({
  Location: { description: `Path of the created resource, ${path}`, schema: { type: "string", format: "uri-reference" } },
});

// ---- Read API: store, orders, customers, catalog ----

/** Query parameters shared by the lists. Text is coerced ("20" → 20) but never clamped: 0, 101, "abc" are 400. */
export const limitParam: JsonSchema = {
  type: "integer",
  minimum: 1,
  maximum: MAX_PAGE_SIZE,
  default: DEFAULT_PAGE_SIZE,
  description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`,
};

/** The input of a field whose one argument is an id (a route's `{id}`). */
export const idArgs = { args: { id: uuid } };

/** A page size alone: a list field nested in another type (GraphQL only). */
export const pageLimitInput = defineQuery({ limit: limitParam });

export const cursorParam: JsonSchema = { type: "string", minLength: 1, description: "pagination.nextCursor of the previous page (the id of its last item)" };

/** The arguments of a list that takes a page size and a cursor alone. */
export const PAGE_ARGS = { limit: limitParam, cursor: cursorParam };

export const updatedSinceParam: JsonSchema = {
  type: "string",
  format: "date-time",
  description: `ISO 8601 date-time with a zone (e.g. 2025-01-31T12:00:00.000Z), years ${MIN_YEAR} to ${MAX_YEAR}; only items with updatedAt at or after it, oldest change first`,
};

/* Request bodies. Unknown fields are ignored, so a client may send an item's unitPrice
   or total: prices always come from the catalog. */

export const shortText = (max: number, description?: string): JsonSchema => ({
  type: "string",
  minLength: 1,
  maxLength: max,
  ...(description ? { description } : {}),
});

/**
 * Stored as int4 cents, hence the maximum. The server checks the two decimals with `multipleOf` (with a float
 * tolerance, src/platform/validate.ts); responses say it with `x-decimal-places` only.
 */
export const amount: JsonSchema = { type: "number", minimum: 0, maximum: MAX_AMOUNT, multipleOf: 0.01, "x-decimal-places": 2 };
