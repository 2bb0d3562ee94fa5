import type { ServerResponse } from "node:http";
import { ApiError } from "./errors.js";

/**
 * The dated versions of the public API, oldest first. A version names a contract: what a partner pinned to it
 * sends and receives never changes. What each version changes is declared once in src/modules/versions/.
 */
export const API_VERSIONS = ["2026-11-20", "2026-12-01"] as const;

export type ApiVersion = (typeof API_VERSIONS)[number];

export const LATEST_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1];

/** The version Applications created before versions existed stay on: the contract they integrated against. */
export const FIRST_API_VERSION: ApiVersion = API_VERSIONS[0];

/** The request and response header naming a version. */
export const API_VERSION_HEADER = "api-version";

export function isApiVersion(value: unknown): value is ApiVersion {
  return API_VERSIONS.some((version) => version === value);
}

export function invalidApiVersion(given: string, field = "Api-Version"): ApiError {
  return new ApiError("INVALID_API_VERSION", `"${given}" is not an API version. Known versions: ${API_VERSIONS.join(", ")} (latest ${LATEST_API_VERSION}).`, [
    { field, code: "INVALID_API_VERSION", message: `\`${field}\` must be one of ${API_VERSIONS.join(", ")}`, known: [...API_VERSIONS] },
  ]);
}

/** A version given as input (header, body or argument): one of API_VERSIONS, else 400 INVALID_API_VERSION. */
export function apiVersionOf(given: string, field?: string): ApiVersion {
  if (!isApiVersion(given)) throw invalidApiVersion(given, field);
  return given;
}

/** Whether `version` is `since` or newer: a change declared for `since` applies to it. */
export function atLeast(version: ApiVersion, since: ApiVersion): boolean {
  return API_VERSIONS.indexOf(version) >= API_VERSIONS.indexOf(since);
}

/** What an operator declared about a version's retirement (API_VERSIONS_DEPRECATED, API_VERSION_SUNSETS). */
export interface VersionLifecycle {
  /** When the version was deprecated (the Deprecation header's date). */
  deprecatedAt: Date;
  /** When it may stop being served (the Sunset header), once the operator set one. */
  sunsetAt: Date | null;
}

export type VersionLifecycles = Partial<Record<ApiVersion, VersionLifecycle>>;

/**
 * The response headers a version's lifecycle adds: `Deprecation` as an RFC 9745 structured date (`@<epoch seconds>`),
 * `Sunset` as an RFC 8594 HTTP-date, and a Link to the version list with rel="deprecation".
 */
export function lifecycleHeaders(lifecycle: VersionLifecycle | undefined, versionsUrl: string): Record<string, string> {
  if (!lifecycle) return {};
  return {
    deprecation: `@${Math.floor(lifecycle.deprecatedAt.getTime() / 1000)}`,
    ...(lifecycle.sunsetAt ? { sunset: lifecycle.sunsetAt.toUTCString() } : {}),
    link: `<${versionsUrl}>; rel="deprecation"; type="application/json"`,
  };
}

/** Names the version an answer is given in: the one place the Api-Version answer header is set. */
export function nameAnswerVersion(res: ServerResponse, version: ApiVersion): void {
  res.setHeader(API_VERSION_HEADER, version);
}

/** The version a partner's request is answered in: the one its Api-Version header names, else its Application's pin. */
export function answerVersion(requested: ApiVersion | null, pin: ApiVersion): ApiVersion {
  return requested ?? pin;
}

/** The version a request's Api-Version header names, null without one; an unknown one is 400 INVALID_API_VERSION. */
export function requestedApiVersion(header: string | string[] | undefined): ApiVersion | null {
  if (header === undefined) return null;
  return apiVersionOf(Array.isArray(header) ? header.join(",") : header.trim());
}
