/**
 * The two-window weighted estimate of a sliding one-minute window: the requests counted in the
 * current minute bucket, plus the previous bucket's count weighted by how much of it the sliding window still
 * covers. `now` and `windowStart` are Unix seconds; `prev` is the previous bucket's count.
 */
export const WINDOW_SECONDS = 60;

export interface WindowState {
  limit: number;
  /** Requests in the current bucket (including this one when it was admitted). */
  current: number;
  prev: number;
  windowStart: number;
  now: number;
}

export function carried(s: Pick<WindowState, "prev" | "windowStart" | "now">): number {
  return s.prev * (1 - (s.now - s.windowStart) / WINDOW_SECONDS);
}

export function estimate(s: WindowState): number {
  return s.current + carried(s);
}

/** Whole requests still allowed before the estimate reaches the limit. */
export function remaining(s: WindowState): number {
  return Math.max(0, Math.floor(s.limit - estimate(s) + 1e-9));
}

/**
 * Unix seconds (fractional) at which the estimate falls to `target`, assuming no further requests: first the
 * previous bucket's weight decays through the current minute, then the current bucket becomes the previous one
 * and decays through the next.
 */
export function timeWhenAtMost(s: WindowState, target: number): number {
  const elapsed = s.now - s.windowStart;
  if (estimate(s) <= target) return s.now;
  if (s.current <= target) {
    // s.prev > 0 here, or the estimate would already be at most target.
    const offset = WINDOW_SECONDS * (1 - (target - s.current) / s.prev);
    return s.windowStart + Math.max(elapsed, offset);
  }
  return s.windowStart + WINDOW_SECONDS + WINDOW_SECONDS * (1 - target / s.current);
}

/**
 * When the next slot frees: for a refused request, when one more request fits under the limit; for an admitted
 * one, when the usage it reports drops by one request.
 */
export function slotFreesAt(s: WindowState, admitted: boolean): number {
  const target = admitted ? estimate(s) - 1 : s.limit - 1;
  return timeWhenAtMost(s, Math.max(0, target));
}
