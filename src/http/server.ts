import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { GraphQLSchema } from "graphql";
import { ApiError, invalidRequest } from "../platform/errors.js";
import { isRecord } from "../platform/json.js";
import { resolvePrincipal, verifiedPartnerClaims } from "../platform/auth/authenticate.js";
import type { PartnerClaims, Principal } from "../platform/auth/principal.js";
import type { Services } from "../platform/services.js";
import { compilePath, matchPath, type PathTemplate, recognizedRoute, RestRouter, type RouteMiddleware } from "../rest/router.js";
import type { OperationRunner } from "../rest/execute.js";
import { routes } from "../rest/routes.js";
import { API_VERSION_HEADER, answerVersion, LATEST_API_VERSION, nameAnswerVersion, requestedApiVersion } from "../platform/versions.js";
import { assertReady } from "./readiness.js";
import { createGraphqlServer } from "./graphql.js";
import { KeptDocuments } from "../graphql/documents.js";
import { apiErrorOf, sendProblem, type ProblemContext } from "./problem.js";
import { send } from "../platform/http/response.js";
import { Admission, type Flow, flowOf, TOKEN_FLOW } from "./admission.js";
import { oauthErrorOf } from "../platform/auth/oauth-errors.js";
import { authorizationServerMetadata, handlePortalLinkExchange, handleRevocation, handleTokenRequest, type TokenLimits } from "./token.js";
import { OAUTH_PATHS, PLATFORM_ROUTES } from "../rest/platform-routes.js";
import { sourceAddress } from "./address.js";
import { idempotency } from "../rest/idempotency.js";
import { checkJsonDepth, declaresTooLarge, parseJsonBody, requestBody } from "../platform/http/body.js";
import { Metrics } from "./metrics.js";
import { RateLimits } from "../platform/ratelimit/policy.js";
import { createDocs, type Docs } from "./docs.js";
import { createPortal, type Portal } from "./portal.js";
import { httpServerOptions } from "./server-options.js";
import { isUuid } from "../platform/uuid.js";
import type { WaitOutside } from "../platform/outside.js";
import { type Span, tracer } from "../platform/tracing/tracer.js";
import { openExportFile } from "../modules/exports/file.js";
import { sendExportFile } from "./export-file.js";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** W3C Trace Context: the trace-id of a valid `traceparent` (version ff and all-zero ids are invalid), else null. */
export function traceIdOf(header: string | string[] | undefined): string | null {
  const value = typeof header === "string" ? header.trim() : "";
  const m = TRACEPARENT.exec(value);
  if (!m || value.startsWith("ff-") || /^0+$/.test(m[1]) || /^0+$/.test(value.split("-")[2])) return null;
  return m[1];
}

/** What a request showed of its caller, once it did: who it authenticated as, or the client_id a token request named. */
interface Caller {
  principal?: Principal;
  tokenClientId?: string;
}

/** A client_id as a token request sent it may be anything: its log line keeps this much of it. */
const LOGGED_CLIENT_ID_LENGTH = 100;

/**
 * Who made a request, for its log line: a partner token's client_id and store code, an admin key's id and role
 * (ADMIN_API_KEY, which is not stored, by that name), the client_id a token request named (known or not, so an
 * operator can follow a partner's failing token requests). Never the credential itself.
 */
function callerFields({ principal, tokenClientId }: Caller): Record<string, string> {
  if (principal?.kind === "partner") return { clientId: principal.clientId, storeCode: principal.storeCode };
  if (principal?.kind === "admin") return { adminKeyId: principal.adminKeyId ?? "ADMIN_API_KEY", adminRole: principal.role };
  if (tokenClientId !== undefined) return { clientId: tokenClientId.slice(0, LOGGED_CLIENT_ID_LENGTH) };
  return {};
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
};

export interface HttpApp {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  rest: RestRouter;
  metrics: Metrics;
  /** Timeouts from the configuration (see httpServerOptions). */
  serverOptions: ServerOptions;
}

/** `runOperation` replaces GraphQL for the REST routes: only the read benchmark's baseline (b) passes one. */
export function createHttpApp(services: Services, schema: GraphQLSchema, opts: { runOperation?: OperationRunner } = {}): HttpApp {
  const dispatcher = new Dispatcher(services, schema, opts.runOperation);
  return {
    handler: (req, res) => dispatcher.handle(req, res),
    rest: dispatcher.rest,
    metrics: dispatcher.metrics,
    serverOptions: httpServerOptions(services.config),
  };
}

