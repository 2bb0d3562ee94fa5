import { STATUS_CODES } from "node:http";
import type { GraphQLSchema } from "graphql";
import * as catalogSchemas from "../modules/catalog/schemas.js";
import * as customerSchemas from "../modules/customers/schemas.js";
import * as orderSchemas from "../modules/orders/schemas.js";
import * as sandboxSchemas from "../modules/sandbox/schemas.js";
import * as storeSchemas from "../modules/store/schemas.js";
import * as webhookSchemas from "../modules/webhooks/schemas.js";
import * as versionSchemas from "../modules/versions/schemas.js";
import type { JsonSchema } from "../platform/json.js";
import { acceptsIdempotencyKey, type Route, type ResponseSpec } from "../platform/route.js";
import { attachExamples } from "./openapi-attach.js";
import { authorizedRoutes, type AuthorizedRoute } from "./authorization.js";
import type { OpenApiDocument, OpenApiOperation } from "./openapi-document.js";
import { SelectionSchemas } from "./openapi-selection.js";
import { API_CONTACT, API_DESCRIPTION, API_SUMMARY, API_TITLE, TAG_DESCRIPTIONS } from "./openapi-text.js";
import { FIRST_API_VERSION, LATEST_API_VERSION, type ApiVersion } from "../platform/versions.js";
import { versionDocument } from "../modules/versions/render.js";
import {
  HEADERS,
  PARAMETERS,
  PLATFORM_OPERATIONS,
  PLATFORM_SCHEMAS,
  RATE_LIMIT_HEADERS,
  RECEIPT_HEADERS,
  apiVersionParameter,
  codesWithStatus,
  eventSchemas,
  problemResponse,
  problems,
  ref,
  securitySchemes,
  webhooks,
} from "./openapi-platform.js";

/**
 * Builds the OpenAPI 3.1 document from the route table: every route's parameters, request body and scope come
 * from its GraphQL field (its `input` validators, which the router checks with, and its `authScopes`), and its
 * response body from its GraphQL selection, so document and server agree.
 */

/** Statuses every route-table operation can answer (auth, validation, rate limit, failure, overload or database away). */
export const COMMON_ERROR_STATUSES = [400, 401, 403, 429, 500, 503];

/** The error statuses a route documents: the common ones, the route's own, and those its shape implies. */
export function errorStatuses(route: AuthorizedRoute): number[] {
  const statuses = new Set([...COMMON_ERROR_STATUSES, ...(route.errors ?? [])]);
  if (route.pathParams) statuses.add(404); // a well-formed id that is not in this store
  // The router reads and parses the body of every POST, PUT and PATCH, even of a route that declares none.
  if (route.body || (route.method !== "GET" && route.method !== "DELETE")) {
    statuses.add(413);
    statuses.add(415);
  }
  if (acceptsIdempotencyKey(route)) statuses.add(409);
  return [...statuses].sort((a, b) => a - b);
}

const restSchemas = { ...storeSchemas, ...orderSchemas, ...customerSchemas, ...catalogSchemas, ...sandboxSchemas, ...webhookSchemas, ...versionSchemas };

/**
 * Request schemas exported from a module's schemas.ts as `<Name>Schema` become components named `<Name>`,
 * found by identity wherever a route uses them; everything else stays inline.
 */
class SchemaRegistry {
  readonly names = new Map<object, string>();
  readonly components: Record<string, JsonSchema> = {};

  constructor(reserved: Record<string, JsonSchema>) {
    for (const [exportName, value] of Object.entries(restSchemas)) {
      if (!exportName.endsWith("Schema") || typeof value !== "object" || value === null) continue;
      const name = exportName.slice(0, -"Schema".length);
      if (name in reserved) throw new Error(`${exportName} collides with the OpenAPI component ${name}`);
      this.names.set(value, name);
    }
  }

  /** A copy of the schema with named sub-schemas replaced by $ref (and registered as components). */
  use(schema: JsonSchema): JsonSchema {
    return this.walk(schema) as JsonSchema;
  }

  private walk(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    if (typeof value !== "object" || value === null) return value;
    const name = this.names.get(value);
    if (name) {
      if (!(name in this.components)) {
        this.components[name] = {}; // placeholder first: a schema that refers to itself terminates
        this.components[name] = this.copy(value);
      }
      return ref("schemas", name);
    }
    return this.copy(value);
  }

