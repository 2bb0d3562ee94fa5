import type { Scope } from "./auth/scopes.js";
import type { PartnerPrincipal } from "./auth/principal.js";
import type { OperationInput } from "./validate.js";

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

export interface RouteInput {
  path: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  principal: PartnerPrincipal;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/**
 * One row of the REST façade: where a /public/v1 route's inputs come from, which GraphQL operation answers
 * it, how its result becomes the HTTP response, and the JSON schemas that validate input and print OpenAPI.
 */
export interface RestRoute<TData = Record<string, unknown>> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style template, e.g. /public/v1/orders/{id} */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Scope the token must carry; null: any valid partner token (sandbox routes). */
  scope: Scope | null;
  /** Only SANDBOX tokens may call it; PRODUCTION tokens get 403 FORBIDDEN. */
  sandboxOnly?: boolean;
  /** The operation's inputs (./validate.ts), which its GraphQL resolver checks with too. */
  pathParams?: OperationInput;
  query?: OperationInput;
  body?: OperationInput;
  /** Whether the route takes Idempotency-Key (default: POST, PUT and PATCH do). */
  acceptsIdempotencyKey?: boolean;
  document: string;
  variables: (input: RouteInput) => Record<string, unknown>;
  respond: (data: TData, input: RouteInput) => RouteResult;
  status: number;
  response: ResponseSpec;
  /** Error statuses this route can answer besides the common ones (400, 401, 403, 429, 500). */
  errors?: number[];
}

export function defineRoute<TData>(route: RestRoute<TData>): RestRoute<TData> {
  return route;
}

export type AnyRoute = RestRoute<never>;

const WRITE_METHODS = new Set<HttpMethod>(["POST", "PUT", "PATCH"]);

/** The one rule for which routes take Idempotency-Key: the middleware and the OpenAPI document both ask it. */
export const acceptsIdempotencyKey = (route: { method: HttpMethod; acceptsIdempotencyKey?: boolean }): boolean =>
  route.acceptsIdempotencyKey ?? WRITE_METHODS.has(route.method);
