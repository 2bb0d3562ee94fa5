import type { IncomingMessage, ServerResponse } from "node:http";
import type { GraphQLSchema } from "graphql";
import { ApiError, insufficientScope, invalidRequest, sandboxOnly } from "../platform/errors.js";
import type { PartnerPrincipal, Principal } from "../platform/auth/principal.js";
import { createContext, markInputChecked } from "../platform/schema/context.js";
import { operationCallsOut } from "../platform/schema/commands.js";
import type { Tx } from "../platform/db/prisma.js";
import type { WaitOutside } from "../platform/outside.js";
import type { Services } from "../platform/services.js";
import { parseJsonBody, requestBody } from "../platform/http/body.js";
import { send } from "../platform/http/response.js";
import { pickDeclared, queryOf } from "./validate.js";
import { checkDocument, runDocument, type OperationRunner } from "./execute.js";
import { authorizedRoutes, type AuthorizedRoute } from "./authorization.js";
import type { Route, RouteInput, RouteResult, RunOperation } from "../platform/route.js";
import { answerVersion, lifecycleHeaders, type ApiVersion } from "../platform/versions.js";
import { versionRequest, VersionedResponses } from "../modules/versions/render.js";
import { buildCodeOpenApi } from "./openapi.js";
import { VERSIONS_PATH } from "./platform-routes.js";
import type { OpenApiDocument } from "./openapi-document.js";

/** A path template (`/public/v1/orders/{id}`) as the route matcher compares it: its pattern and its parameters' names. */
export interface PathTemplate {
  pattern: RegExp;
  paramNames: string[];
}

interface CompiledRoute extends PathTemplate {
  route: AuthorizedRoute;
  /** Literal segments in the template: among routes matching a path, the one with most wins. */
  literals: number;
  /** The operation waits on a network call, so no transaction may be held open around it. */
  callsOut: boolean;
}

export interface RestRequest {
  req: IncomingMessage;
  res: ServerResponse;
  pathname: string;
  searchParams: URLSearchParams;
  principal: Principal;
  /** The request's Api-Version header, checked; without one the Application's pin decides. */
  apiVersion: ApiVersion | null;
  requestId: string;
  /** Given by the HTTP server: what the operation waits on outside our database runs without the admission slot. */
  waitOutside?: WaitOutside;
}

/**
 * Runs the route's operation; given a transaction, the whole operation runs in it (its commands join it
 * instead of opening their own), so the caller can commit its own rows with the operation's writes.
 */
export type RouteNext = (transaction?: Tx) => Promise<RouteResult>;

/** A hook around a route's execution (idempotency wraps writes with it). */
export type RouteMiddleware = (
  ctx: { route: Route; input: RouteInput; rawBody: string; req: IncomingMessage; callsOut: boolean },
  next: RouteNext,
) => Promise<RouteResult>;

/** Compiles a path template; the route table's and the platform routes' (the HTTP adapter's) templates alike. */
export function compilePath(template: string): PathTemplate {
  const paramNames: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_m, name: string) => {
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
    throw invalidRequest(`The path parameter ${name} is not validly percent-encoded.`, [
      { field: name, code: "INVALID_FORMAT", message: `\`${name}\` is not validly percent-encoded` },
    ]);
  }
}

/** The parameters the template's pattern matched, by name, decoded. */
function paramsOf(paramNames: string[], values: string[]): Record<string, string> {
  return Object.fromEntries(paramNames.map((n, i) => [n, decodeSegment(n, values[i])]));
}

/** The parameters of `pathname` under a compiled template, decoded; null when the path is not the template's. */
export function matchPath({ pattern, paramNames }: PathTemplate, pathname: string): Record<string, string> | null {
  const m = pattern.exec(pathname);
  return m ? paramsOf(paramNames, m.slice(1)) : null;
}

/** What the router matched each response's request to, for the metrics label. */
const recognized = new WeakMap<ServerResponse, string>();

/** The template of the route the router recognized the response's request as, if it did. */
export function recognizedRoute(res: ServerResponse): string | undefined {
  return recognized.get(res);
}

