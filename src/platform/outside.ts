import { ApiError } from "./errors.js";
import { KeyedCounts } from "./counts.js";

/**
 * Runs `fn`, which waits on something outside our database (a partner's webhook receiver, a DNS lookup of its host),
 * without the request's admission slot: the slot is given up while `fn` waits and taken again, ahead of new requests,
 * before the caller goes on. The HTTP adapter supplies it; anywhere else (the worker, tests below HTTP) `fn` just runs.
 */
export type WaitOutside = <T>(fn: () => Promise<T>) => Promise<T>;

export const waitInline: WaitOutside = (fn) => fn();

/**
 * Calls out on an Application's behalf that it may have in flight at once in this process (WEBHOOK_TEST_CONCURRENCY):
 * webhook tests waiting on its receiver and lookups of its webhook URLs' hosts. Past the bound the next is 429 at once,
 * before it changes anything, so one Application's slow receiver or DNS cannot tie up what other tenants need.
 */
export class OutsideCalls {
  private readonly inFlight = new KeyedCounts();

  constructor(
    private readonly max: number,
    /** What a refused call is told to wait: about as long as one call out may take. */
    private readonly retryAfterSeconds: number,
  ) {}

  /** Counts one call of the Application until the returned function is called (once); 429 when it has `max` already. */
  admit(applicationId: string): () => void {
    if (this.inFlight.of(applicationId) >= this.max) {
      throw new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `This Application already has ${this.max} calls out to its webhook receivers or their hosts in flight (webhook tests, URL checks); retry once they end.`,
        undefined,
        { "retry-after": String(this.retryAfterSeconds) },
      );
    }
    this.inFlight.add(applicationId);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight.remove(applicationId);
    };
  }

  /** Runs `fn` as one of the Application's calls out, without the request's admission slot while it waits. */
  async run<T>(applicationId: string, waitOutside: WaitOutside, fn: () => Promise<T>): Promise<T> {
    const leave = this.admit(applicationId);
    try {
      return await waitOutside(fn);
    } finally {
      leave();
    }
  }

  /** Calls in flight, all Applications together (for /metrics). */
  get size(): number {
    return this.inFlight.total;
  }
}
