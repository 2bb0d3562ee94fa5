import type { JsonSchema } from "../../platform/json.js";
import type { ApiVersion } from "../../platform/versions.js";

/**
 * One version change, declared once: what a version changed from the one before it, for requests, responses,
 * events and the OpenAPI document, with the sentences the changelog and GET /public/v1/versions print.
 *
 * The code answers in the newest version's shape. A change is written backwards, as Stripe's version changes are:
 * how to turn its version's request, answer, event and document into the version before it's. A request in an
 * older version gets the newest shape with every newer change applied in order, newest first (./render.ts).
 * Nothing else in the code knows a version exists: no resolver or route branches on one.
 */
export interface VersionChange {
  /** The version this change introduced. */
  version: ApiVersion;
  /**
   * When the service began serving the version (YYYY-MM-DD): never a later day, since a version in API_VERSIONS is
   * served. Its name is the date it was announced for, which may come after.
   */
  releasedAt: string;
  /** What changes, one sentence each, as the changelog prints them. */
  changes: string[];
  /** Rewrites a request's query of the version before into this version's, before the route reads it, by operationId. */
  requests?: Record<string, (query: Record<string, unknown>) => void>;
  /**
   * Rewrites every value of a response schema component into the version before's, wherever a response body holds
   * one (found through the body's schema, so a new route returning the component is covered without a line here).
   */
  components?: Record<string, (value: Record<string, unknown>) => Record<string, unknown>>;
  /** Rewrites a whole success body of an operation into the version before's, after its components. */
  operations?: Record<string, (body: unknown, request: { query: Record<string, unknown>; headers: Record<string, string> }) => unknown>;
  /** Rewrites an event's `data` into the version before's, by event type, in deliveries, the feed and the examples. */
  events?: Record<string, (data: Record<string, unknown>) => Record<string, unknown>>;
  /** The same, for the OpenAPI document (a copy of this version's): schemas, parameters and descriptions; examples follow by themselves. */
  openapi: (doc: VersionedDocument) => void;
}

/** What a version change's OpenAPI delta edits of the document (the OpenAPI document the REST adapter builds has this shape). */
export interface VersionedDocument {
  info: JsonSchema;
  paths: Record<string, Record<string, { operationId: string; parameters?: JsonSchema[]; responses: Record<string, JsonSchema>; [key: string]: unknown }>>;
  webhooks: Record<string, JsonSchema>;
  components: { schemas: Record<string, JsonSchema> };
}