/** A request on its way through the dispatch. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  pctx: ProblemContext;
  /** What the request showed of its caller, for its log line. */
  seen: Caller;
}

/** The parts that answer requests, built once per app, and a method per step of a request. */
class Dispatcher {
  readonly rest: RestRouter;
  readonly metrics: Metrics;
  private readonly yoga: ReturnType<typeof createGraphqlServer>;
  private readonly docs: Docs;
  private readonly portal: Portal;
  private readonly limits: RateLimits;
  private readonly admission: Admission;
  private readonly platform: PlatformEntry[];

  constructor(
    private readonly services: Services,
    schema: GraphQLSchema,
    runOperation: OperationRunner | undefined,
  ) {
    const { config } = services;
    const middleware: RouteMiddleware[] = [idempotency(services.db)];
    this.rest = new RestRouter(services, schema, routes, middleware, runOperation);
    const documents = new KeptDocuments(config.GRAPHQL_DOCUMENT_CACHE_BYTES);
    this.yoga = createGraphqlServer(services, schema, documents);
    this.docs = createDocs(config.publicBaseUrl, this.rest.routes, schema, config.apiVersionLifecycles);
    this.portal = createPortal(config.PORTAL_FRAME_ANCESTORS);
    const metrics = Metrics.of(services.metrics);
    this.metrics = metrics;
    metrics.watchDocuments(documents);
    this.limits = new RateLimits(config, services.grants, services.rateLimiter, (kind) => metrics.rateLimited(kind));
    void services.grants.listen();
    this.admission = new Admission(
      {
        maxInFlight: config.HTTP_MAX_IN_FLIGHT,
        maxQueued: config.HTTP_MAX_QUEUED,
        queueTimeoutMs: config.HTTP_QUEUE_TIMEOUT_MS,
        maxQueuedPerFlow: config.HTTP_MAX_QUEUED_PER_APPLICATION,
      },
      (reason) => metrics.shed(reason),
      (kind) => metrics.concurrencyLimited(kind),
    );
    metrics.watchAdmission(this.admission);
    this.platform = platformRoutes(this.platformHandlers());
  }

