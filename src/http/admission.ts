import type { ServerResponse } from "node:http";
import { serviceUnavailable } from "../platform/errors.js";

export interface AdmissionLimits {
  /** Requests served at once. */
  maxInFlight: number;
  /** Requests waiting for a slot; past them, 503 at once. */
  maxQueued: number;
  /** Longest wait for a slot before 503. */
  queueTimeoutMs: number;
}

export type ShedReason = "queue_full" | "queue_timeout";

interface Waiter {
  admit: () => void;
  timer: NodeJS.Timeout;
}

/**
 * Admission control for the requests that need the database. Past capacity, queueing them all (in the pool, in
 * Prisma) made every request slow and some fail with 500 once Prisma's transaction wait ran out; instead a
 * bounded number run, a short queue waits briefly, and the rest are refused at once with 503 and Retry-After,
 * which costs almost nothing. What is admitted therefore keeps a bounded latency.
 */
export class Admission {
  private running = 0;
  private readonly waiting: Waiter[] = [];

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
   * Resolves once the request may run, with the function that frees its slot (call it exactly once); rejects
   * with 503 when the queue is full or the wait runs out. A request whose client went away stops waiting.
   */
  enter(res: ServerResponse): Promise<() => void> {
    const release = () => {
      const next = this.waiting.shift();
      if (next) {
        clearTimeout(next.timer);
        next.admit();
      } else {
        this.running--;
      }
    };
    if (this.running < this.limits.maxInFlight) {
      this.running++;
      return Promise.resolve(release);
    }
    if (this.waiting.length >= this.limits.maxQueued) return Promise.reject(this.shed("queue_full"));
    return new Promise((resolve, reject) => {
      const leave = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        clearTimeout(waiter.timer);
        res.off("close", gone);
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
          resolve(release);
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

  private shed(reason: ShedReason): Error {
    this.onShed(reason);
    return serviceUnavailable(
      reason === "queue_full" ? "The service is at capacity." : "The service is at capacity; the request waited too long for its turn.",
    );
  }
}
