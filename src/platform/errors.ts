/** Every error a client can see: one class, one catalog of codes. */

export interface Violation {
  field: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export const ERROR_CATALOG = {
  INVALID_REQUEST: { status: 400, title: "Invalid request", retryable: false },
  INVALID_API_VERSION: { status: 400, title: "Unknown API version", retryable: false },
  INVALID_CLIENT: { status: 401, title: "Invalid client credentials", retryable: false },
  UNAUTHORIZED: { status: 401, title: "Authentication required", retryable: false },
  INVALID_TOKEN: { status: 401, title: "Invalid or expired token", retryable: false },
  FORBIDDEN: { status: 403, title: "Forbidden", retryable: false },
  INSUFFICIENT_SCOPE: { status: 403, title: "Insufficient scope", retryable: false },
  NOT_FOUND: { status: 404, title: "Not found", retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method not allowed", retryable: false },
  IDEMPOTENCY_CONFLICT: { status: 409, title: "Idempotency key reused with a different request", retryable: false },
  CONFLICT: { status: 409, title: "Conflict", retryable: true },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload too large", retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported media type", retryable: false },
  UNPROCESSABLE_ENTITY: { status: 422, title: "Unprocessable entity", retryable: false },
  EVENT_EXPIRED: { status: 422, title: "Event past retention", retryable: false },
  RATE_LIMIT_EXCEEDED: { status: 429, title: "Rate limit exceeded", retryable: true },
  CONCURRENCY_LIMIT_EXCEEDED: { status: 429, title: "Too many concurrent requests", retryable: true },
  INTERNAL_SERVER_ERROR: { status: 500, title: "Internal server error", retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, title: "Service unavailable", retryable: true },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly violations?: Violation[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.status = ERROR_CATALOG[code].status;
  }
}

export const invalidRequest = (detail: string, violations?: Violation[]) => new ApiError("INVALID_REQUEST", detail, violations);
export const notFound = (what: string, id: string) =>
  new ApiError("NOT_FOUND", `No ${what} with id ${id} exists for this store. Check the id; resources of other stores are never visible.`);
export const unprocessable = (detail: string, violations?: Violation[]) => new ApiError("UNPROCESSABLE_ENTITY", detail, violations);
export const forbidden = (detail: string) => new ApiError("FORBIDDEN", detail);
/**
 * `scopes` are those of which the operation needs one; `what` is what needs it, as the detail's subject. The
 * challenge names them as RFC 6750 §3.1 has it, so an OAuth client can tell which scope to ask for.
 */
export const insufficientScope = (scopes: string | readonly string[], what = "This operation") => {
  const named = typeof scopes === "string" ? [scopes] : scopes;
  return new ApiError(
    "INSUFFICIENT_SCOPE",
    `${what} needs the scope "${named.join(" or ")}", which the token does not carry. Ask the store to grant it to your Application, then request a new token.`,
    undefined,
    { "www-authenticate": `Bearer error="insufficient_scope", scope="${named.join(" ")}"` },
  );
};

/** The one answer to a PRODUCTION token at a sandbox operation, REST route or GraphQL field alike. */
export const sandboxOnly = () => new ApiError("FORBIDDEN", "Sandbox operations answer SANDBOX tokens only: use your sandbox credentials.");

/** Overload or a database that cannot serve right now: the client retries after `Retry-After` seconds. */
export const serviceUnavailable = (detail: string, retryAfterSeconds = 1) =>
  new ApiError("SERVICE_UNAVAILABLE", `${detail} Retry after ${retryAfterSeconds} s.`, undefined, { "retry-after": String(retryAfterSeconds) });
