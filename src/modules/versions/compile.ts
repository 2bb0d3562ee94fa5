import { isRecord, type JsonSchema } from "../../platform/json.js";
import type { ApiVersion } from "../../platform/versions.js";
import type { EventField, FieldAdded, FieldRemoved, Instruction, ListAsArray, QueryIgnored, Reworded, VersionChange, VersionedDocument } from "./change.js";

/**
 * A version change's instructions compiled into what ./render.ts runs: per request, answer component, operation and
 * event type, the rewrites that take them back to the version before, and the edit that takes the document back.
 * Each instruction yields both sides here, from the one declaration.
 */

export type ObjectRewrite = (value: Record<string, unknown>) => Record<string, unknown>;

export interface CompiledChange {
  version: ApiVersion;
  /** Takes a request's query of the version before into this version's, by operationId. */
  requests: Map<string, (query: Record<string, unknown>) => void>;
  /** Takes a response component's value back, wherever a body holds it (found through the body's schema). */
  components: Record<string, ObjectRewrite>;
  /** Takes a whole success body back, by operationId, after its components (with what the request asked, for a rewrite that needs it). */
  operations: Record<string, (body: unknown, request: { query: Record<string, unknown>; headers: Record<string, string> }) => unknown>;
  /** Takes an event's `data` back, by event type. */
  events: Partial<Record<string, ObjectRewrite>>;
  /** Takes the OpenAPI document (a copy of this version's) back; each edit checks the document still holds what it edits. */
  openapi: (doc: VersionedDocument) => void;
  /** The GraphQL fields whose REST properties the version removed, with the reason their deprecation gives. */
  removedGraphqlFields: { type: string; field: string; reason: string }[];
}

/** A copy of `value` with `extra` placed before or after the key `at`; a plain loop, as it runs on every order of a page. */
function insert(value: Record<string, unknown>, at: string, where: "before" | "after", extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === at && where === "before") Object.assign(out, extra);
    out[key] = value[key];
    if (key === at && where === "after") Object.assign(out, extra);
  }
  return out;
}

function without(value: Record<string, unknown>, name: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (key !== name) out[key] = value[key];
  return out;
}

/** The document edits an instruction makes, each failing loudly when the document no longer holds what it was written against. */
class DocumentEdits {
  constructor(
    readonly doc: VersionedDocument,
    private readonly version: ApiVersion,
  ) {}

  fail(message: string): never {
    throw new Error(`version ${this.version}: ${message}`);
  }

  properties(schema: JsonSchema): Record<string, JsonSchema> {
    const properties: Record<string, JsonSchema> = {};
    if (isRecord(schema.properties)) for (const [name, sub] of Object.entries(schema.properties)) if (isRecord(sub)) properties[name] = sub;
    if (Object.keys(properties).length === 0) this.fail("a schema it edits has no properties");
    return properties;
  }

  component(name: string): JsonSchema {
    return this.doc.components.schemas[name] ?? this.fail(`the OpenAPI document has no component ${name}`);
  }

