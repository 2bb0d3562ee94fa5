import type { IncomingMessage, ServerResponse } from "node:http";
import type { DocumentNode, GraphQLSchema } from "graphql";
import { ApiError, insufficientScope, invalidRequest } from "../errors.js";
import type { PartnerPrincipal, Principal } from "../auth/principal.js";
import { createContext } from "../graphql/context.js";
import { operationCallsOut } from "../graphql/commands.js";
import type { Tx } from "../db/prisma.js";
import type { Services } from "../services.js";
import { parseBody, requestBody } from "../http/body.js";
import { compileBody, compileObject, check, pickDeclared, queryOf, type InputValidators } from "./validate.js";
import { prepareDocument, runDocument, type OperationRunner } from "./execute.js";
import type { AnyRoute, RouteInput, RouteResult } from "./route.js";

interface CompiledRoute {
  route: AnyRoute;
  pattern: RegExp;
  paramNames: string[];
  document: DocumentNode;
  validators: InputValidators;
  /** The operation waits on a network call, so no transaction may be held open around it. */
  callsOut: boolean;
}

export interface RestRequest {
  req: IncomingMessage;
  res: ServerResponse;
  pathname: string;
  searchParams: URLSearchParams;
  principal: Principal;
  requestId: string;
}

/**
 * Runs the route's operation; given a transaction, the whole operation runs in it (its commands join it
 * instead of opening their own), so the caller can commit its own rows with the operation's writes.
 */
export type RouteNext = (transaction?: Tx) => Promise<RouteResult>;

/** A hook around a route's execution (idempotency wraps writes with it). */
export type RouteMiddleware = (
  ctx: { route: AnyRoute; input: RouteInput; rawBody: string; req: IncomingMessage; callsOut: boolean },
  next: RouteNext,
) => Promise<RouteResult>;

export function compilePath(template: string): { pattern: RegExp; paramNames: string[] } {
  const paramNames: string[] = [];
  const source = template
    .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
    .replace(/\{(\w+)\}/g, (_m, name: string) => {
      paramNames.push(name);
      return "([^/]+)";
    });
  return { pattern: new RegExp(`^${source}$`), paramNames };
}

/** A malformed percent-escape (`%`, `%zz`) in a path parameter is the client's error, not a URIError. */
function decodeSegment(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidRequest(`The path parameter ${name} is not validly percent-encoded.`, [{ field: name, code: "INVALID_FORMAT", message: `${name} is not validly percent-encoded` }]);
  }
}

/**
 * Matches /public/v1 requests against the route table. About thirty routes: a linear scan over
 * precompiled patterns is simpler than a router library and costs microseconds.
 */
export class RestRouter {
  private readonly compiled: CompiledRoute[];

  constructor(
    private readonly services: Services,
    schema: GraphQLSchema,
    routes: AnyRoute[],
    private readonly middleware: RouteMiddleware[] = [],
    private readonly runOperation: OperationRunner = (op, ctx) => runDocument(schema, op.document, op.variables, ctx),
  ) {
    this.compiled = routes.map((route) => {
      const { pattern, paramNames } = compilePath(route.path);
      const document = prepareDocument(schema, route.document, route.operationId);
      return {
        route,
        pattern,
        paramNames,
        document,
        callsOut: operationCallsOut(schema, document),
        validators: {
          path: route.pathParams ? compileObject(route.pathParams, Object.keys(route.pathParams)) : undefined,
          query: route.query ? compileObject(route.query.properties, route.query.required) : undefined,
          body: route.body ? compileBody(route.body) : undefined,
        },
      };
    });
  }

  /** Finds the route, or throws 404 / 405 with Allow. Literal segments win over parameters. */
  match(method: string, pathname: string): { compiled: CompiledRoute; params: Record<string, string> } {
    const allowed: string[] = [];
    let found: { compiled: CompiledRoute; params: Record<string, string>; literal: number } | null = null;
    for (const c of this.compiled) {
      const m = c.pattern.exec(pathname);
      if (!m) continue;
      const literal = c.route.path.split("/").filter((s) => !s.startsWith("{")).length;
      if (c.route.method !== method) {
        allowed.push(c.route.method);
        continue;
      }
      if (found && found.literal >= literal) continue;
      const params = Object.fromEntries(c.paramNames.map((n, i) => [n, decodeSegment(n, m[i + 1])]));
      found = { compiled: c, params, literal };
    }
    if (found) return found;
    if (allowed.length) {
      const allow = [...new Set(allowed)].join(", ");
      throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allow}.`, undefined, { allow });
    }
    throw new ApiError("NOT_FOUND", `No route ${method} ${pathname}. See ${this.services.config.publicBaseUrl}/docs for the API reference.`);
  }

  async handle(r: RestRequest): Promise<void> {
    const { compiled, params } = this.match(r.req.method ?? "GET", r.pathname);
    const { route, validators } = compiled;
    const principal = this.authorize(route, r.principal);
    const rawBody = route.method === "GET" || route.method === "DELETE" ? "" : await requestBody(r.req);
    const body = rawBody === "" ? undefined : parseBody(r.req, rawBody);
    const query = queryOf(r.searchParams);
    if (validators.path) check(validators.path, params, "path");
    if (validators.query) check(validators.query, query, "query");
    if (validators.body) check(validators.body, body ?? {}, "body");
    const input: RouteInput = { path: params, query, body: route.body ? pickDeclared(body ?? {}, route.body) : {}, principal };

    const run: RouteNext = async (transaction) => {
      const ctx = createContext(this.services, principal, r.requestId, transaction ?? null);
      const data = await this.runOperation({ operationId: route.operationId, document: compiled.document, variables: route.variables(input) }, ctx);
      return route.respond(data as never, input);
    };
    const chain = this.middleware.reduceRight<RouteNext>(
      (next, mw) => (transaction) => mw({ route, input, rawBody, req: r.req, callsOut: compiled.callsOut }, (inner) => next(inner ?? transaction)),
      run,
    );
    const result = await chain();
    send(r.res, result.status ?? route.status, result.body, result.headers);
  }

  private authorize(route: AnyRoute, principal: Principal): PartnerPrincipal {
    if (principal.kind === "anonymous") {
      throw new ApiError("UNAUTHORIZED", "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).");
    }
    if (principal.kind !== "partner") throw new ApiError("FORBIDDEN", "The public API is for partner tokens; administrators use /graphql.");
    if (route.sandboxOnly && principal.environment !== "SANDBOX") {
      throw new ApiError("FORBIDDEN", "Sandbox routes answer SANDBOX tokens only: use your sandbox credentials.");
    }
    if (route.scope && !principal.scopes.has(route.scope)) throw insufficientScope(route.scope);
    return principal;
  }

  get routes(): AnyRoute[] {
    return this.compiled.map((c) => c.route);
  }
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined || status === 204) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