/**
 * Matches /public/v1 requests against the route table. About thirty routes: a linear scan over
 * precompiled patterns is simpler than a router library and costs microseconds.
 */
export class RestRouter {
  private readonly compiled: CompiledRoute[];
  /** Each version's renderer, built on its first request from the OpenAPI document of the code's shape. */
  private readonly versions = new Map<ApiVersion, VersionedResponses>();
  private codeDocument: OpenApiDocument | null = null;
  /** Where a deprecated version's Link header points. */
  private readonly versionsUrl: string;

  constructor(
    private readonly services: Services,
    private readonly schema: GraphQLSchema,
    routes: Route[],
    private readonly middleware: RouteMiddleware[] = [],
    private readonly runOperation: OperationRunner = (op, ctx) => runDocument(schema, op.document, op.variables, ctx),
  ) {
    this.versionsUrl = `${services.config.publicBaseUrl}${VERSIONS_PATH}`;
    this.compiled = authorizedRoutes(schema, routes).map((route) => {
      const { pattern, paramNames } = compilePath(route.path);
      checkDocument(schema, route.document, route.operationId);
      return {
        route,
        pattern,
        paramNames,
        literals: route.path.split("/").filter((s) => !s.startsWith("{")).length,
        callsOut: operationCallsOut(schema, route.document),
      };
    });
  }

  /**
   * The one route matcher. Literal segments win over parameters (ties go to the earlier route). `template` is
   * the matched route's path or, when only another method's route matches (a 405), that route's path.
   */
  private lookup(method: string, pathname: string): { found?: { compiled: CompiledRoute; values: string[] }; template?: string; allowed: string[] } {
    const allowed: string[] = [];
    let found: { compiled: CompiledRoute; values: string[] } | undefined;
    let otherMethod: CompiledRoute | undefined;
    for (const c of this.compiled) {
      const m = c.pattern.exec(pathname);
      if (!m) continue;
      if (c.route.method !== method) {
        allowed.push(c.route.method);
        if (!otherMethod || c.literals > otherMethod.literals) otherMethod = c;
        continue;
      }
      if (!found || c.literals > found.compiled.literals) found = { compiled: c, values: m.slice(1) };
    }
    return { found, template: (found?.compiled ?? otherMethod)?.route.path, allowed };
  }

  /**
   * Records the template of the route a request is for on its response, when it arrives: authentication,
   * admission or the body size may answer it before `handle` runs, and those answers are counted under it too.
   */
  recognize(res: ServerResponse, method: string, pathname: string): void {
    const { template } = this.lookup(method, pathname);
    if (template) recognized.set(res, template);
  }

