import type { ServerResponse } from "node:http";
import type { Config } from "../config.js";
import { ApiError } from "../errors.js";
import type { PartnerClaims, PartnerPrincipal } from "../auth/principal.js";
import type { GrantCache } from "../auth/grant-cache.js";
import type { Environment } from "../db/prisma.js";
import { type ApiLimits, apiSubjects, type Decision, type RateLimiter, type Subject, type SubjectKind } from "./limiter.js";

/**
 * The published per-minute limits by the token's environment: SANDBOX 100 per store and 500 per Application,
 * PRODUCTION 600 and 3000 (the config defaults).
 */
export function apiLimits(config: Config, environment: Environment): ApiLimits {
  return environment === "SANDBOX"
    ? { store: config.RATE_LIMIT_SANDBOX_STORE, application: config.RATE_LIMIT_SANDBOX_APP }
    : { store: config.RATE_LIMIT_PRODUCTION_STORE, application: config.RATE_LIMIT_PRODUCTION_APP };
}

/**
 * The token endpoint's own limit, keyed by the client_id as sent (known or not: that is what stuffing uses) and
 * the source address, so wrong guesses from one address never lock the partner out from its own.
 */
export function tokenSubject(config: Config, clientId: string, address: string): Subject {
  return { kind: "token", key: `token:${address} ${clientId.slice(0, 200)}`, limit: config.RATE_LIMIT_TOKEN_PER_CLIENT };
}

/** Failed token requests of one source address, whatever client_id they named. */
export function tokenFailureSubject(config: Config, address: string): Subject {
  return { kind: "token_failures", key: `token-failures:${address}`, limit: config.RATE_LIMIT_TOKEN_FAILURES_PER_ADDRESS };
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
    private readonly grants: GrantCache,
    private readonly limiter: RateLimiter,
    private readonly onRefused: (kind: SubjectKind) => void = () => undefined,
  ) {}

  /**
   * Admits a verified partner token: its grant (cached until it changes, GrantCache) must let it in (403
   * otherwise, and nothing is counted), then it takes its store's and its Application's slots. `admitted` sees the
   * principal in between, so what it puts on the response is on a 429 too.
   */
  async admit(res: ServerResponse, claims: PartnerClaims, admitted: (principal: PartnerPrincipal) => void = () => undefined): Promise<PartnerPrincipal> {
    const principal = await this.grants.admit(claims);
    admitted(principal);
    this.enforce(res, await this.limiter.take(apiSubjects(principal, apiLimits(this.config, claims.environment))));
    return principal;
  }

  /**
   * Before a token request's secret is hashed: its address must be under its failure limit (checked, not counted:
   * only failures count there), then it takes a slot of its (client_id, address).
   */
  async token(res: ServerResponse, clientId: string, address: string): Promise<void> {
    const failures = { ...tokenFailureSubject(this.config, address), probe: true };
    this.enforce(res, await this.limiter.take([failures, tokenSubject(this.config, clientId, address)]));
  }

  /** Before a portal link is exchanged: its address must be under the token endpoint's failure limit (checked, not counted). */
  async portalLink(res: ServerResponse, address: string): Promise<void> {
    this.enforce(res, await this.limiter.take([{ ...tokenFailureSubject(this.config, address), probe: true }]));
  }

  /** Counts a token request (or portal link exchange) whose credentials did not verify against its address. */
  async tokenFailed(address: string): Promise<void> {
    await this.limiter.take([tokenFailureSubject(this.config, address)]);
  }

  private enforce(res: ServerResponse, decision: Decision): void {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
    if (decision.allowed) return;
    this.onRefused(decision.subject.kind);
    const retryAfter = Math.max(1, Math.ceil(decision.resetAt - decision.now));
    const what = {
      store: "this store",
      application: "this Application (all of its stores together)",
      token: "token requests of this client_id from this address",
      token_failures: "failed token requests from this address",
    }[decision.subject.kind];
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `The limit of ${decision.limit} requests per minute for ${what} is reached. Retry after ${retryAfter} s, backing off with jitter.`,
      undefined,
      { "retry-after": String(retryAfter) },
    );
  }
}
