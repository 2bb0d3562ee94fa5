import type { JsonSchema } from "../../platform/json.js";
import type { ApiVersion } from "../../platform/versions.js";

/**
 * One version change, declared once: what a version changes from the one before it, for requests, responses,
 * events and the OpenAPI document, with the sentences the changelog and GET /public/v1/versions print.
 *
 * The code answers in the first version's shape (the contract partners integrated against first) plus the fields
 * later versions add; a request in a version gets that shape without the fields added after its version, then
 * with every change up to its version applied in order, oldest first (./render.ts). Nothing else in the code
 * knows a version exists: no resolver or route branches on one.
 */
export interface VersionChange {
  version: ApiVersion;
  /** When the version was published (YYYY-MM-DD). */
  releasedAt: string;
  /** What changes, one sentence each, as the changelog prints them. */
  changes: string[];
  /**
   * Fields of response components this version adds, by component: the code answers with them, and every
   * earlier version's answers and document leave them out (which is how an older version stays exactly as it was).
   */
  added?: Record<string, string[]>;
  /** Checks or rewrites a request's query before the route reads it, by operationId. */
  requests?: Record<string, (query: Record<string, unknown>) => void>;
  /**
   * Rewrites every value of a response schema component, wherever a response body holds one (found through the
   * body's schema, so a new route returning the component is covered without a line here).
   */
  components?: Record<string, (value: Record<string, unknown>) => Record<string, unknown>>;
  /** Rewrites a whole success body of an operation, after its components. */
  operations?: Record<string, (body: unknown, request: { query: Record<string, unknown>; headers: Record<string, string> }) => unknown>;
  /** Rewrites an event's `data`, by event type, in deliveries, the feed and the examples. */
  events?: Record<string, (data: Record<string, unknown>) => Record<string, unknown>>;
  /** The same changes to the OpenAPI document (a copy): schemas, parameters and descriptions; examples follow by themselves. */
  openapi: (doc: VersionedDocument) => void;
}

/** What a version change's OpenAPI delta edits of the document (the OpenAPI document the REST adapter builds has this shape). */
export interface VersionedDocument {
  info: JsonSchema;
  paths: Record<string, Record<string, { operationId: string; parameters?: JsonSchema[]; responses: Record<string, JsonSchema>; [key: string]: unknown }>>;
  webhooks: Record<string, JsonSchema>;
  components: { schemas: Record<string, JsonSchema> };
}
