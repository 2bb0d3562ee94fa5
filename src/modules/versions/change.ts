import type { JsonSchema } from "../../platform/json.js";
import type { ApiVersion } from "../../platform/versions.js";

/**
 * One version change, declared once: what a version changed from the one before it, as changelog sentences each with
 * the instructions that carry it out. One instruction gives both the rewrite of requests, answers and events and the
 * edit of the OpenAPI document (./render.ts applies them), so the two cannot drift apart.
 *
 * The code answers in the newest version's shape. A change is written backwards, as Stripe's version changes are:
 * each instruction says how its version's shape differs from the version before it, and is applied to take an
 * answer, event or document back to that version. Nothing else in the code knows a version exists: no resolver or
 * route branches on one.
 */
export interface VersionChange {
  /** The version this change introduced. */
  version: ApiVersion;
  /**
   * When the service began serving the version (YYYY-MM-DD): never a later day, since a version in API_VERSIONS is
   * served. Its name is the date it was announced for, which may come after.
   */
  releasedAt: string;
  /** What changed, in the order the changelog prints it; instructions apply in this order too. */
  changes: Change[];
}

/** What one change says (the changelog and GET /public/v1/versions print the sentences) and what carries it out. */
export interface Change {
  says: string[];
  instructions: Instruction[];
}

export type Instruction = FieldRemoved | FieldAdded | ListAsArray | QueryIgnored | EventField | Reworded;

/** The version removed a property of response components; the version before carries it beside `at`. */
export interface FieldRemoved {
  kind: "fieldRemoved";
  components: string[];
  name: string;
  where: "before" | "after";
  at: string;
  /** Its schema before, or how it derives from the schema of `at` (where it was a second name of it). */
  schema: JsonSchema | ((at: JsonSchema) => JsonSchema);
  /** Its value before, from the object it goes into (written only where that object holds `at`). */
  value: (holder: Record<string, unknown>) => unknown;
  /** The GraphQL field (`Type.field`) the property was read from: it stays for GraphQL clients, deprecated. */
  graphql?: string;
}

/** The version added a property to response components; the version before never showed it. */
export interface FieldAdded {
  kind: "fieldAdded";
  components: string[];
  name: string;
}

/** The version answers `{ data, pagination }` for these operations; the version before answered the items alone. */
export interface ListAsArray {
  kind: "listAsArray";
  /** The page component the operations answer, whose `data` items the version before's array holds. */
  component: string;
  operations: string[];
}

/** The version reads the operation's query parameters; the version before ignored them and answered `query`. */
export interface QueryIgnored {
  kind: "queryIgnored";
  operation: string;
  query: Record<string, unknown>;
}

/** The version changed a field of events' `data`; the version before had `schema` and the value `value` gives. */
export interface EventField {
  kind: "eventField";
  types: string[];
  name: string;
  schema: JsonSchema;
  /** The field's value before, from its value now (written only where the data holds the field). */
  value: (now: unknown) => unknown;
}

/** A text of the document as the version words it (`now`) and as the version before did: OpenAPI only. */
export interface Reworded {
  kind: "reworded";
  /** The introduction (`info.description`), a component's or property's description, or an operation's success answer's. */
  in: "intro" | { component: string; property?: string } | { operation: string };
  now: string;
  before: string;
}

/* The vocabulary a version change is written in. */

type Beside = { before: string } | { after: string };

export function change(says: string | string[], ...instructions: Instruction[]): Change {
  return { says: typeof says === "string" ? [says] : says, instructions };
}

export function fieldRemoved(
  components: string[],
  name: string,
  options: Beside & { schema: FieldRemoved["schema"]; value: FieldRemoved["value"]; graphql?: string },
): FieldRemoved {
  const { schema, value, graphql } = options;
  const [where, at] = "before" in options ? (["before", options.before] as const) : (["after", options.after] as const);
  return { kind: "fieldRemoved", components, name, where, at, schema, value, ...(graphql ? { graphql } : {}) };
}

export function fieldAdded(components: string[], name: string): FieldAdded {
  return { kind: "fieldAdded", components, name };
}

export function listAsArray(component: string, ...operations: string[]): ListAsArray {
  return { kind: "listAsArray", component, operations };
}

export function queryIgnored(operation: string, query: Record<string, unknown>): QueryIgnored {
  return { kind: "queryIgnored", operation, query };
}

export function eventField(types: string[], name: string, options: { schema: JsonSchema; value: EventField["value"] }): EventField {
  return { kind: "eventField", types, name, ...options };
}

export function reworded(where: Reworded["in"], now: string, before: string): Reworded {
  return { kind: "reworded", in: where, now, before };
}

/** What a version change's OpenAPI edits touch of the document (the OpenAPI document the REST adapter builds has this shape). */
export interface VersionedDocument {
  info: JsonSchema;
  paths: Record<string, Record<string, { operationId: string; parameters?: JsonSchema[]; responses: Record<string, JsonSchema>; [key: string]: unknown }>>;
  webhooks: Record<string, JsonSchema>;
  components: { schemas: Record<string, JsonSchema> };
}