  private copy(value: object): JsonSchema {
    const copy: JsonSchema = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.walk(v)]));
    const mapping = this.mapping(value);
    return mapping ? { ...copy, discriminator: { ...(copy.discriminator as JsonSchema), mapping } } : copy;
  }

  /**
   * A discriminator's mapping, from the values each named branch's property takes: without one, tools read the
   * value as the component's name. The server's ajv needs none (it reads the branches' enums).
   */
  private mapping(value: object): Record<string, string> | null {
    if (!("discriminator" in value) || !("oneOf" in value) || !Array.isArray(value.oneOf)) return null;
    const { propertyName } = value.discriminator as { propertyName: string };
    const mapping: Record<string, string> = {};
    for (const branch of value.oneOf as JsonSchema[]) {
      const name = this.names.get(branch);
      const property = (branch.properties as Record<string, JsonSchema> | undefined)?.[propertyName];
      if (!name || !Array.isArray(property?.enum)) throw new Error(`discriminator ${propertyName}: each oneOf branch is a named schema with an enum of it`);
      for (const v of property.enum) mapping[String(v)] = `#/components/schemas/${name}`;
    }
    return mapping;
  }
}

/** A parameter whose schema's description moves up to the parameter, where renderers show it. */
function parameter(name: string, where: "path" | "query", schema: JsonSchema, required: boolean, registry: SchemaRegistry): JsonSchema {
  const { description, ...rest } = registry.use(schema);
  return { name, in: where, required, ...(description ? { description } : {}), schema: rest };
}

/** A success body's schema: the response's own pick of the route's selection, or its one root field's selection. */
function selectedBody(route: Route, response: ResponseSpec, selections: SelectionSchemas): JsonSchema {
  const { at, rootFields } = selections.of(route.document, route.operationId);
  if (response.body) return response.body(at);
  if (rootFields.length !== 1) throw new Error(`${route.operationId}: say which part of the result is the body (response.body)`);
  return at(rootFields[0]);
}

/** A success body as a $ref: to its fragment's component, or to the component the response names (registered here). */
function responseSchema(route: Route, response: ResponseSpec, selections: SelectionSchemas, named: Record<string, JsonSchema>): JsonSchema {
  const body = selectedBody(route, response, selections);
  const name = response.component;
  if (!name) {
    if (typeof body.$ref !== "string" || Object.keys(body).length !== 1) {
      throw new Error(`${route.operationId}: the response body is not one named fragment; name its component (response.component)`);
    }
    return body;
  }
  const printed = JSON.stringify(body);
  if (name in named && JSON.stringify(named[name]) !== printed) throw new Error(`${route.operationId}: another body is already named ${name}`);
  named[name] = body;
  return ref("schemas", name);
}

function operationOf(route: AuthorizedRoute, registry: SchemaRegistry, selections: SelectionSchemas, named: Record<string, JsonSchema>): OpenApiOperation {
  const parameters: JsonSchema[] = [];
  for (const [name, schema] of Object.entries(route.pathParams?.properties ?? {})) parameters.push(parameter(name, "path", schema, true, registry));
  const required = new Set(route.query?.required ?? []);
  for (const [name, schema] of Object.entries(route.query?.properties ?? {})) {
    parameters.push(parameter(name, "query", schema, required.has(name), registry));
  }
  parameters.push(ref("parameters", "XRequestId"), ref("parameters", "ApiVersion"));
  const idempotent = acceptsIdempotencyKey(route);
  if (idempotent) parameters.push(ref("parameters", "IdempotencyKey"));

  const success = (status: number, response: ResponseSpec): JsonSchema => {
    const headers: Record<string, JsonSchema> = {
      "X-Request-Id": ref("headers", "XRequestId"),
      "Api-Version": ref("headers", "ApiVersion"),
      Deprecation: ref("headers", "Deprecation"),
      Sunset: ref("headers", "Sunset"),
      ...RATE_LIMIT_HEADERS,
    };
    if (idempotent) headers["Idempotent-Replayed"] = ref("headers", "IdempotentReplayed");
    if (route.method !== "GET") Object.assign(headers, RECEIPT_HEADERS);
    for (const [name, header] of Object.entries(response.headers ?? {}))
      headers[name] = { description: header.description, schema: registry.use(header.schema) };
    const answer: JsonSchema = { description: response.description, headers };
    if (status !== 204) answer.content = { "application/json": { schema: responseSchema(route, response, selections, named) } };
    return answer;
  };
  const responses: Record<string, JsonSchema> = { [String(route.status)]: success(route.status, route.response) };
  for (const [status, response] of Object.entries(route.otherSuccess ?? {})) responses[status] = success(Number(status), response);
  Object.assign(responses, problems(errorStatuses(route)));

  const notes = [
    route.scope ? `Scope: \`${route.scope}\`.` : "No scope of its own: any valid partner token.",
    route.sandboxOnly ? "SANDBOX tokens only: PRODUCTION tokens get 403 FORBIDDEN." : "",
    idempotent ? "Accepts `Idempotency-Key`." : "",
  ].filter(Boolean);
  const operation: OpenApiOperation = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, notes.join(" ")].filter(Boolean).join("\n\n"),
    security: [{ oauth2: route.scope ? [route.scope] : [] }],
    parameters,
    responses,
  };
  if (route.sandboxOnly) operation["x-sandbox-only"] = true;
  if (route.body) {
    operation.requestBody = { required: true, content: { "application/json": { schema: registry.use(route.body.schema) } } };
  }
  return operation;
}

