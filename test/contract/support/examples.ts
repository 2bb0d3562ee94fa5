import { randomUUID } from "node:crypto";
import type { JsonSchema } from "../../../src/platform/json.js";

/** A value the schema accepts, for inputs a test does not care about (path ids, required query values). */
export function validValue(schema: JsonSchema): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ("default" in schema) return schema.default;
  const branch = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branch) return validValue(branch.find((b) => b.type !== "null") ?? branch[0]);
  switch (schema.type) {
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      if (schema.format === "uuid") return randomUUID();
      if (schema.format === "date-time") return new Date().toISOString();
      return "x".repeat(typeof schema.minLength === "number" ? schema.minLength : 1);
  }
}

/** A value of the wrong JSON type for the schema, or undefined when every type is allowed. */
export function wrongTypeValue(schema: JsonSchema): unknown {
  const types = new Set(
    [schema.type, ...((schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[]).map((b) => b.type)].flat().filter((t): t is string => typeof t === "string"),
  );
  if (types.size === 0 && Array.isArray(schema.enum)) return "NOT_ONE_OF_THE_VALUES";
  const candidates: [string[], unknown][] = [
    [["string"], 12345],
    [["integer", "number"], "not-a-number"],
    [["boolean"], "not-a-boolean"],
    [["array"], { not: "an array" }],
    [["object"], ["not", "an", "object"]],
  ];
  for (const [accepts, wrong] of candidates) {
    if (accepts.some((t) => types.has(t)) && !types.has(typeof wrong === "object" ? (Array.isArray(wrong) ? "array" : "object") : typeof wrong)) return wrong;
  }
  return undefined;
}

/** Path parameters filled with acceptable values. */
export function fillPath(template: string, params: Record<string, JsonSchema> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(validValue(params[name] ?? { type: "string" }))));
}

/** Query and path values are text: a string the schema rejects, or undefined when any text is accepted. */
export function invalidText(schema: JsonSchema): string | undefined {
  const branches = [schema, ...((schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[])];
  const has = (pred: (s: JsonSchema) => boolean) => branches.some(pred);
  if (has((s) => s.type === "integer" || s.type === "number")) return "not-a-number";
  if (has((s) => s.type === "boolean")) return "not-a-boolean";
  if (has((s) => Array.isArray(s.enum))) return "NOT_ONE_OF_THE_VALUES";
  if (has((s) => s.format === "uuid")) return "not-a-uuid";
  if (has((s) => s.format === "date-time")) return "not-a-date";
  if (has((s) => typeof s.pattern === "string")) return "\u0000";
  return undefined;
}
