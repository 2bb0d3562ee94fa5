import { isRecord, type JsonSchema } from "../../platform/json.js";
import { API_VERSIONS, atLeast, type ApiVersion, type VersionLifecycles } from "../../platform/versions.js";
import type { VersionChange, VersionedDocument } from "./change.js";
import { compileChange, type CompiledChange, type ObjectRewrite } from "./compile.js";
import { V2026_12_01 } from "./2026-12-01.js";

/**
 * Every version change, oldest first: the one place versions are applied. The code answers in the newest version's
 * shape; an older version is that shape with each change newer than it applied backwards, newest first.
 */
export const VERSION_CHANGES: readonly VersionChange[] = [V2026_12_01];

for (const [i, change] of VERSION_CHANGES.entries()) {
  if (change.version !== API_VERSIONS[i + 1]) throw new Error(`version change ${i} is for ${change.version}, not ${API_VERSIONS[i + 1]}`);
}

/** Each change's instructions compiled once into its rewrites and its document edit (./compile.ts). */
const COMPILED = VERSION_CHANGES.map(compileChange);

/** The changes newer than each version, both ways: newest first takes an answer back to it, oldest first a request forward. */
const NEWER = new Map(
  API_VERSIONS.map((version) => {
    const oldestFirst = COMPILED.filter((change) => !atLeast(version, change.version));
    return [version, { newestFirst: oldestFirst.toReversed(), oldestFirst }];
  }),
);

function changesAfter(version: ApiVersion): readonly CompiledChange[] {
  return NEWER.get(version)?.newestFirst ?? [];
}

/** Rewrites a request's query of `version` into the newest version's (oldest change first), before the route reads it. */
export function versionRequest(version: ApiVersion, operationId: string, query: Record<string, unknown>): void {
  for (const change of NEWER.get(version)?.oldestFirst ?? []) change.requests.get(operationId)?.(query);
}

/** An event's `data` in `version`. */
export function versionEventData(version: ApiVersion, type: string, data: unknown): unknown {
  let out = data;
  for (const change of changesAfter(version)) out = eventStep(change, type, out);
  return out;
}

/** One change's rewrite of an event's `data`, if it has one for the type. */
function eventStep(change: CompiledChange, type: string, data: unknown): unknown {
  const transform = change.events[type];
  return transform && isRecord(data) ? transform(data) : data;
}

/** An envelope (`eventType`, `data`, …) in `version`; anything else is returned as it is. */
export function versionEnvelope(version: ApiVersion, envelope: unknown): unknown {
  if (!isRecord(envelope)) return envelope;
  let out = envelope;
  for (const change of changesAfter(version)) out = versionEnvelopeStep(change, out);
  return out;
}

type Rewrite = (value: unknown) => unknown;

/** The members of a document object that are objects, by name (`properties`, `content`, `examples`), read without casting. */
function members(value: unknown): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  if (isRecord(value)) for (const [name, member] of Object.entries(value)) if (isRecord(member)) out[name] = member;
  return out;
}

const schemaList = (value: unknown): JsonSchema[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** Where a response schema holds values a set of component rewrites applies to, compiled to one function (null: nowhere). */
class BodyPlanner {
  private readonly compiled = new Map<string, Rewrite | null>();

  constructor(
    private readonly components: Record<string, JsonSchema>,
    private readonly rewrites: Record<string, ObjectRewrite>,
  ) {}

  plan(schema: JsonSchema): Rewrite | null {
    const ref = typeof schema.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : null;
    if (ref) return this.component(ref);
    const parts: Rewrite[] = [];
    for (const key of ["allOf", "anyOf", "oneOf"] as const) {
      for (const sub of schemaList(schema[key])) {
        const rewrite = this.plan(sub);
        if (rewrite) parts.push(rewrite);
      }
    }
    const itemRewrite = isRecord(schema.items) ? this.plan(schema.items) : null;
    if (itemRewrite) parts.push((value) => (Array.isArray(value) ? value.map(itemRewrite) : value));
    const properties = Object.entries(members(schema.properties)).flatMap(([name, sub]) => {
      const rewrite = this.plan(sub);
      return rewrite ? [[name, rewrite] as const] : [];
    });
    if (properties.length) {
      parts.push((value) => {
        if (!isRecord(value)) return value;
        const out = { ...value };
        for (const [name, rewrite] of properties) if (name in out) out[name] = rewrite(out[name]);
        return out;
      });
    }
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0] : (value) => parts.reduce((v, rewrite) => rewrite(v), value);
  }

  private component(name: string): Rewrite | null {
    if (this.compiled.has(name)) return this.compiled.get(name) ?? null;
    this.compiled.set(name, null); // a component that holds itself ends here
    const inner = this.components[name] ? this.plan(this.components[name]) : null;
    const own = this.rewrites[name];
    const rewrite: Rewrite | null =
      inner && own
        ? (value) => {
            const within = inner(value);
            return isRecord(within) ? own(within) : within;
          }
        : own
          ? (value) => (isRecord(value) ? own(value) : value)
          : inner;
    this.compiled.set(name, rewrite);
    return rewrite;
  }
}

/** What a response's version rewrite needs of its request and its answer. */
export interface VersionedAnswer {
  body: unknown;
  query: Record<string, unknown>;
  headers: Record<string, string>;
}

/** The success body schema of an operation of the document, if it answers JSON. */
function successSchema(op: VersionedDocument["paths"][string][string]): JsonSchema | undefined {
  const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"))?.[1];
  const schema = media(success)?.schema;
  return isRecord(schema) ? schema : undefined;
}

