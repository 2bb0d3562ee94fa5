import type { ServerResponse } from "node:http";
import type { Config } from "../config.js";
import { ApiError } from "../errors.js";
import type { PartnerPrincipal } from "../auth/principal.js";
import type { Decision, RateLimiter, Subject, SubjectKind } from "./limiter.js";

/**
 * SPEC §8 limits by the token's environment: the store first (the usual one to run out), then the Application,
 * whose row is shared by all of its stores.
 */
export function apiSubjects(config: Config, principal: PartnerPrincipal): Subject[] {
  const sandbox = principal.environment === "SANDBOX";
  return [
    { kind: "store", key: `store:${principal.storeId}`, limit: sandbox ? config.RATE_LIMIT_SANDBOX_STORE : config.RATE_LIMIT_PRODUCTION_STORE },
    { kind: "application", key: `app:${principal.applicationId}`, limit: sandbox ? config.RATE_LIMIT_SANDBOX_APP : config.RATE_LIMIT_PRODUCTION_APP },
  ];
}

/** The token endpoint's own limit, keyed by the client_id as sent (known or not: that is what stuffing uses). */
export function tokenSubject(config: Config, clientId: string): Subject {
  return { kind: "token", key: `token:${clientId.slice(0, 200)}`, limit: config.RATE_LIMIT_TOKEN_PER_CLIENT };
}

export function rateLimitHeaders(d: Decision): Record<string, string> {
  return {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(Math.ceil(d.resetAt)),
  };
}

/**
 * Takes a slot and puts the X-RateLimit-* headers on the response (they survive into error responses, which
 * merge with headers already set). Refusal is a 429 RATE_LIMIT_EXCEEDED with Retry-After in whole seconds.
 */
export class RateLimits {
  constructor(
    private readonly config: Config,
    private readonly limiter: RateLimiter,
    private readonly onRefused: (kind: SubjectKind) => void = () => undefined,
  ) {}

  api(res: ServerResponse, principal: PartnerPrincipal): Promise<void> {
    return this.enforce(res, apiSubjects(this.config, principal));
  }

  token(res: ServerResponse, clientId: string): Promise<void> {
    return this.enforce(res, [tokenSubject(this.config, clientId)]);
  }

  private async enforce(res: ServerResponse, subjects: Subject[]): Promise<void> {
    const decision = await this.limiter.take(subjects);
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
    if (decision.allowed) return;
    this.onRefused(decision.subject.kind);
    const retryAfter = Math.max(1, Math.ceil(decision.resetAt - decision.now));
    const what = { store: "this store", application: "this Application (all of its stores together)", token: "token requests of this client_id" }[decision.subject.kind];
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `The limit of ${decision.limit} requests per minute for ${what} is reached. Retry after ${retryAfter} s, backing off with jitter.`,
      undefined,
      { "retry-after": String(retryAfter) },
    );
  }
}