function checkUnique(routes: Route[]): void {
  const ids = new Set<string>();
  const keys = new Set<string>();
  for (const r of routes) {
    if (ids.has(r.operationId)) throw new Error(`route table: operationId ${r.operationId} is used twice`);
    const key = `${r.method} ${r.path}`;
    if (keys.has(key)) throw new Error(`route table: ${key} is defined twice`);
    ids.add(r.operationId);
    keys.add(key);
  }
}

/**
 * The document of one API version: built for the shape the code answers in, then taken to `version` by the
 * declared version changes (src/modules/versions/); its Api-Version parameter takes that version alone.
 */
export function buildOpenApi(routes: Route[], schema: GraphQLSchema, baseUrl: string, version: ApiVersion = FIRST_API_VERSION): OpenApiDocument {
  const doc = versionDocument(buildCodeOpenApi(routes, schema, baseUrl), version);
  doc.components.parameters.ApiVersion = apiVersionParameter(version);
  return doc;
}

/** The document of the shape the code answers in, which the versions are rendered from (see the router). */
export function buildCodeOpenApi(routes: Route[], schema: GraphQLSchema, baseUrl: string): OpenApiDocument {
  checkUnique(routes);
  const ownSchemas = { ...PLATFORM_SCHEMAS, ...eventSchemas() };
  const registry = new SchemaRegistry(ownSchemas);
  const selections = new SelectionSchemas(schema, new Set([...Object.keys(ownSchemas), ...registry.names.values()]));

  const paths: OpenApiDocument["paths"] = {};
  const add = (path: string, method: string, operation: OpenApiOperation) => {
    paths[path] ??= {};
    paths[path][method] = operation;
  };
  const platform = (first: boolean) => {
    for (const p of PLATFORM_OPERATIONS) if (p.first === first) add(p.path, p.method, p.operation as OpenApiOperation);
  };
  platform(true);
  const named: Record<string, JsonSchema> = {};
  for (const route of authorizedRoutes(schema, routes)) add(route.path, route.method.toLowerCase(), operationOf(route, registry, selections, named));
  for (const name of Object.keys(named)) {
    if (name in ownSchemas || name in selections.components || name in registry.components)
      throw new Error(`response component ${name} collides with another component`);
  }
  platform(false);

  const used = new Set<number>();
  const tagNames: string[] = [];
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      for (const status of Object.keys(op.responses).map(Number)) if (status >= 400) used.add(status);
      for (const tag of op.tags as string[]) if (!tagNames.includes(tag)) tagNames.push(tag);
    }
  }
  tagNames.push("Webhook events");
  const responses: Record<string, JsonSchema> = {};
  for (const status of [...used].sort((a, b) => a - b)) {
    if (codesWithStatus(status).length === 0) throw new Error(`HTTP ${status} is documented but no error code in src/platform/errors.ts has it`);
    responses[`Problem${status}`] = problemResponse(status, STATUS_CODES[status] ?? `HTTP ${status}`);
  }

  const doc: OpenApiDocument = {
    openapi: "3.1.0",
    info: {
      title: API_TITLE,
      version: LATEST_API_VERSION,
      summary: API_SUMMARY,
      description: API_DESCRIPTION,
      contact: { ...API_CONTACT, url: `${baseUrl}/docs` },
    },
    servers: [
      {
        url: baseUrl,
        description: "base_url (PUBLIC_BASE_URL). SANDBOX and PRODUCTION share it: the credentials decide the environment.",
      },
      {
        url: "{sandbox_url}",
        // The variable itself carries no description: swagger-parser 13's bundled 3.1 schema rejects one.
        description:
          "sandbox_url: the sandbox address, where published (default: base_url); the same service, so sandbox credentials on base_url are equivalent.",
        variables: { sandbox_url: { default: baseUrl } },
      },
    ],
    tags: tagNames.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `${name} operations.` })),
    paths,
    webhooks: webhooks(),
    components: {
      schemas: { ...ownSchemas, ...selections.components, ...named, ...registry.components },
      parameters: PARAMETERS,
      headers: HEADERS,
      responses,
      securitySchemes: securitySchemes(baseUrl),
    },
  };
  attachExamples(doc, baseUrl);
  // Shared parameters and headers appear only when an operation uses them (no Idempotency-Key without writes).
  const text = JSON.stringify({ paths: doc.paths, responses: doc.components.responses });
  for (const kind of ["parameters", "headers"] as const) {
    const all = doc.components[kind];
    doc.components[kind] = Object.fromEntries(Object.entries(all).filter(([name]) => text.includes(`"#/components/${kind}/${name}"`)));
  }
  return doc;
}

/** The operationIds of every operation in a document, in order. */
export function operationIds(doc: OpenApiDocument): string[] {
  return Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
}

/** The document as schema/openapi.json holds it: stable key order, two-space indent, final newline. */
export function printOpenApi(doc: OpenApiDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