  operation(operationId: string): VersionedDocument["paths"][string][string] {
    for (const item of Object.values(this.doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return op;
    return this.fail(`the OpenAPI document has no operation ${operationId}`);
  }

  /** An operation's success answer (its first 2xx response). */
  success(operationId: string): JsonSchema {
    const success = Object.entries(this.operation(operationId).responses).find(([status]) => status.startsWith("2"))?.[1];
    return success ?? this.fail(`${operationId} has no success answer`);
  }

  /** The component an event type's webhook delivers. */
  eventComponent(type: string): JsonSchema {
    const post = this.doc.webhooks[type]?.post;
    const body = isRecord(post) && isRecord(post.requestBody) && isRecord(post.requestBody.content) ? post.requestBody.content["application/json"] : undefined;
    const ref = isRecord(body) && isRecord(body.schema) ? body.schema.$ref : undefined;
    if (typeof ref !== "string") return this.fail(`the OpenAPI document has no webhook ${type}`);
    return this.component(ref.replace("#/components/schemas/", ""));
  }

  /**
   * Every schema that refines the component: an `allOf` of its $ref beside properties of its own that restate `at`
   * (the event page's pagination). A body holding one is rewritten through the $ref, so its properties must follow.
   */
  refinements(component: string, at: string): JsonSchema[] {
    const ref = `#/components/schemas/${component}`;
    const found: JsonSchema[] = [];
    const visit = (value: unknown): void => {
      if (Array.isArray(value)) for (const item of value) visit(item);
      if (!isRecord(value)) return;
      const refines = Array.isArray(value.allOf) && value.allOf.some((sub) => isRecord(sub) && sub.$ref === ref);
      if (refines && isRecord(value.properties) && at in value.properties) found.push(value);
      for (const sub of Object.values(value)) visit(sub);
    };
    visit(this.doc.components.schemas);
    return found;
  }

  /** Adds a property beside an existing one, in `properties` and `required` alike. */
  addProperty(schema: JsonSchema, at: string, where: "before" | "after", name: string, added: JsonSchema): void {
    const properties = this.properties(schema);
    if (!(at in properties)) this.fail(`the schema has no property ${at}`);
    schema.properties = insert(properties, at, where, { [name]: added });
    const required = requiredOf(schema);
    const i = required.indexOf(at);
    if (i >= 0) schema.required = [...required.slice(0, where === "before" ? i : i + 1), name, ...required.slice(where === "before" ? i : i + 1)];
  }

  dropProperty(schema: JsonSchema, name: string): void {
    schema.properties = without(this.properties(schema), name);
    if (Array.isArray(schema.required)) schema.required = requiredOf(schema).filter((n) => n !== name);
  }

  /** A text as this version words it: the new wording must be there, or the instruction is stale. */
  replaceText(holder: JsonSchema, key: string, from: string, to: string): void {
    const text = holder[key];
    if (typeof text !== "string" || !text.includes(from)) this.fail(`"${from.slice(0, 40)}…" is no longer in ${key}`);
    holder[key] = text.replace(from, to);
  }
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.map(String) : [];
}

/** A page's items alone. */
const itemsOf = (body: unknown): unknown => (isRecord(body) && Array.isArray(body.data) ? body.data : body);

/** Appends a rewrite to those of a key, so instructions on one component apply in the order declared. */
function chain(rewrites: Partial<Record<string, ObjectRewrite>>, key: string, rewrite: ObjectRewrite): void {
  const before = rewrites[key];
  rewrites[key] = before ? (value) => rewrite(before(value)) : rewrite;
}

type Edit = (edits: DocumentEdits) => void;

function fieldRemoved(instruction: FieldRemoved, compiled: CompiledChange, edits: Edit[], reason: string): void {
  const { components, name, where, at, schema, value, graphql } = instruction;
  for (const component of components) {
    chain(compiled.components, component, (holder) => (at in holder ? insert(holder, at, where, { [name]: value(holder) }) : holder));
  }
  edits.push((e) => {
    for (const component of components) {
      for (const holder of [e.component(component), ...e.refinements(component, at)]) {
        const beside = e.properties(holder)[at] ?? e.fail(`${component} has no property ${at}`);
        e.addProperty(holder, at, where, name, typeof schema === "function" ? schema(beside) : structuredClone(schema));
      }
    }
  });
  if (graphql) {
    const [type, field, ...rest] = graphql.split(".");
    if (!type || !field || rest.length) throw new Error(`version ${compiled.version}: "${graphql}" is not Type.field`);
    compiled.removedGraphqlFields.push({ type, field, reason });
  }
}

function fieldAdded({ components, name }: FieldAdded, compiled: CompiledChange, edits: Edit[]): void {
  for (const component of components) chain(compiled.components, component, (holder) => without(holder, name));
  edits.push((e) => {
    for (const component of components) e.dropProperty(e.component(component), name);
  });
}

function listAsArray({ component, operations }: ListAsArray, compiled: CompiledChange, edits: Edit[]): void {
  for (const operation of operations) compiled.operations[operation] = itemsOf;
  edits.push((e) => {
    for (const operation of operations) {
      const { content } = e.success(operation);
      const json = isRecord(content) ? content["application/json"] : undefined;
      if (!isRecord(json) || !isRecord(json.schema) || json.schema.$ref !== `#/components/schemas/${component}`)
        e.fail(`${operation} does not answer ${component}`);
    }
    const { data } = e.properties(e.component(component));
    if (!data || !isRecord(data.items)) e.fail(`${component}, a list it unwraps, is not a { data, pagination } page`);
    e.doc.components.schemas[component] = { type: "array", items: data.items };
  });
}

function queryIgnored({ operation, query }: QueryIgnored, compiled: CompiledChange, edits: Edit[]): void {
  compiled.requests.set(operation, (given) => {
    for (const name of Object.keys(given)) delete given[name];
    Object.assign(given, query);
  });
  edits.push((e) => {
    const op = e.operation(operation);
    const parameters = (op.parameters ?? []).filter((p) => p.in !== "query");
    if (parameters.length === op.parameters?.length) e.fail(`${operation} takes no query parameters`);
    if (parameters.length) op.parameters = parameters;
    else delete op.parameters;
  });
}

function eventField({ types, name, schema, value }: EventField, compiled: CompiledChange, edits: Edit[]): void {
  for (const type of types) {
    chain(compiled.events, type, (data) => {
      if (!(name in data)) return data;
      const before = value(data[name]);
      return before === data[name] ? data : { ...data, [name]: before };
    });
  }
  edits.push((e) => {
    for (const type of types) {
      const { data } = e.properties(e.eventComponent(type));
      if (!data) e.fail(`the ${type} event has no data`);
      data.properties = { ...e.properties(data), [name]: structuredClone(schema) };
    }
  });
}

/** What holds the description a rewording edits. */
function described(e: DocumentEdits, where: Reworded["in"]): JsonSchema {
  if (where === "intro") return e.doc.info;
  if ("operation" in where) return e.success(where.operation);
  const component = e.component(where.component);
  if (!where.property) return component;
  return e.properties(component)[where.property] ?? e.fail(`${where.component} has no property ${where.property}`);
}

function reworded({ in: where, now, before }: Reworded, edits: Edit[]): void {
  edits.push((e) => {
    e.replaceText(described(e, where), "description", now, before);
  });
}

/** Compiles a version change; a removed GraphQL field's deprecation reason is its change's changelog sentences. */
export function compileChange(change: VersionChange): CompiledChange {
  const edits: Edit[] = [];
  const compiled: CompiledChange = {
    version: change.version,
    requests: new Map(),
    components: {},
    operations: {},
    events: {},
    openapi: (doc) => {
      const editor = new DocumentEdits(doc, change.version);
      for (const edit of edits) edit(editor);
    },
    removedGraphqlFields: [],
  };
  for (const { says, instructions } of change.changes) {
    for (const instruction of instructions) apply(instruction, compiled, edits, `Removed from the REST API in ${change.version}. ${says.join(" ")}`);
  }
  return compiled;
}

function apply(instruction: Instruction, compiled: CompiledChange, edits: Edit[], reason: string): void {
  switch (instruction.kind) {
    case "fieldRemoved":
      fieldRemoved(instruction, compiled, edits, reason);
      break;
    case "fieldAdded":
      fieldAdded(instruction, compiled, edits);
      break;
    case "listAsArray":
      listAsArray(instruction, compiled, edits);
      break;
    case "queryIgnored":
      queryIgnored(instruction, compiled, edits);
      break;
    case "eventField":
      eventField(instruction, compiled, edits);
      break;
    case "reworded":
      reworded(instruction, edits);
      break;
  }
}