  /**
   * The per-request preamble: the request id (the caller's when it is a uuid), the trace id, the security headers,
   * and the metrics observation and log line once the response finishes; then the dispatch, whose failure becomes
   * a problem answer.
   */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const { config, log } = this.services;
    const started = performance.now();
    const given = req.headers["x-request-id"];
    const requestId = typeof given === "string" && isUuid(given) ? given : randomUUID();
    const span = tracer.enabled ? serverSpan(req) : null;
    // Traced, the request's trace id is its span's (the caller's when it sent a valid traceparent).
    const traceId = span?.logFields().trace_id ?? traceIdOf(req.headers.traceparent) ?? requestId.replace(/-/g, "");
    res.setHeader("x-request-id", requestId);
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    const url = requestUrl(req);
    const pctx: ProblemContext = {
      baseUrl: config.publicBaseUrl,
      instance: url.pathname,
      requestId,
      traceId,
      ...(OAUTH_PATHS.has(url.pathname) ? { oauthErrorOf } : {}),
    };
    const seen: Caller = {};
    res.on("finish", () => {
      this.metrics.observeRequest(req.method ?? "GET", url.pathname, res.statusCode, (performance.now() - started) / 1000, recognizedRoute(res));
      if (span) endServerSpan(span, req.method ?? "GET", res.statusCode, recognizedRoute(res) ?? this.fixedRoute(url.pathname));
      log.info(
        {
          requestId,
          traceId,
          ...span?.logFields(),
          method: req.method,
          path: url.pathname,
          status: res.statusCode,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          ...callerFields(seen),
        },
        "request",
      );
    });
    const dispatched = span ? tracer.within(span, () => this.dispatch({ req, res, url, pctx, seen })) : this.dispatch({ req, res, url, pctx, seen });
    dispatched.catch((err: unknown) => {
      const known = apiErrorOf(err);
      if (!known) log.error({ err, requestId, traceId }, "unhandled error");
      else if (!(err instanceof ApiError)) log.warn({ err, requestId, traceId }, "database unavailable: answered 503");
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendProblem(res, err, pctx);
    });
  }

  /** A path that is its own route (/graphql, /healthz, a platform route's template), as a span names its route; else undefined. */
  private fixedRoute(path: string): string | undefined {
    // The pattern alone: naming a span decodes no parameter (a malformed one was answered 400 already).
    return FIXED_PATHS.has(path) ? path : this.platform.find((entry) => entry.template.pattern.test(path))?.path;
  }

  /** The fixed paths and the platform routes, then /graphql, the docs, the portal and /public/v1. */
  private async dispatch(x: Exchange): Promise<void> {
    const { req, res, url } = x;
    const method = req.method ?? "GET";
    const path = url.pathname;
    const only = (...allowed: string[]) => {
      if (!allowed.includes(method)) {
        throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allowed[0]}.`, undefined, { allow: allowed.join(", ") });
      }
    };
    if (path === "/healthz") {
      only("GET");
      return send(res, 200, { status: "ok" });
    }
    if (path === "/readyz") {
      only("GET");
      await assertReady(this.services);
      if (this.admission.refusingMost()) {
        throw new ApiError("SERVICE_UNAVAILABLE", "The process is at capacity: it refused most requests of the last few seconds.", undefined, {
          "retry-after": "5",
        });
      }
      return send(res, 200, { status: "ready" });
    }
    const own = platformRouteOf(this.platform, path);
    if (own) {
      only(...own.entry.methods);
      return own.entry.handle(req, res, url, x.seen, own.params);
    }
    if (path === "/metrics") {
      only("GET");
      return this.metrics.handle(req, res, this.services.config.METRICS_TOKEN);
    }
    if (path === "/graphql") return this.graphql(x);
    if (this.docs.handles(path)) return this.docs.handle(method, url, res);
    if (this.portal.handles(path)) return this.portal.handle(method, path, res);
    if (path.startsWith("/public/v1/")) return this.publicV1(x);
    throw new ApiError("NOT_FOUND", `No route ${method} ${path}.`);
  }

  /**
   * Runs a request that needs the database under the admission limit, once its body has arrived; health,
   * readiness and metrics stay outside it. What the request waits on outside our database (a partner's webhook
   * receiver, DNS) it runs through `waitOutside`, which gives the slot up meanwhile and takes it again ahead of the queue.
   */
  private async admitted<T>(req: IncomingMessage, res: ServerResponse, handle: (waitOutside: WaitOutside) => Promise<T>, flow: Flow): Promise<T> {
    if (req.method === "POST" || req.method === "PUT" || req.method === "PATCH") await requestBody(req);
    let leave = await this.admission.enter(res, flow);
    const waitOutside: WaitOutside = async (fn) => {
      leave();
      try {
        return await fn();
      } finally {
        leave = await this.admission.reenter(flow);
      }
    };
    try {
      return await handle(waitOutside);
    } finally {
      leave();
    }
  }

  private addressOf(req: IncomingMessage): string {
    return sourceAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], this.services.config.TRUSTED_PROXY_HOPS);
  }

  /** A token or revocation request's limits: per client_id and source address, and failures per address. */
  private tokenLimits(req: IncomingMessage, res: ServerResponse, seen: Caller): TokenLimits {
    const address = this.addressOf(req);
    return {
      admit: (clientId) => {
        seen.tokenClientId = clientId;
        return this.limits.token(res, clientId, address);
      },
      failed: () => this.limits.tokenFailed(address),
    };
  }

  /** The platform routes' handlers (their rows are src/rest/platform-routes.ts), by operationId. */
  private platformHandlers(): Record<string, PlatformHandler> {
    const { services, limits, docs } = this;
    return {
      createToken: (req, res, _url, seen) =>
        this.admitted(req, res, () => handleTokenRequest(services, req, res, this.tokenLimits(req, res, seen)), TOKEN_FLOW),
      revokeToken: (req, res, _url, seen) => this.admitted(req, res, () => handleRevocation(services, req, res, this.tokenLimits(req, res, seen)), TOKEN_FLOW),
      exchangePortalLink: (req, res, _url, seen) => {
        const address = this.addressOf(req);
        return this.admitted(
          req,
          res,
          () =>
            handlePortalLinkExchange(
              services,
              req,
              res,
              { admit: () => limits.portalLink(res, address), failed: () => limits.tokenFailed(address) },
              (clientId) => {
                seen.tokenClientId = clientId;
              },
            ),
          TOKEN_FLOW,
        );
      },
      getJwks: (_req, res) => send(res, 200, services.keys.jwks(), { "cache-control": "public, max-age=300" }),
      getAuthorizationServerMetadata: (_req, res) => send(res, 200, authorizationServerMetadata(services), { "cache-control": "public, max-age=300" }),
      getOpenApiDocument: (_req, res, url) => docs.document(url, res),
      listApiVersions: (_req, res) => docs.versions(res),
      downloadExportFile: (req, res, url, seen, params) => this.exportFile(req, res, url, seen, params.id),
    };
  }

  /** /graphql: GraphiQL for a browser, else an admin key's or partner token's operation. */
  private async graphql({ req, res, url, pctx, seen }: Exchange): Promise<void> {
    const { services } = this;
    const { config } = services;
    const method = req.method ?? "GET";
    if (method === "GET" && (req.headers.accept ?? "").includes("text/html")) {
      await this.yoga.handle(req, res, { principal: { kind: "anonymous" }, requestId: pctx.requestId });
      return;
    }
    const admit = (claims: PartnerClaims) => this.limits.admit(res, claims);
    const claims = await verifiedPartnerClaims(services, req.headers.authorization);
    const flow = flowOf(claims, req.headers.authorization);
    const authenticate = async () => {
      const principal = await resolvePrincipal(services, req.headers.authorization, admit, claims);
      seen.principal = principal;
      if (principal.kind === "anonymous") throw new ApiError("UNAUTHORIZED", "Send Authorization: Bearer <admin key or partner access token>.");
      // Yoga sets no body limit of its own: the body read under the 1 MiB cap goes to it once it is JSON no deeper
      // than the limit (a GET's variables likewise), so nothing after meets deeper nesting. It goes parsed: given
      // text, @whatwg-node's request adapter runs Object.keys over it, one key per character (12 ms of CPU for a
      // 60 KB document); anything but an object is refused here, where that costs nothing.
      if (method === "POST") {
        const body = await requestBody(req);
        Object.assign(req, { body: graphqlBody(body, parseJsonBody(req, body, config.JSON_MAX_DEPTH)) });
      }
      for (const param of ["variables", "extensions"]) checkJsonDepth(url.searchParams.get(param) ?? "", config.JSON_MAX_DEPTH, param);
      return principal;
    };
    // A response over Server-Sent Events may be a live subscription, open for hours: it holds no admission slot
    // while it streams; LiveStreams caps subscriptions per process and per Application.
    if (!(req.headers.accept ?? "").includes("text/event-stream")) {
      return this.admitted(
        req,
        res,
        async (waitOutside) => this.yoga.handle(req, res, { principal: await authenticate(), requestId: pctx.requestId, waitOutside }),
        flow,
      );
    }
    const principal = await this.admitted(req, res, authenticate, flow);
    await this.yoga.handle(req, res, { principal, requestId: pctx.requestId });
  }

  /** The REST routes under /public/v1 (the platform routes there are answered before). */
  private async publicV1({ req, res, url, pctx, seen }: Exchange): Promise<void> {
    const { services } = this;
    const method = req.method ?? "GET";
    const path = url.pathname;
    this.rest.recognize(res, method, path);
    // Every answer names its version: the latest until the request's Api-Version is read, then the requested one
    // until the grant shows the pin (an answer before it, to no or a refused credential, is the same in every
    // version), then, before the rate limit so a 429 names it too, the version the answer is given in.
    nameAnswerVersion(res, LATEST_API_VERSION);
    const apiVersion = requestedApiVersion(req.headers[API_VERSION_HEADER]);
    nameAnswerVersion(res, answerVersion(apiVersion, LATEST_API_VERSION));
    const claims = await verifiedPartnerClaims(services, req.headers.authorization);
    const admitPartner = (partner: PartnerClaims) =>
      this.limits.admit(res, partner, (principal) => nameAnswerVersion(res, answerVersion(apiVersion, principal.apiVersion)));
    return this.admitted(
      req,
      res,
      async (waitOutside) => {
        const principal = await resolvePrincipal(services, req.headers.authorization, admitPartner, claims);
        seen.principal = principal;
        await this.rest.handle({ req, res, pathname: path, searchParams: url.searchParams, principal, apiVersion, requestId: pctx.requestId, waitOutside });
      },
      flowOf(claims, req.headers.authorization),
    );
  }

  /**
   * An export's file (extension to the contract): with a partner token as any route, or without one by the signed
   * link the export's `url` is. The checks hold an admission slot; the download streams without one.
   */
  private async exportFile(req: IncomingMessage, res: ServerResponse, url: URL, seen: Caller, id: string): Promise<void> {
    const { services } = this;
    const { authorization } = req.headers;
    const signature = url.searchParams.get("signature");
    if (!authorization && signature === null) {
      throw new ApiError("UNAUTHORIZED", "Send Authorization: Bearer <access_token>, or use the signed link in the export's `url`.");
    }
    const claims = authorization ? await verifiedPartnerClaims(services, authorization) : null;
    const file = await this.admitted(
      req,
      res,
      async () => {
        if (!authorization) return openExportFile(services.db, services.box, id, { expires: url.searchParams.get("expires"), signature }, Date.now());
        const principal = await resolvePrincipal(services, authorization, (partner) => this.limits.admit(res, partner), claims);
        seen.principal = principal;
        if (principal.kind !== "partner") throw new ApiError("FORBIDDEN", "The public API is for partner tokens; administrators use /graphql.");
        return openExportFile(services.db, services.box, id, { principal }, Date.now());
      },
      flowOf(claims, authorization),
    );
    await sendExportFile(services, req, res, file);
  }
}

const FIXED_PATHS = new Set(["/healthz", "/readyz", "/metrics", "/graphql"]);

/**
 * A request's SERVER span, named and attributed as OpenTelemetry's HTTP conventions say; it continues the caller's
 * trace when it sent a valid `traceparent`. Its route is known once the response is (endServerSpan).
 */
function serverSpan(req: IncomingMessage): Span {
  const method = req.method ?? "GET";
  const given = req.headers.traceparent;
  return tracer.start(method, {
    kind: "server",
    parent: typeof given === "string" && traceIdOf(given) ? given.trim() : null,
    root: true,
    attributes: { "http.request.method": method, "url.scheme": "http", "url.path": requestUrl(req).pathname, "user_agent.original": req.headers["user-agent"] },
  });
}

function endServerSpan(span: Span, method: string, status: number, route: string | undefined): void {
  span.setAttributes({ "http.response.status_code": status, "http.route": route });
  if (route) span.updateName(`${method} ${route}`);
  if (status >= 500) span.fail(`HTTP ${status}`);
  span.end();
}

/** The request's URL; one Node accepted but URL cannot parse is answered as the root. */
function requestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? "/", "http://localhost");
  } catch {
    return new URL("http://localhost/");
  }
}

/**
 * A /graphql POST body as Yoga takes it: the parsed object (Yoga reads it through request.json()), or the text when
 * it is an empty object (Yoga answers that it has no query; given an empty object, the adapter would read the
 * consumed body stream again). JSON that is not an object, or no body, is 400.
 */
function graphqlBody(text: string, parsed: unknown): Record<string, unknown> | string {
  if (!isRecord(parsed)) {
    throw invalidRequest('The body must be a JSON object: { "query": "…", "variables": { … } }.', [
      { field: "body", code: "INVALID_TYPE", message: "The body must be a JSON object" },
    ]);
  }
  return Object.keys(parsed).length === 0 ? text : parsed;
}

/** What answers a platform route: its handler, given what the request showed of its caller so far and the path's parameters. */
type PlatformHandler = (req: IncomingMessage, res: ServerResponse, url: URL, seen: Caller, params: Record<string, string>) => Promise<void> | void;

/** A platform route as dispatched: its path (a template, when it has parameters) compiled, its methods and its handler. */
interface PlatformEntry {
  path: string;
  template: PathTemplate;
  methods: string[];
  handle: PlatformHandler;
}

/** The platform routes, each with its handler; a row without one, or a handler without a row, stops the start. */
function platformRoutes(handlers: Record<string, PlatformHandler>): PlatformEntry[] {
  const ids = new Set<string>(PLATFORM_ROUTES.map((row) => row.operationId));
  for (const id of Object.keys(handlers)) if (!ids.has(id)) throw new Error(`platform handler ${id} has no row`);
  return PLATFORM_ROUTES.map((row) => {
    const handle = handlers[row.operationId];
    if (!handle) throw new Error(`platform route ${row.operationId} has no handler`);
    return { path: row.path, template: compilePath(row.path), methods: row.head ? [row.method, "HEAD"] : [row.method], handle };
  });
}

/** The platform route a path is, matched as the route table's paths are, and its parameters; undefined for any other path. */
function platformRouteOf(entries: PlatformEntry[], path: string): { entry: PlatformEntry; params: Record<string, string> } | undefined {
  for (const entry of entries) {
    const params = matchPath(entry.template, path);
    if (params) return { entry, params };
  }
  return undefined;
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

export function createHttpServer(app: HttpApp): Server {
  const server = createServer(app.serverOptions, app.handler);
  // Node answers `Expect: 100-continue` itself unless told otherwise; a body that will be refused is not invited,
  // so the client gets the 413 instead of uploading it first.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!declaresTooLarge(req)) res.writeContinue();
    app.handler(req, res);
  });
  return server;
}
