import { ApiError } from "./errors.js";
import { KeyedCounts } from "./counts.js";
import type { Principal } from "./auth/principal.js";

/**
 * The live streams (GraphQL subscriptions) one process serves: at most `max` in all (the next is 503) and at most
 * `perApplication` for one Application (the next is 429), whatever transport carries them. They hold no admission
 * slot while they stream, so this is what keeps one partner's open streams from taking every socket and the
 * memory behind them.
 */
export class LiveStreams {
  private open = 0;
  private readonly byApplication = new KeyedCounts();

  constructor(
    private readonly max: number,
    private readonly perApplication: number,
  ) {}

  /** Counts one stream of the caller until the returned function is called (once, or more: later calls do nothing). */
  admit(principal: Principal): () => void {
    if (this.open >= this.max) {
      throw new ApiError("SERVICE_UNAVAILABLE", `This process serves ${this.max} live streams already; retry shortly.`, undefined, { "retry-after": "5" });
    }
    const app = principal.kind === "partner" ? principal.applicationId : null;
    if (app !== null && this.byApplication.of(app) >= this.perApplication) {
      throw new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `This Application already holds ${this.perApplication} live streams on this process; close one (or resume one with \`after\`) before opening another.`,
        undefined,
        { "retry-after": "5" },
      );
    }
    this.open++;
    if (app !== null) this.byApplication.add(app);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.open--;
      if (app !== null) this.byApplication.remove(app);
    };
  }

  /** Streams open now (for /metrics). */
  get size(): number {
    return this.open;
  }
}

/**
 * `source` that calls `closed` (once) when it ends or its consumer returns, even a consumer that returns before
 * asking for the first value: an async generator's `finally` never runs then, and the count would leak.
 */
export function onClose<T>(source: AsyncIterableIterator<T>, closed: () => void): AsyncIterableIterator<T> {
  return {
    async next() {
      const step = await source.next().catch((error: unknown) => {
        closed();
        throw error;
      });
      if (step.done) closed();
      return step;
    },
    async return(value?: unknown) {
      closed();
      return source.return ? source.return(value) : { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      closed();
      if (source.throw) return source.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
