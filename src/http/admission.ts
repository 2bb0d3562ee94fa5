import type { ServerResponse } from "node:http";
import { ApiError, serviceUnavailable } from "../platform/errors.js";
import { KeyedCounts } from "../platform/counts.js";

export interface AdmissionLimits {
  /** Requests served at once. */
  maxInFlight: number;
  /** Requests waiting for a slot; past them, 503 at once. */
  maxQueued: number;
  /** Longest wait for a slot before 503. */
  queueTimeoutMs: number;
  /** Slots and places in the queue one caller (an Application) holds at once; past them, 429 at once. */
  maxPerCaller: number;
}

export type ShedReason = "queue_full" | "queue_timeout";

interface Waiter {
  admit: () => void;
  timer?: NodeJS.Timeout;
}

/** How far back /readyz looks at admissions and refusals, in one-second buckets. */
const RECENT_SECONDS = 5;
/** Refusals below this many in that time never make a process unready: a few are noise, not "most requests fail". */
const RECENT_MIN_REFUSALS = 10;

/**
 * Admission control for the requests that need the database. Past capacity, queueing them all (in the pool, in
 * Prisma) made every request slow and some fail with 500 once Prisma's transaction wait ran out; instead a
 * bounded number run, a short queue waits briefly, and the rest are refused at once with 503 and Retry-After,
 * which costs almost nothing. What is admitted therefore keeps a bounded latency.
 */
export class Admission {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Admissions and refusals per second of the last RECENT_SECONDS, as [second, admitted, shed]. */
  private readonly recent: [number, number, number][] = [];
  /** Requests of each caller running or waiting. */
  private readonly byCaller = new KeyedCounts();

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly onShed: (reason: ShedReason) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Whether most requests that asked for a slot over the last few seconds were refused: then most requests would fail
   * now too, which is what /readyz reports. A handful refused among many served is not that.
   */
  refusingMost(): boolean {
    const since = this.second() - RECENT_SECONDS;
    let admitted = 0;
    let shed = 0;
    for (const [s, a, r] of this.recent) {
      if (s <= since) continue;
      admitted += a;
      shed += r;
    }
    return shed >= RECENT_MIN_REFUSALS && shed > admitted;
  }

  /**
   * Resolves once the request may run, with the function that frees its slot (the first call frees it; later calls
   * do nothing); rejects with 503 when the queue is full or the wait runs out, and with 429 when `caller` already
   * holds its share of slots and queue. A request whose client went away stops waiting.
   */
  enter(res: ServerResponse, caller?: string): Promise<() => void> {
    const held = caller === undefined ? 0 : this.byCaller.of(caller);
    if (caller !== undefined && held >= this.limits.maxPerCaller) {
      return Promise.reject(
        new ApiError(
          "RATE_LIMIT_EXCEEDED",
          `This Application already has ${held} requests running or waiting on this server; send the next one when one of them has answered.`,
          undefined,
          { "retry-after": "1" },
        ),
      );
    }
    if (this.running < this.limits.maxInFlight) {
      this.running++;
      this.count(1, 0);
      this.hold(caller);
      return Promise.resolve(this.releaser(caller));
    }
    if (this.waiting.length >= this.limits.maxQueued) return Promise.reject(this.shed("queue_full"));
    this.hold(caller);
    return new Promise((resolve, reject) => {
      const leave = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        clearTimeout(waiter.timer);
        res.off("close", gone);
        this.unhold(caller);
      };
      // Nobody reads the answer of a request whose client left; it only must not take a slot later.
      const gone = () => {
        leave();
        reject(serviceUnavailable("The client went away while waiting."));
      };
      const waiter: Waiter = {
        // The slot passes straight from the finishing request to this one: `running` does not change.
        admit: () => {
          res.off("close", gone);
          this.count(1, 0);
          resolve(this.releaser(caller));
        },
        timer: setTimeout(() => {
          leave();
          reject(this.shed("queue_timeout"));
        }, this.limits.queueTimeoutMs),
      };
      res.once("close", gone);
      this.waiting.push(waiter);
    });
  }

  /**
   * Takes a slot again for a request that gave its own up while it waited outside (src/platform/outside.ts): it goes
   * ahead of the queue and is never shed, since what it does next (recording what it waited for) must happen.
   */
  reenter(): Promise<() => void> {
    if (this.running < this.limits.maxInFlight) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiting.unshift({ admit: () => resolve(this.releaser()) }));
  }

  /** The function that frees one slot, once: it passes to the next waiter or is given back. */
  private releaser(caller?: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.unhold(caller);
      const next = this.waiting.shift();
      if (next) {
        clearTimeout(next.timer);
        next.admit();
      } else {
        this.running--;
      }
    };
  }

  private hold(caller: string | undefined): void {
    if (caller !== undefined) this.byCaller.add(caller);
  }

  private unhold(caller: string | undefined): void {
    if (caller !== undefined) this.byCaller.remove(caller);
  }

  private shed(reason: ShedReason): Error {
    this.onShed(reason);
    this.count(0, 1);
    return serviceUnavailable(
      reason === "queue_full" ? "The service is at capacity." : "The service is at capacity; the request waited too long for its turn.",
    );
  }

  private second(): number {
    return Math.floor(Date.now() / 1000);
  }

  private count(admitted: number, shed: number): void {
    const now = this.second();
    const last = this.recent.at(-1);
    if (last && last[0] === now) {
      last[1] += admitted;
      last[2] += shed;
      return;
    }
    this.recent.push([now, admitted, shed]);
    if (this.recent.length > RECENT_SECONDS) this.recent.shift();
  }
}
