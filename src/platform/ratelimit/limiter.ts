import { carried, remaining, slotFreesAt, WINDOW_SECONDS, type WindowState } from "./window.js";

export type SubjectKind = "store" | "application" | "token" | "token_failures";

export interface Subject {
  kind: SubjectKind;
  /** The counter's key, e.g. `store:<uuid>`. */
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
 * Sliding one-minute windows (the two-bucket weighted estimate of window.ts) over one or two subjects, tried in
 * order: the second is counted only when the first admitted the request, and a refusal by the second gives the
 * first its slot back. Refused requests are not counted, so a client that keeps retrying while limited gets its
 * slots back on schedule. Backends: `memoryRateLimiter`/`redisRateLimiter` (counters.ts) and `PostgresRateLimiter`
 * (postgres.ts); `createRateLimiter` (backend.ts) picks one from the configuration.
 */
export interface RateLimiter {
  take(subjects: readonly Subject[]): Promise<Decision>;
  /** Whether the counters can be reached now (readiness). */
  ready(): Promise<boolean>;
}

/** What a backend saw of one subject's counters, in Unix seconds. */
export interface Count {
  prev: number;
  /** The current bucket before this request. */
  seen: number;
  /** The current bucket after counting this request; null when the subject refused it (nothing counted). */
  counted: number | null;
  now: number;
  windowStart: number;
}

/** The start of the minute bucket holding `now` (Unix seconds). */
export function bucketOf(now: number): number {
  return Math.floor(now / WINDOW_SECONDS) * WINDOW_SECONDS;
}

/**
 * The highest count of the current bucket before a request that still lets it in under `limit`, given the previous
 * bucket: one more request fits while seen + 1 + carried <= limit.
 */
export function maxSeen(limit: number, c: Pick<Count, "prev" | "now" | "windowStart">): number {
  return limit - 1 - carried(c);
}

/**
 * The decision from the counts of the subjects up to the first that refused (later ones are not looked at).
 * Admitted: the headers describe the subject with fewer requests left.
 */
export function decide(subjects: readonly Subject[], counts: readonly Count[]): Decision {
  const refusedAt = counts.findIndex((c) => c.counted === null);
  const states = counts.map((c, i): WindowState => {
    // Admitted: the count after this request. Refused: nothing was counted, so what the subject saw.
    const current = refusedAt < 0 && c.counted !== null ? c.counted : c.seen;
    return { limit: subjects[i].limit, current, prev: c.prev, windowStart: c.windowStart, now: c.now };
  });
  const now = counts[0].now;
  if (refusedAt >= 0) {
    const s = states[refusedAt];
    // The refusal was decided on the latest count; a stale read must not report a free slot.
    const resetAt = Math.max(slotFreesAt(s, false), now + 1);
    return { allowed: false, subject: subjects[refusedAt], limit: s.limit, remaining: 0, resetAt, now };
  }
  let tightest = 0;
  for (let i = 1; i < states.length; i++) if (remaining(states[i]) < remaining(states[tightest])) tightest = i;
  const s = states[tightest];
  return { allowed: true, subject: subjects[tightest], limit: s.limit, remaining: remaining(s), resetAt: slotFreesAt(s, true), now };
}

export function checkSubjects(subjects: readonly Subject[]): void {
  if (subjects.length < 1 || subjects.length > 2) throw new Error("RateLimiter.take expects one or two subjects");
}

/**
 * The per-store and per-Application limits of a request: its store first (the usual one to run out), then its
 * Application, whose counter is shared by all of its stores.
 */
export function apiSubjects(ids: { storeId: string; applicationId: string }, limits: ApiLimits): Subject[] {
  return [
    { kind: "store", key: `store:${ids.storeId}`, limit: limits.store },
    { kind: "application", key: `app:${ids.applicationId}`, limit: limits.application },
  ];
}
