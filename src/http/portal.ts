import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { ServerResponse } from "node:http";
import { ApiError } from "../platform/errors.js";
import { PORTAL_PATH } from "../modules/admin/portal-links.js";

/**
 * GET /portal: the partner portal, a web app built by `npm run build` (scripts/build-portal.mjs) into dist/portal and
 * served from there, never from elsewhere. Its page and assets carry a Content-Security-Policy that lets them load and
 * call nothing but this service, runs no inline script or style, and lets only PORTAL_FRAME_ANCESTORS frame them; and
 * Cross-Origin-Opener-Policy: same-origin, so a page of another origin that opened the portal (window.open), or that
 * the portal opened, holds no handle on its window and cannot navigate it later (to another store's portal link, say).
 */

// Two levels below the repository, as src/http/ and the bundle's dist/cli/ both are.
const BUILT = fileURLToPath(new URL("../../dist/portal/", import.meta.url));
export const PORTAL_ASSETS = `${PORTAL_PATH}/assets/`;
const ASSET_NAME = /^[A-Za-z0-9_-]+\.(js|css)$/;
const TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

export interface Portal {
  handles(path: string): boolean;
  handle(method: string, path: string, res: ServerResponse): Promise<void>;
}

export function portalPolicy(frameAncestors: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join("; ");
}

/**
 * X-Frame-Options, which every response carries as DENY, cannot name other origins: for the portal it follows
 * frame-ancestors where it can (DENY for 'none', SAMEORIGIN for 'self' alone) and is left out otherwise, where the
 * CSP's frame-ancestors decides (browsers ignore X-Frame-Options when it is present).
 */
function frameOptions(frameAncestors: string): string | null {
  if (frameAncestors === "'none'") return "DENY";
  if (frameAncestors === "'self'") return "SAMEORIGIN";
  return null;
}

/** `dir` is the build to serve (dist/portal; tests name another). */
export function createPortal(frameAncestors: string, dir = BUILT): Portal {
  const policy = portalPolicy(frameAncestors);
  const framing = frameOptions(frameAncestors);
  // Read once each: the build does not change under a running process.
  const files = new Map<string, Promise<Buffer>>();
  const read = (name: string) => {
    let file = files.get(name);
    if (!file) {
      file = readFile(`${dir}${name}`);
      files.set(name, file);
      file.catch(() => files.delete(name));
    }
    return file;
  };

  async function serve(res: ServerResponse, name: string, type: string, cache: string): Promise<void> {
    let body: Buffer;
    try {
      body = await read(name);
    } catch {
      if (name === "index.html") {
        throw new ApiError("SERVICE_UNAVAILABLE", "The partner portal is not built on this server: run `npm run build` (`npm start` does).", undefined, {
          "retry-after": "60",
        });
      }
      throw new ApiError("NOT_FOUND", `No portal asset ${name}.`);
    }
    res.setHeader("content-security-policy", policy);
    res.setHeader("cross-origin-opener-policy", "same-origin");
    if (framing) res.setHeader("x-frame-options", framing);
    else res.removeHeader("x-frame-options");
    res.writeHead(200, { "content-type": type, "content-length": body.length, "cache-control": cache });
    res.end(body);
  }

  return {
    handles: (path) => path === PORTAL_PATH || path.startsWith(`${PORTAL_PATH}/`),
    async handle(method, path, res) {
      if (method !== "GET") throw new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use GET.`, undefined, { allow: "GET" });
      if (path === PORTAL_PATH || path === `${PORTAL_PATH}/`) return serve(res, "index.html", "text/html; charset=utf-8", "no-cache");
      const name = path.startsWith(PORTAL_ASSETS) ? path.slice(PORTAL_ASSETS.length) : "";
      const m = ASSET_NAME.exec(name);
      // Asset names carry a hash of their content: a browser may keep one for good.
      if (m) return serve(res, `assets/${name}`, TYPES[m[1]], "public, max-age=31536000, immutable");
      throw new ApiError("NOT_FOUND", `No route GET ${path}. The partner portal is at ${PORTAL_PATH}.`);
    },
  };
}