  /** Finds the route, or throws 404 / 405 with Allow. */
  match(method: string, pathname: string): { compiled: CompiledRoute; params: Record<string, string> } {
    const { found, allowed } = this.lookup(method, pathname);
    if (found) {
      const { compiled, values } = found;
      return { compiled, params: paramsOf(compiled.paramNames, values) };
    }
    if (allowed.length) {
      const allow = [...new Set(allowed)].join(", ");
      throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allow}.`, undefined, { allow });
    }
    throw new ApiError("NOT_FOUND", `No route ${method} ${pathname}. See ${this.services.config.publicBaseUrl}/docs for the API reference.`);
  }

  async handle(r: RestRequest): Promise<void> {
    const { compiled, params } = this.match(r.req.method ?? "GET", r.pathname);
    const { route } = compiled;
    const principal = this.authorize(route, r.principal);
    // The response names the version already (the HTTP server set Api-Version when it admitted the caller).
    const version = answerVersion(r.apiVersion, principal.apiVersion);
    const lifecycle = lifecycleHeaders(this.services.config.apiVersionLifecycles[version], this.versionsUrl);
    // Set now, so a problem answered from here on carries them too.
    for (const [name, value] of Object.entries(lifecycle)) r.res.setHeader(name, value);
    const rawBody = route.method === "GET" || route.method === "DELETE" ? "" : await requestBody(r.req);
    const body = rawBody === "" ? undefined : parseJsonBody(r.req, rawBody, this.services.config.JSON_MAX_DEPTH);
    const query = queryOf(r.searchParams);
    // An older version's query in the newest version's terms, which the field's input declares.
    versionRequest(version, route.operationId, query);
    // The operation's input, as its field declares it, checked once for the request: here, before it runs (the field
    // then does not check again); here they also coerce query text and fill defaults.
    route.pathParams?.check(params);
    route.query?.check(query);
    route.body?.check(body ?? {});
    const input: RouteInput = { path: params, query, body: route.body ? pickDeclared(body ?? {}, route.body.schema) : {}, principal };

    const reads = this.services.reads;
    const run: RouteNext = async (transaction) => {
      // A GET reads only: it runs where the caller's reads go (a replica that has its writes, else the primary).
      const readDb = (route.method === "GET" && !transaction && (await reads.readDb(principal))) || this.services.db;
      const ctx = createContext(this.services, principal, r.requestId, transaction ?? null, r.waitOutside, readDb);
      ctx.answerVersion = version;
      markInputChecked(ctx);
      const runOperation: RunOperation = async <Result>(document: Route["document"], variables: Record<string, unknown>) => {
        const data = await this.runOperation({ operationId: route.operationId, document, variables }, ctx);
        // The document was validated against the schema at start, and its result type was computed from that schema.
        return data as Result;
      };
      const result = await route.answer(runOperation, route.variables(input), input);
      const receipt = ctx.receipt.headers();
      // Inside the chain, so an Idempotency-Key's record keeps the receipt and a replay answers it again.
      return Object.keys(receipt).length ? { ...result, headers: { ...result.headers, ...receipt } } : result;
    };
    const chain = this.middleware.reduceRight<RouteNext>(
      (next, mw) => (transaction) => mw({ route, input, rawBody, req: r.req, callsOut: compiled.callsOut }, (inner) => next(inner ?? transaction)),
      run,
    );
    let result: RouteResult;
    try {
      result = await chain();
    } finally {
      // Committed (or failed) by now: the caller's next reads, on any process, must see what it wrote.
      if (route.method !== "GET") await reads.wrote(principal);
    }
    const headers: Record<string, string> = { ...result.headers };
    // A page's rel="next" Link and a deprecated version's rel="deprecation" one travel in one header.
    for (const [name, value] of Object.entries(lifecycle)) headers[name] = name === "link" && headers.link ? `${headers.link}, ${value}` : value;
    const rendered = this.rendererOf(version).body(route.operationId, { body: result.body, query, headers: result.headers ?? {} });
    send(r.res, result.status ?? route.status, rendered, headers);
  }

  /** The renderer of a version's answers; the document of the code's shape it reads is built once, on first need. */
  private rendererOf(version: ApiVersion): VersionedResponses {
    let renderer = this.versions.get(version);
    if (!renderer) {
      this.codeDocument ??= buildCodeOpenApi(this.routes, this.schema, this.services.config.publicBaseUrl);
      renderer = new VersionedResponses(this.codeDocument, version);
      this.versions.set(version, renderer);
    }
    return renderer;
  }

  /**
   * The route's field decides again when the operation runs; deciding here first, from the same declaration, refuses
   * a caller before its body is read.
   */
  private authorize(route: AuthorizedRoute, principal: Principal): PartnerPrincipal {
    if (principal.kind === "anonymous") {
      throw new ApiError("UNAUTHORIZED", "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).");
    }
    if (principal.kind !== "partner") throw new ApiError("FORBIDDEN", "The public API is for partner tokens; administrators use /graphql.");
    if (route.sandboxOnly && principal.environment !== "SANDBOX") {
      throw sandboxOnly();
    }
    if (route.scope && !principal.scopes.has(route.scope)) throw insufficientScope(route.scope);
    return principal;
  }

  get routes(): AuthorizedRoute[] {
    return this.compiled.map((c) => c.route);
  }
}
