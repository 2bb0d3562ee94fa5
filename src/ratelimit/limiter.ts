import type pg from "pg";
import { remaining, slotFreesAt, type WindowState } from "./window.js";
import { ASYNC_COMMIT } from "../db/async-commit.js";
import { grantSql, type GrantView } from "../auth/grant-rule.js";
import type { PartnerClaims } from "../auth/tokens.js";

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

/**
 * One round trip for up to two subjects (store, then Application). Each subject's current-minute row is
 * incremented only when the weighted estimate stays within its limit; the second subject is tried only when the
 * first admitted the request, so a request refused by its store never touches the Application's row. A subject's
 * `step` is 1, or 0 for a probe (refused at its limit like any subject, but counting nothing). The
 * `ON CONFLICT ... WHERE` runs on the locked, latest row version, which is what makes concurrent API processes
 * exact. The clock is the database's (`statement_timestamp()`), shared by every process; tests pass `$3`.
 * The statement commits asynchronously (ASYNC_COMMIT): a counter needs no WAL flush before the answer, and a
 * database crash can at worst forget the last fraction of a second of counts. Both statements are prepared once per
 * connection: planning them cost more than running them (0.9 ms against 0.5 ms, pg_stat_statements).
 */
function limiterSql(opts: { subjects: string; prelude?: string; result: (rows: string) => string }): string {
  return `
WITH ${opts.prelude ?? ""}
clock AS MATERIALIZED (
  SELECT t, to_timestamp(floor(extract(epoch FROM t) / 60) * 60) AS cur
  FROM (SELECT coalesce($3::timestamptz, statement_timestamp()) AS t) x
  CROSS JOIN ${ASYNC_COMMIT}
),
s AS MATERIALIZED (
  SELECT u.ord, u.subject, u.lim, u.step, c.t, c.cur,
    coalesce((SELECT p.count FROM "RateLimitCounter" p
              WHERE p.subject = u.subject AND p."windowStart" = c.cur - interval '1 minute'), 0) AS prev,
    coalesce((SELECT q.count FROM "RateLimitCounter" q
              WHERE q.subject = u.subject AND q."windowStart" = c.cur), 0) AS seen
  FROM ${opts.subjects} CROSS JOIN clock c
),
w AS (
  SELECT s.*, s.prev * (1 - extract(epoch FROM s.t - s.cur) / 60) AS carried FROM s
),
first AS (
  INSERT INTO "RateLimitCounter" AS r (subject, "windowStart", count)
  SELECT subject, cur, step FROM w WHERE ord = 1 AND 1 + carried <= lim
  ON CONFLICT (subject, "windowStart") DO UPDATE SET count = r.count + (SELECT step FROM w WHERE ord = 1)
  WHERE r.count + 1 + (SELECT carried FROM w WHERE ord = 1) <= (SELECT lim FROM w WHERE ord = 1)
  RETURNING r.count
),
second AS (
  INSERT INTO "RateLimitCounter" AS r (subject, "windowStart", count)
  SELECT subject, cur, step FROM w WHERE ord = 2 AND 1 + carried <= lim AND EXISTS (SELECT 1 FROM first)
  ON CONFLICT (subject, "windowStart") DO UPDATE SET count = r.count + (SELECT step FROM w WHERE ord = 2)
  WHERE r.count + 1 + (SELECT carried FROM w WHERE ord = 2) <= (SELECT lim FROM w WHERE ord = 2)
  RETURNING r.count
)
${opts.result(`SELECT s.ord::int AS ord, s.prev, s.seen,
  extract(epoch FROM s.t)::float8 AS now, extract(epoch FROM s.cur)::float8 AS window_start,
  CASE s.ord WHEN 1 THEN (SELECT count FROM first) ELSE (SELECT count FROM second) END AS counted
FROM s`)}`;
}

const TAKE_SQL = limiterSql({
  subjects: "unnest($1::text[], $2::int[], $4::int[]) WITH ORDINALITY AS u(subject, lim, step, ord)",
  result: (rows) => `${rows} ORDER BY s.ord`,
});

/**
 * The same, with the request's grant read in the same round trip: the subjects are the grant's store and
 * Application (keys as `apiSubjects` builds them), and only a grant that admits the token takes slots. Every row
 * carries the grant's columns; the limiter's columns are null when the grant refused, and no row comes back
 * when there is no grant at all. $1 client_id, $2 the two limits, $3 the clock, $4 tenant_id, $5 environment.
 */
const grant = grantSql({ client: "$1", store: "$4", env: "$5" });
const TAKE_FOR_GRANT_SQL = limiterSql({
  prelude: `
grant_row AS MATERIALIZED (${grant.select}),
admitted AS (SELECT * FROM grant_row WHERE ${grant.grantAdmits}),`,
  subjects: `admitted CROSS JOIN LATERAL
    unnest(ARRAY['store:' || admitted."storeId", 'app:' || admitted."applicationId"], $2::int[], ARRAY[1, 1]) WITH ORDINALITY AS u(subject, lim, step, ord)`,
  result: (rows) => `SELECT grant_row.*, limiter.* FROM grant_row LEFT JOIN (${rows}) limiter ON true ORDER BY limiter.ord`,
});

/** Undoes the first subject's increment when the second refused (rare: the Application's limit is reached). */
const UNDO_SQL = `UPDATE "RateLimitCounter" SET count = count - 1
  WHERE subject = $1 AND "windowStart" = to_timestamp($2) AND count > 0`;

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
      name: "rate_limit_take",
      text: TAKE_SQL,
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
      name: "rate_limit_take_for_grant",
      text: TAKE_FOR_GRANT_SQL,
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
      await this.pool.query(UNDO_SQL, [subjects[0].key, first.window_start]);
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
 * Application, whose row is shared by all of its stores. The keys are the ones TAKE_FOR_GRANT_SQL builds from the grant.
 */
export function apiSubjects(ids: { storeId: string; applicationId: string }, limits: ApiLimits): Subject[] {
  return [
    { kind: "store", key: `store:${ids.storeId}`, limit: limits.store },
    { kind: "application", key: `app:${ids.applicationId}`, limit: limits.application },
  ];
}
