/** The delivery rules that are numbers, in one place. */

/** Scheduled attempts a delivery gets before it is dead-lettered. Replays and tests come on top. */
export const MAX_SCHEDULED_ATTEMPTS = 10;

/** Endpoints one (Application, Store) may register. */
export const MAX_ENDPOINTS_PER_OWNER = 20;

/** How long deliveries keep carrying the previous secret's signature after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * Wait after scheduled attempt `failedStep` (1-based) failed: step n waits `schedule[n-1]`. A schedule shorter
 * than the attempts it has to separate repeats its last step, so the attempt count never depends on it.
 */
export function retryDelayMs(schedule: readonly number[], failedStep: number): number {
  return schedule[Math.min(failedStep, schedule.length) - 1];
}

/**
 * How long a started attempt owns its delivery. An attempt is bounded by the send timeout plus two short
 * statements, so twice the timeout plus a second is generous; past it, a worker that died mid-attempt is
 * assumed gone and the attempt may be run again (at-least-once).
 */
export function attemptLeaseMs(timeoutMs: number): number {
  return 2 * timeoutMs + 1000;
}

/** A recover walk nobody continued for this long starts again from its window's beginning (src/modules/webhooks/recover.ts). */
export const RECOVER_WALK_TTL_MS = 60 * 60 * 1000;

/** The longest a receiver's Retry-After may hold back its next attempt. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/**
 * How long a receiver asked us to wait with Retry-After (delay-seconds or an HTTP date, RFC 9110 §10.2.3), capped at
 * MAX_RETRY_AFTER_MS; 0 when the header is absent or unreadable, or names a time already past.
 */
export function retryAfterMs(header: string | null, now: number): number {
  if (header === null) return 0;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : 0;
}
