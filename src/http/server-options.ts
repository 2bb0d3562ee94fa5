import type { ServerOptions } from "node:http";
import type { Config } from "../platform/config.js";

export type HttpTimeouts = Pick<Config, "HTTP_HEADERS_TIMEOUT_MS" | "HTTP_REQUEST_TIMEOUT_MS" | "HTTP_KEEP_ALIVE_TIMEOUT_MS">;

/**
 * Slow clients (slowloris) get HTTP_HEADERS_TIMEOUT_MS to send headers and HTTP_REQUEST_TIMEOUT_MS for the whole
 * request, then a 408 and a closed connection. Node enforces both only when it sweeps its connections, every 30 s
 * by default, which held such a client up to 30 s past the bound; sweeping every second (a quarter of the header
 * bound if that is shorter) keeps the overrun under that. Idle keep-alive connections live HTTP_KEEP_ALIVE_TIMEOUT_MS.
 */
export function httpServerOptions(t: HttpTimeouts): ServerOptions {
  return {
    headersTimeout: t.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: t.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: t.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.min(1000, Math.ceil(t.HTTP_HEADERS_TIMEOUT_MS / 4)),
  };
}
