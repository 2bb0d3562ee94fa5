import type { ServerResponse } from "node:http";
import { ApiError, ERROR_CATALOG, serviceUnavailable, type ErrorCode } from "../platform/errors.js";
import { isTransientDatabaseError } from "../platform/db/faults.js";

export interface ProblemContext {
  baseUrl: string;
  instance: string;
  requestId: string;
  traceId: string;
  /**
   * Where problems are also OAuth 2.0 error responses (the token endpoints, RFC 6749 §5.2): the `error` of each. They
   * are then served as application/json, with `error_description` (the detail) beside the problem's fields.
   */
  oauthErrorOf?: (e: ApiError) => string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  instance: string;
  requestId: string;
  traceId: string;
  retryable: boolean;
  errors?: unknown[];
  /** The token endpoints' OAuth 2.0 error code (RFC 6749 §5.2), beside `code`. */
  error?: string;
  /** With `error`: the detail again, where OAuth 2.0 clients read it. */
  error_description?: string;
}

/** The realm a 401 names: the one protection space of partner credentials. */
const REALM = "partner-api";

/**
 * The token endpoints' challenge for client credentials (RFC 6749 §5.2), which they add to a 401 INVALID_CLIENT
 * only when the client sent HTTP Basic credentials: one that sent them in the body gets none, so a browser never
 * opens its sign-in dialog.
 */
export const BASIC_CHALLENGE = `Basic realm="${REALM}"`;

/**
 * How to authenticate, on every other 401 (RFC 9110 §11.6.1): a bearer token, with RFC 6750's `invalid_token` only
 * when one was sent (§3: none sent, no error code).
 */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: "Bearer",
  INVALID_TOKEN: 'Bearer error="invalid_token"',
};

/**
 * What a client is told about an error, for REST and GraphQL alike: an ApiError as it is; a database that cannot
 * serve right now (see faults.ts) is 503 with Retry-After; anything else is null, a bug that answers 500.
 */
export function apiErrorOf(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (isTransientDatabaseError(err)) return serviceUnavailable("The database is unavailable or busy right now.");
  return null;
}

/** The one problem-details builder (RFC 9457). Unknown errors become a bare 500. */
export function toProblem(err: unknown, ctx: ProblemContext): { problem: Problem; headers: Record<string, string> } {
  const e =
    apiErrorOf(err) ??
    new ApiError("INTERNAL_SERVER_ERROR", `Something went wrong on our side. Retry with backoff; if it persists, quote traceId ${ctx.traceId} to support.`);
  const entry = ERROR_CATALOG[e.code];
  const problem: Problem = {
    type: `${ctx.baseUrl}/errors/${e.code}`,
    title: entry.title,
    status: entry.status,
    detail: e.detail,
    code: e.code,
    instance: ctx.instance,
    requestId: ctx.requestId,
    traceId: ctx.traceId,
    retryable: entry.retryable,
  };
  if (e.violations?.length) problem.errors = e.violations;
  if (ctx.oauthErrorOf) {
    problem.error = ctx.oauthErrorOf(e);
    problem.error_description = e.detail;
  }
  const challenge = CHALLENGES[e.code];
  return { problem, headers: { ...(challenge ? { "www-authenticate": challenge } : {}), ...e.headers } };
}

export function sendProblem(res: ServerResponse, err: unknown, ctx: ProblemContext): void {
  const { problem, headers } = toProblem(err, ctx);
  const body = JSON.stringify(problem);
  res.writeHead(problem.status, {
    ...headers,
    // OAuth 2.0 clients read only application/json error bodies.
    "content-type": ctx.oauthErrorOf ? "application/json" : "application/problem+json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}
