import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { GraphQLSchema } from "graphql";
import { ApiError } from "../errors.js";
import { resolvePrincipal } from "../auth/authenticate.js";
import type { Services } from "../services.js";
import { RestRouter, send, type RouteMiddleware } from "../rest/router.js";
import { routes } from "../rest/routes/index.js";
import { migrationsApplied } from "../db/migrate.js";
import { createGraphqlServer } from "./graphql.js";
import { sendProblem, type ProblemContext } from "./problem.js";
import { handleTokenRequest } from "./token.js";
import { createDocs } from "./docs.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
};

export interface HttpApp {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  rest: RestRouter;
}

export function createHttpApp(services: Services, schema: GraphQLSchema, middleware: RouteMiddleware[] = []): HttpApp {
  const rest = new RestRouter(services, schema, routes, middleware);
  const yoga = createGraphqlServer(services, schema);
  const docs = createDocs(services.config.publicBaseUrl, rest.routes);
  const { log, config } = services;

  async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL, pctx: ProblemContext): Promise<void> {
    const method = req.method ?? "GET";
    const path = url.pathname;
    const only = (allowed: string) => {
      if (method !== allowed) throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allowed}.`, undefined, { allow: allowed });
    };
    if (path === "/healthz") {
      only("GET");
      return send(res, 200, { status: "ok" });
    }
    if (path === "/readyz") {
      only("GET");
      const ready = await migrationsApplied((sql) => services.pool.query(sql)).catch(() => false);
      if (!ready) throw new ApiError("SERVICE_UNAVAILABLE", "The database is unreachable or not migrated yet.", undefined, { "retry-after": "5" });
      return send(res, 200, { status: "ready" });
    }
    if (path === "/.well-known/jwks.json") {
      only("GET");
      return send(res, 200, services.keys.jwks(), { "cache-control": "public, max-age=300" });
    }
    if (path === "/partner/auth/token") {
      only("POST");
      return handleTokenRequest(services, req, res);
    }
    if (path === "/graphql") {
      const wantsGraphiql = method === "GET" && (req.headers.accept ?? "").includes("text/html");
      const principal = wantsGraphiql ? { kind: "anonymous" as const } : await resolvePrincipal(services, req.headers.authorization);
      if (!wantsGraphiql && principal.kind === "anonymous") {
        throw new ApiError("UNAUTHORIZED", "Send Authorization: Bearer <admin key or partner access token>.");
      }
      await yoga.handle(req, res, { principal, requestId: pctx.requestId });
      return;
    }
    if (docs.handles(path)) return docs.handle(method, path, res);
    if (path.startsWith("/public/v1/")) {
      const principal = await resolvePrincipal(services, req.headers.authorization);
      return rest.handle({ req, res, pathname: path, searchParams: url.searchParams, principal, requestId: pctx.requestId });
    }
    throw new ApiError("NOT_FOUND", `No route ${method} ${path}.`);
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const given = req.headers["x-request-id"];
    const requestId = typeof given === "string" && UUID.test(given) ? given : randomUUID();
    const trace = TRACEPARENT.exec(String(req.headers.traceparent ?? ""));
    const traceId = trace ? trace[1] : requestId.replace(/-/g, "");
    res.setHeader("x-request-id", requestId);
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      url = new URL("http://localhost/");
    }
    const pctx: ProblemContext = { baseUrl: config.publicBaseUrl, instance: url.pathname, requestId, traceId };
    res.on("finish", () => {
      log.info(
        { requestId, traceId, method: req.method, path: url.pathname, status: res.statusCode, durationMs: Math.round((performance.now() - started) * 10) / 10 },
        "request",
      );
    });
    dispatch(req, res, url, pctx).catch((err: unknown) => {
      if (!(err instanceof ApiError)) log.error({ err, requestId }, "unhandled error");
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendProblem(res, err, pctx);
    });
  };
  return { handler, rest };
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
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 15_000, keepAliveTimeout: 5_000 }, app.handler);
  return server;
}
