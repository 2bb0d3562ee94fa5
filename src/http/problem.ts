import type { ServerResponse } from "node:http";
import { ApiError, ERROR_CATALOG, serviceUnavailable, type ErrorCode } from "../platform/errors.js";
import { isTransientDatabaseError } from "../platform/db/faults.js";

export interface ProblemContext {
  baseUrl: string;
  instance: string;
  requestId: string;
  traceId: string;
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
}

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
  return { problem, headers: e.headers ?? {} };
}

export function sendProblem(res: ServerResponse, err: unknown, ctx: ProblemContext): void {
  const { problem, headers } = toProblem(err, ctx);
  const body = JSON.stringify(problem);
  res.writeHead(problem.status, {
    ...headers,
    "content-type": "application/problem+json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}
