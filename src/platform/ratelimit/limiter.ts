import type pg from "pg";
import { remaining, slotFreesAt, type WindowState } from "./window.js";
import type { GrantView } from "../auth/grant-rule.js";
import type { PartnerClaims } from "../auth/tokens.js";
import { RATE_LIMIT_TAKE, RATE_LIMIT_TAKE_FOR_GRANT, RATE_LIMIT_UNDO } from "./sql.js";

export type SubjectKind = "store" | "application" | "token" | "token_failures";

export interface Subject {
  kind: SubjectKind;
  /** Row key in RateLimitCounter, e.g. `store:<uuid>`. */
  key: string;
  /** Requests per minute. */
  limit: number;
  /** Only asks whether one more would fit, counting nothing (what is counted elsewhere, e.g. failures). */
  probe?: boolean;
}

/** Requests per minute for a store and for an Application, by the token's environment. */
export interface ApiLimits {
  store: number;
  application: number;
}

export interface Decision {
  allowed: boolean;
  /** The subject the headers describe: the one that refused, or the tighter of those that admitted. */
  subject: Subject;
  limit: number;
  remaining: number;
  /** Unix seconds (fractional) when the next slot of that subject frees. */
  resetAt: number;
  now: number;
}

interface Row {
  ord: number;
  prev: number;
  seen: number;
  now: number;
  window_start: number;
  counted: number | null;
}

/**
 * Sliding-window limits shared by every API process through the RateLimitCounter table (one row per subject per
 * minute bucket). Refused requests are not counted, so a client that keeps retrying while limited gets its
 * slots back on schedule.
 */
export class RateLimiter {
  constructor(
    private readonly pool: pg.Pool,
    /** Test hook: a fixed clock instead of the database's. */
    private readonly clock: () => Date | null = () => null,
  ) {}

  async take(subjects: readonly Subject[]): Promise<Decision> {
    if (subjects.length < 1 || subjects.length > 2) throw new Error("RateLimiter.take expects one or two subjects");
    const { rows } = await this.pool.query<Row>({
      ...RATE_LIMIT_TAKE,
      values: [subjects.map((s) => s.key), subjects.map((s) => s.limit), this.clock(), subjects.map((s) => (s.probe ? 0 : 1))],
    });
    return this.decide(subjects, rows);
  }

  /**
   * Reads the grant of a token's claims and, when it admits them, takes a slot of its store and of its Application,
   * in one round trip: a request needs both, and the grant's row is fresh every time (no cache to outlive a
   * revocation). `decision` is null exactly when the grant refuses the claims (see `admitGrant`).
   */
  async takeForGrant(claims: PartnerClaims, limits: ApiLimits): Promise<{ grant: GrantView | null; decision: Decision | null }> {
    const { rows } = await this.pool.query<GrantView & { [K in keyof Row]: Row[K] | null }>({
      ...RATE_LIMIT_TAKE_FOR_GRANT,
      values: [claims.clientId, [limits.store, limits.application], this.clock(), claims.storeCode, claims.environment],
    });
    const first = rows[0];
    if (!first) return { grant: null, decision: null };
    const grant: GrantView = {
      applicationId: first.applicationId,
      applicationStatus: first.applicationStatus,
      appEnvironment: first.appEnvironment,
      storeId: first.storeId,
      storeEnvironment: first.storeEnvironment,
      grantStatus: first.grantStatus,
    };
    const counted = rows.filter((r): r is GrantView & Row => r.ord !== null);
    if (counted.length === 0) return { grant, decision: null };
    return { grant, decision: await this.decide(apiSubjects(grant, limits), counted) };
  }

  private async decide(subjects: readonly Subject[], rows: readonly Row[]): Promise<Decision> {
    const refusedAt = rows.findIndex((r) => r.counted === null);
    if (refusedAt > 0 && !subjects[0].probe) {
      const first = rows[0];
      await this.pool.query(RATE_LIMIT_UNDO, [subjects[0].key, first.window_start]);
    }
    const states = rows.map((r, i): WindowState => {
      // Admitted: the count after this request. Refused: nothing was counted, so what the statement saw.
      const current = refusedAt < 0 && r.counted !== null ? r.counted : r.seen;
      return { limit: subjects[i].limit, current, prev: r.prev, windowStart: r.window_start, now: r.now };
    });
    const now = rows[0].now;
    if (refusedAt >= 0) {
      const s = states[refusedAt];
      // The refusal was decided on the locked row; a stale snapshot must not report a free slot.
      const resetAt = Math.max(slotFreesAt(s, false), now + 1);
      return { allowed: false, subject: subjects[refusedAt], limit: s.limit, remaining: 0, resetAt, now };
    }
    let tightest = 0;
    for (let i = 1; i < states.length; i++) if (remaining(states[i]) < remaining(states[tightest])) tightest = i;
    const s = states[tightest];
    return { allowed: true, subject: subjects[tightest], limit: s.limit, remaining: remaining(s), resetAt: slotFreesAt(s, true), now };
  }
}

/**
 * The per-store and per-Application limits of a request: its store first (the usual one to run out), then its
 * Application, whose row is shared by all of its stores. The keys are the ones RATE_LIMIT_TAKE_FOR_GRANT builds from the grant.
 */
export function apiSubjects(ids: { storeId: string; applicationId: string }, limits: ApiLimits): Subject[] {
  return [
    { kind: "store", key: `store:${ids.storeId}`, limit: limits.store },
    { kind: "application", key: `app:${ids.applicationId}`, limit: limits.application },
  ];
}
