import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import type { JsonSchema } from "../../src/platform/route.js";
import { schema } from "../../src/graphql/schema.js";
import { OPERATION_EXAMPLES } from "../../src/rest/openapi-examples.js";
import { buildOpenApi, operationIds, type OpenApiDocument } from "../../src/rest/openapi.js";
import { routes } from "../../src/rest/routes.js";
import { ContractValidator } from "./support/validator.js";

/**
 * Every example in the OpenAPI document (request and success bodies, problem bodies, webhook bodies) is checked
 * with the contract suite's ajv setup against the schema it illustrates, undocumented fields included, and every
 * operation has them: an example that drifts from the schema, or a new operation without one, fails here.
 */

const doc: OpenApiDocument = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
const validator = new ContractValidator(doc);

interface Example {
  summary: string;
  value: unknown;
}

interface Illustrated {
  /** Where the media type object is, as JSON pointer parts. */
  at: string[];
  examples: Record<string, Example>;
}

const isObject = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every media type object under `value` (at `at`) that holds a schema, with its examples (possibly none). */
function mediaTypes(value: unknown, at: string[]): Illustrated[] {
  if (!isObject(value)) return [];
  if (isObject(value.schema) && at.at(-2) === "content") return [{ at, examples: isObject(value.examples) ? (value.examples as Record<string, Example>) : {} }];
  return Object.entries(value).flatMap(([k, v]) => mediaTypes(v, [...at, k]));
}

const all = [
  ...mediaTypes(doc.paths, ["paths"]),
  ...mediaTypes(doc.webhooks, ["webhooks"]),
  ...mediaTypes(doc.components.responses, ["components", "responses"]),
];
const title = (at: string[]) => at.join(" ").replace(/~1/g, "/");

function operationAt(operationId: string): string[] {
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) if (op.operationId === operationId) return ["paths", path, method];
  throw new Error(`no operation ${operationId}`);
}

const examplesUnder = (prefix: string[], where: (at: string[]) => boolean) =>
  all.filter(({ at }) => prefix.every((p, i) => at[i] === p) && where(at.slice(prefix.length))).flatMap((m) => Object.values(m.examples));

describe("every operation shows examples", () => {
  it.each(operationIds(doc))("%s", (operationId) => {
    const at = operationAt(operationId);
    const op = doc.paths[at[1]][at[2]];
    if (op.requestBody) expect(examplesUnder(at, (rest) => rest[0] === "requestBody").length, "request body examples").toBeGreaterThan(0);
    const success = Object.entries(op.responses).find(([s]) => s.startsWith("2"));
    if (success && isObject(success[1].content)) expect(examplesUnder(at, (rest) => rest[1] === success[0]).length, "success body examples").toBeGreaterThan(0);
    expect(examplesUnder(at, (rest) => rest[0] === "responses" && Number(rest[1]) >= 400).length, "a problem example").toBeGreaterThan(0);
  });

  it("every webhook event shows its body", () => {
    const bare = mediaTypes(doc.webhooks, ["webhooks"]).filter((m) => Object.keys(m.examples).length === 0);
    expect(bare.map((m) => title(m.at))).toEqual([]);
  });

  it("every shared problem response shows a body", () => {
    const bare = mediaTypes(doc.components.responses, ["components", "responses"]).filter((m) => Object.keys(m.examples).length === 0);
    expect(bare.map((m) => title(m.at))).toEqual([]);
  });

  it("no example names an operation the document lacks", () => {
    const known = new Set(operationIds(doc));
    expect(Object.keys(OPERATION_EXAMPLES).filter((id) => !known.has(id))).toEqual([]);
  });

  it("createOrder's request examples send customerId or customer, never both", () => {
    const bodies = examplesUnder(operationAt("createOrder"), (rest) => rest[0] === "requestBody").map((e) => e.value as JsonSchema);
    expect(bodies.map((b) => ["customerId", "customer"].filter((k) => k in b))).toEqual([["customerId"], ["customer"]]);
  });
});

const cases = all.flatMap((m) => Object.entries(m.examples).map(([name, example]) => ({ name: `${title(m.at)}: ${name}`, at: m.at, example })));

describe("every example matches its schema", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, { at, example }) => {
    expect(example.summary, "a summary says what the example shows").toMatch(/\S/);
    expect(validator.checkValue([...at, "schema"], example.value)).toEqual([]);
    // A problem example is under the status its body names.
    const status = at[at.indexOf("responses") + 1];
    if (at.at(-1) === "application/problem+json" && /^\d+$/.test(status)) expect((example.value as JsonSchema).status).toBe(Number(status));
  });

  it("has examples to check", () => {
    expect(cases.length).toBeGreaterThan(100);
  });
});

describe("the check fails on a wrong example", () => {
  const orderAt = [...operationAt("getOrderById"), "responses", "200", "content", "application/json", "schema"];
  const order = () => structuredClone(OPERATION_EXAMPLES.getOrderById.response?.default.value) as JsonSchema;

  it("the unchanged example passes", () => {
    expect(validator.checkValue(orderAt, order())).toEqual([]);
  });

  it.each([
    ["a missing field", (o: JsonSchema) => delete o.total],
    ["a field of the wrong type", (o: JsonSchema) => (o.orderNumber = "1042")],
    ["a status outside the enum", (o: JsonSchema) => (o.status = "EATEN")],
    ["an undocumented field", (o: JsonSchema) => (o.waiter = "Luigi")],
    ["an undocumented field deep inside", (o: JsonSchema) => ((o.items as JsonSchema[])[0].spicy = true)],
  ])("%s", (_name, mutate) => {
    const o = order();
    mutate(o);
    expect(validator.checkValue(orderAt, o).length).toBeGreaterThan(0);
  });

  it("a request example with an unknown scenario", () => {
    const at = [...operationAt("createSandboxOrder"), "requestBody", "content", "application/json", "schema"];
    expect(validator.checkValue(at, { scenario: "delivery" })).toEqual([]);
    expect(validator.checkValue(at, { scenario: "drive_thru" }).length).toBeGreaterThan(0);
  });
});