function media(holder: JsonSchema | undefined): JsonSchema | undefined {
  return members(holder?.content)["application/json"];
}

type Step = { components: Map<string, Rewrite>; operations: CompiledChange["operations"] };

/** One step of rendering compiled per operation against a document: its component rewrites and operation rewrites. */
function compileStep(doc: VersionedDocument, rewrites: Record<string, ObjectRewrite>, operations: Step["operations"]): Step {
  const planner = new BodyPlanner(doc.components.schemas, rewrites);
  const components = new Map<string, Rewrite>();
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      const schema = successSchema(op);
      const rewrite = schema ? planner.plan(schema) : null;
      if (rewrite) components.set(op.operationId, rewrite);
    }
  }
  return { components, operations };
}

/**
 * Renders success bodies in a version: each change newer than it is applied, newest first, compiled against the
 * document of the change's own version, so a body is walked only where a change applies. The newest version has
 * no step: its answers pass through as the code gave them.
 */
export class VersionedResponses {
  private readonly steps: Step[] = [];

  /** `code` is the OpenAPI document of the shape the code answers in (buildCodeOpenApi's, the newest version's). */
  constructor(
    code: VersionedDocument,
    readonly version: ApiVersion,
  ) {
    let current = code;
    for (const change of changesAfter(version)) {
      this.steps.push(
        compileStep(
          current,
          {
            ...change.components,
            // The feed's events are rendered in the request's version; a delivery's payload is not: it shows what its
            // endpoint was sent, rendered in the endpoint's version where it is read.
            StoreEvent: (envelope) => versionEnvelopeStep(change, envelope),
            EventPage: (page) =>
              Array.isArray(page.data) ? { ...page, data: page.data.map((e: unknown) => (isRecord(e) ? versionEnvelopeStep(change, e) : e)) } : page,
          },
          change.operations,
        ),
      );
      const before = structuredClone(current);
      change.openapi(before);
      current = before;
    }
  }

  /** The body in this version. */
  body(operationId: string, answer: VersionedAnswer): unknown {
    let body = answer.body;
    if (body === undefined) return body;
    for (const step of this.steps) {
      const components = step.components.get(operationId);
      if (components) body = components(body);
      const operation = step.operations[operationId];
      if (operation) body = operation(body, { query: answer.query, headers: answer.headers });
    }
    return body;
  }
}

/** One change's rewrite of an envelope's data; an envelope it does not change is returned as it is. */
function versionEnvelopeStep(change: CompiledChange, envelope: Record<string, unknown>): Record<string, unknown> {
  if (typeof envelope.eventType !== "string") return envelope;
  const data = eventStep(change, envelope.eventType, envelope.data);
  return data === envelope.data ? envelope : { ...envelope, data };
}

/** One version as GET /public/v1/versions lists it. */
export interface VersionInfo {
  version: ApiVersion;
  status: "latest" | "supported" | "deprecated";
  releasedAt: string;
  deprecatedAt?: string;
  sunsetAt?: string;
  changes: string[];
}

/** The first version's own entry in the list: what it is, since no change declares it. */
const FIRST = { releasedAt: "2026-11-20", changes: ["The first dated version: the contract as first published, with both names where it gave two."] };

/** Every version, newest first, with what the operator declared about its retirement. */
export function versionList(lifecycles: VersionLifecycles): VersionInfo[] {
  const declared = VERSION_CHANGES.map((change) => ({ releasedAt: change.releasedAt, changes: change.changes.flatMap(({ says }) => says) }));
  const entries = [FIRST, ...declared].map((entry, i) => {
    const version = API_VERSIONS[i];
    const lifecycle = lifecycles[version];
    const info: VersionInfo = {
      version,
      status: lifecycle ? "deprecated" : i === API_VERSIONS.length - 1 ? "latest" : "supported",
      releasedAt: entry.releasedAt,
      changes: entry.changes,
    };
    if (lifecycle) info.deprecatedAt = lifecycle.deprecatedAt.toISOString().slice(0, 10);
    if (lifecycle?.sunsetAt) info.sunsetAt = lifecycle.sunsetAt.toISOString().slice(0, 10);
    return info;
  });
  return entries.reverse();
}

/**
 * The OpenAPI document of `version`, from the document of the shape the code answers in (a copy of it): with each
 * newer change's delta applied, newest first, and its examples rendered in the version as answers and deliveries are.
 */
export function versionDocument<Doc extends VersionedDocument>(code: Doc, version: ApiVersion): Doc {
  const doc = structuredClone(code);
  const responses = new VersionedResponses(code, version);
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!status.startsWith("2")) continue;
        for (const example of Object.values(members(media(response)?.examples))) {
          example.value = responses.body(op.operationId, { body: example.value, query: {}, headers: {} });
        }
      }
    }
  }
  for (const item of Object.values(doc.webhooks)) {
    const body = media(members(item.post).requestBody);
    for (const example of Object.values(members(body?.examples))) {
      example.value = versionEnvelope(version, example.value);
    }
  }
  for (const change of changesAfter(version)) change.openapi(doc);
  doc.info.version = version;
  return doc;
}

/** The GraphQL fields whose REST properties a version removed, each with its deprecation reason: GraphQL keeps them. */
export function removedGraphqlFields(): readonly { type: string; field: string; reason: string }[] {
  return COMPILED.flatMap((change) => change.removedGraphqlFields);
}
