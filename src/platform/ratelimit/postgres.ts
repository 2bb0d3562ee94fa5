import type pg from "pg";
import { checkSubjects, decide, type Decision, type RateLimiter, type Subject } from "./limiter.js";
import { RATE_LIMIT_TAKE, RATE_LIMIT_UNDO } from "./sql.js";

interface Row {
  ord: number;
  prev: number;
  seen: number;
  now: number;
  window_start: number;
  counted: number | null;
}

/**
 * Counters in the RateLimitCounter table (one row per subject per minute bucket), shared by every process on the
 * database and exact across them; the clock is the database's. Costs a write of two row versions per request, so
 * it is the backend only for several processes sharing a database without Redis.
 */
export class PostgresRateLimiter implements RateLimiter {
  constructor(
    private readonly pool: pg.Pool,
    /** Test hook: a fixed clock instead of the database's. */
    private readonly clock: () => Date | null = () => null,
  ) {}

  async take(subjects: readonly Subject[]): Promise<Decision> {
    checkSubjects(subjects);
    const { rows } = await this.pool.query<Row>({
      ...RATE_LIMIT_TAKE,
      values: [subjects.map((s) => s.key), subjects.map((s) => s.limit), this.clock(), subjects.map((s) => (s.probe ? 0 : 1))],
    });
    const refusedAt = rows.findIndex((r) => r.counted === null);
    if (refusedAt > 0 && !subjects[0].probe) await this.pool.query(RATE_LIMIT_UNDO, [subjects[0].key, rows[0].window_start]);
    return decide(
      subjects,
      rows.map((r) => ({ prev: r.prev, seen: r.seen, counted: r.counted, now: r.now, windowStart: r.window_start })),
    );
  }

  /** The pool's own readiness is the database's, which /readyz checks anyway. */
  async ready(): Promise<boolean> {
    return true;
  }
}
