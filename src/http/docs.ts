import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ServerResponse } from "node:http";
import type { GraphQLSchema } from "graphql";
import { ApiError } from "../platform/errors.js";
import type { Route } from "../platform/route.js";
import { buildOpenApi, printOpenApi } from "../rest/openapi.js";
import { send } from "../platform/http/response.js";
import { apiVersionOf, LATEST_API_VERSION, nameAnswerVersion, type ApiVersion, type VersionLifecycles } from "../platform/versions.js";
import { versionList } from "../modules/versions/render.js";
import { OPENAPI_DOCUMENT_PATH } from "../rest/platform-routes.js";

/**
 * The published contract: GET /public/v1/openapi.json (no token) and the reference page GET /docs, which
 * renders it with Redoc. Redoc's standalone bundle is served from the installed package under /docs/assets,
 * so the page works offline and loads nothing from a CDN.
 */

export const DOCS_PATH = "/docs";
const REDOC_PATH = "/docs/assets/redoc.standalone.js";

const require = createRequire(import.meta.url);

/**
 * Redoc's sidebar shows Redocly's logo from their CDN, the one request the page made outside the service; an
 * empty image takes its place (the "API docs by Redocly" link stays).
 */
const REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partner Platform API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="${OPENAPI_DOCUMENT_PATH}" expand-responses="200,201" path-in-middle-panel="true" required-props-first="true"></redoc>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

export interface Docs {
  /** The reference page and its script. */
  handles(path: string): boolean;
  handle(method: string, url: URL, res: ServerResponse): void;
  /** The platform routes getOpenApiDocument and listApiVersions (their rows, src/rest/platform-routes.ts, route here). */
  document(url: URL, res: ServerResponse): void;
  versions(res: ServerResponse): void;
}

function sendText(res: ServerResponse, type: string, body: string | Buffer, cache: string, extra: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(body), "cache-control": cache, ...extra });
  res.end(body);
}

export function createDocs(baseUrl: string, routes: Route[], schema: GraphQLSchema, lifecycles: VersionLifecycles): Docs {
  // Built once per version, on first request: the route table does not change while the process runs.
  const documents = new Map<ApiVersion, string>();
  const documentOf = (version: ApiVersion): string => {
    let text = documents.get(version);
    if (text === undefined) {
      text = printOpenApi(buildOpenApi(routes, schema, baseUrl, version));
      documents.set(version, text);
    }
    return text;
  };
  const versions = versionList(lifecycles);
  let redoc: Buffer | null = null;

  return {
    handles: (path) => path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`),
    document(url, res) {
      const given = url.searchParams.get("version");
      const version = given === null ? LATEST_API_VERSION : apiVersionOf(given, "version");
      nameAnswerVersion(res, version);
      // Any origin may read the public contract (API tools, editors).
      sendText(res, "application/json; charset=utf-8", documentOf(version), "public, max-age=300", { "access-control-allow-origin": "*" });
    },
    versions(res) {
      nameAnswerVersion(res, LATEST_API_VERSION);
      send(res, 200, { data: versions, latest: LATEST_API_VERSION }, { "cache-control": "public, max-age=300", "access-control-allow-origin": "*" });
    },
    handle(method, url, res) {
      const path = url.pathname;
      if (method !== "GET") throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use GET.`, undefined, { allow: "GET" });
      if (path === DOCS_PATH || path === `${DOCS_PATH}/`) return sendText(res, "text/html; charset=utf-8", PAGE, "public, max-age=300");
      if (path === REDOC_PATH) {
        redoc ??= Buffer.from(readFileSync(require.resolve("redoc/bundles/redoc.standalone.js"), "utf8").replaceAll(REDOC_CDN_LOGO, EMPTY_IMAGE));
        return sendText(res, "text/javascript; charset=utf-8", redoc, "public, max-age=86400");
      }
      throw new ApiError("NOT_FOUND", `No route GET ${path}. The API reference is at ${DOCS_PATH}.`);
    },
  };
}
