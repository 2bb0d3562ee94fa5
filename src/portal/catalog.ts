import { type JsonSchema, type OpenApiDocument, openApiDocument } from "./api.js";

/**
 * What the portal lists from the published OpenAPI document rather than from a copy of its own: the event types
 * (with their scope, schema and example), and the sandbox's scenarios and fireable types.
 */

export interface EventTypeInfo {
  type: string;
  scope: string;
  description: string;
  schema: unknown;
  example: unknown;
}

/** A schema with its `$ref`s replaced by what they name, to a bounded depth (the document's schemas may nest). */
function resolve(schema: unknown, doc: OpenApiDocument, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => resolve(s, doc, depth));
  if (typeof schema !== "object" || schema === null) return schema;
  const ref = "$ref" in schema && typeof schema.$ref === "string" ? schema.$ref : null;
  if (ref) {
    const named = doc.components.schemas[ref.replace("#/components/schemas/", "")];
    return depth < 6 && named ? resolve(named, doc, depth + 1) : { $ref: ref };
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolve(v, doc, depth)]));
}

export async function eventCatalog(): Promise<EventTypeInfo[]> {
  const doc = await openApiDocument();
  return Object.entries(doc.webhooks).map(([type, { post }]) => {
    const body = post.requestBody?.content["application/json"];
    return {
      type,
      scope: post["x-required-scope"] ?? "",
      description: (post.description ?? "").split("\n\n")[0],
      schema: resolve(body?.schema, doc),
      example: Object.values(body?.examples ?? {})[0]?.value ?? null,
    };
  });
}

/** The types an endpoint may subscribe to (webhook.test only ever goes to the endpoint tested). */
export async function subscribableTypes(): Promise<string[]> {
  return (await eventCatalog()).map((e) => e.type).filter((t) => t !== "webhook.test");
}

/**
 * The types the event feed and the live stream can return to a token with these scopes: each type needs its read
 * scope, and the `webhook.*` types (the test event, and the operational events about an Application's own
 * endpoints) reach partners by webhook only, never through the feed (an export's events are in it).
 */
export async function feedTypes(scopes: readonly string[]): Promise<string[]> {
  return (await eventCatalog()).filter((e) => !e.type.startsWith("webhook.") && scopes.includes(e.scope)).map((e) => e.type);
}

function requestSchema(doc: OpenApiDocument, path: string): JsonSchema | undefined {
  const schema = doc.paths[path]?.post?.requestBody?.content["application/json"]?.schema;
  const ref = schema?.$ref;
  return ref ? doc.components.schemas[ref.replace("#/components/schemas/", "")] : schema;
}

export async function sandboxChoices(): Promise<{ scenarios: string[]; types: string[] }> {
  const doc = await openApiDocument();
  return {
    scenarios: requestSchema(doc, "/public/v1/sandbox/orders")?.properties?.scenario?.enum ?? [],
    types: requestSchema(doc, "/public/v1/sandbox/events")?.properties?.type?.enum ?? [],
  };
}
