import type { DocumentNode } from "graphql";
import type { PartnerPrincipal } from "./auth/principal.js";
import type { TadaDocumentNode } from "./schema/typed.js";
import type { JsonSchema } from "./json.js";

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

/** The JSON Schema of the selection at a path of the operation's result, e.g. at("orders") (generated from the GraphQL schema). */
export type SelectionAt = (...path: string[]) => JsonSchema;

export interface ResponseSpec {
  description: string;
  /**
   * The body's schema, built from the document's selection; by default the selection of the operation's only
   * root field (the body is `data.<field>`). A route whose body wraps or unwraps the data says so here.
   */
  body?: (at: SelectionAt) => JsonSchema;
  /**
   * The OpenAPI component a body that is not one named fragment becomes (`OrderPage`): every success body is
   * named, so generated clients get a type name instead of `listOrders_200_response`.
   */
  component?: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/**
 * What a route declares besides its operation: its path and the HTTP answer. Who may call it and what its input is
 * are its GraphQL field's (`authScopes` and `input`), read by src/rest/authorization.ts.
 */
interface RouteSpec<Id extends string> {
  operationId: Id;
  method: HttpMethod;
  /** OpenAPI-style template, e.g. /public/v1/orders/{id} */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Whether the route takes Idempotency-Key (default: POST, PUT and PATCH do). */
  acceptsIdempotencyKey?: boolean;
  status: number;
  response: ResponseSpec;
  /**
   * Other success answers `respond` may give (a 202 where the usual answer is 201, say), each with its own body:
   * the OpenAPI document lists them beside `status`, so a generated client knows every status it can get.
   */
  otherSuccess?: Record<number, ResponseSpec>;
  /** Error statuses this route can answer besides the common ones (400, 401, 403, 429, 500). */
  errors?: number[];
}

/**
 * How a request's HTTP names bind the operation's variables, where the conventions do not say it. By convention a
 * path parameter `{id}` binds the variable `id`, a GET's other parameters the variables of their names, and a write's
 * body the field's object (src/platform/validate.ts `ArgsInput`); the variables are the field's arguments by name.
 */
export interface Binding<Variables> {
  /** A path or query parameter named otherwise than its variable: `updated_since: "updatedSince"`. */
  rename?: Record<string, keyof Variables & string>;
  /** List arguments a query parameter carries as comma-separated text (`types=order.created,store.updated`). */
  lists?: (keyof Variables & string)[];
}

/**
 * One row of the REST façade as written: its route, which GraphQL operation answers it, where the conventions do not
 * say it how the request binds the operation's variables, and how its result becomes the HTTP response. tsc checks
 * `bind` and `respond` against the document's types; the router checks at start that every variable is bound.
 */
export interface TypedRoute<Result, Variables, Id extends string = string> extends RouteSpec<Id> {
  document: TadaDocumentNode<Result, Variables>;
  bind?: Binding<Variables>;
  respond: (data: Result, input: RouteInput) => RouteResult;
}

/** Executes a route's document; its result is the document's result type (the router validated it against the schema). */
export type RunOperation = <Result, Variables>(document: TadaDocumentNode<Result, Variables>, variables: Record<string, unknown>) => Promise<Result>;

/**
 * A row of the route table with its operation's types erased: `answer` was checked when the row was defined. Its
 * operationId stays literal, so a domain's examples are keyed by the ids its table has.
 */
export interface Route<Id extends string = string> extends RouteSpec<Id> {
  document: DocumentNode;
  bind: { rename: Record<string, string>; lists: string[] };
  /** Runs the operation through `run` with the request's variables and turns its result into the HTTP answer. */
  answer: (run: RunOperation, variables: Record<string, unknown>, input: RouteInput) => Promise<RouteResult>;
}

export function defineRoute<Result, Variables, Id extends string>(route: TypedRoute<Result, Variables, Id>): Route<Id> {
  const { respond, bind, ...spec } = route;
  return {
    ...spec,
    bind: { rename: { ...bind?.rename }, lists: [...(bind?.lists ?? [])] },
    answer: async (run, values, input) => respond(await run(route.document, values), input),
  };
}

const WRITE_METHODS = new Set<HttpMethod>(["POST", "PUT", "PATCH"]);

/** The one rule for which routes take Idempotency-Key: the middleware and the OpenAPI document both ask it. */
export const acceptsIdempotencyKey = (route: { method: HttpMethod; acceptsIdempotencyKey?: boolean }): boolean =>
  route.acceptsIdempotencyKey ?? WRITE_METHODS.has(route.method);
