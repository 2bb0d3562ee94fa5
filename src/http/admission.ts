import { ApiError, serviceUnavailable } from "../platform/errors.js";
import { ADMIN_KEY_PREFIX } from "../platform/auth/admin-keys.js";
import type { PartnerClaims } from "../platform/auth/principal.js";

export interface AdmissionLimits {
  /** Requests served at once. */
  maxInFlight: number;
  /** Requests waiting for a slot; past them, 503 at once. */
  maxQueued: number;
  /** Longest wait for a slot before 503. */
  queueTimeoutMs: number;
  /** Requests one flow may have waiting; past them, its next request is 429 CONCURRENCY_LIMIT_EXCEEDED at once. */
  maxQueuedPerFlow: number;
}

/** The kinds of flow, as /metrics labels them (an Application's own id would be one series per partner). */
export type FlowKind = "application" | "token" | "admin" | "anonymous";

/**
 * Whose turn a request waits for: one Application by its verified token; every token request, every admin-key request
 * and every request without a credential each share one flow of their own.
 */
export interface Flow {
  key: string;
  kind: FlowKind;
}

export const TOKEN_FLOW: Flow = { key: "token", kind: "token" };
const ADMIN_FLOW: Flow = { key: "admin", kind: "admin" };
const ANONYMOUS_FLOW: Flow = { key: "anonymous", kind: "anonymous" };

/**
 * The flow of an API request: its Application when its partner token verified, else the admin keys' flow for a
 * bearer that looks like one, else the flow of everything without a credential that verified (so no made-up
 * credential can open a flow of its own).
 */
export function flowOf(claims: PartnerClaims | null, authorization: string | undefined): Flow {
  if (claims) return { key: `application:${claims.clientId}`, kind: "application" };
  const bearer = /^bearer\s+(\S+)/i.exec(authorization ?? "")?.[1];
  return bearer?.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_FLOW : ANONYMOUS_FLOW;
}

export type ShedReason = "queue_full" | "queue_timeout";

/** What admission needs of a request's response: to hear that its client went away (a ServerResponse is one). */
export interface Departure {
  once(event: "close", listener: () => void): unknown;
  off(event: "close", listener: () => void): unknown;
}

interface Waiter {
  /** Arrival order: among flows with as many requests running, the oldest waiter goes first. */
  seq: number;
  admit: () => void;
  /** Refuses the waiter (its timer, its client leaving, or its place given to another flow). */
  refuse: (error: Error) => void;
}

interface FlowState {
  kind: FlowKind;
  running: number;
  waiting: Waiter[];
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
 *
 * The queue is fair across flows, after Kubernetes' API Priority and Fairness: it is work-conserving (while a slot is
 * free nobody waits, whoever they are), and when requests must wait, a freed slot goes to the flow with the fewest
 * requests running, oldest first within a flow, so one busy Application never starves another while an idle
 * process still serves a single Application at full speed. Unlike APF it keeps one exact queue per flow (a process
 * has at most a few dozen waiting requests, so no shuffle sharding is needed) and orders flows by requests running
 * rather than by virtual finish time (requests here are short and similar, and the running count needs no estimate
 * of their cost). Envoy's adaptive concurrency (a limit that follows latency) was not taken: the slot count is the
 * database pool's, measured. No maintained npm package does fair queuing across flows, hence these few lines.
 *
 * A flow whose own queue is full has its next request refused, 429 CONCURRENCY_LIMIT_EXCEEDED; when the whole queue is
 * full, a request of a flow with fewer waiting takes the place of the newest waiter of the flow with the most (that
 * one is refused the same way), so a flood fills its own share of the queue, not everyone's.
 */
export class Admission {
  private running = 0;
  private waitingCount = 0;
  private seq = 0;
  private readonly flows = new Map<string, FlowState>();
  /** Requests taking their slot again after waiting outside (see reenter): they go before every flow's queue. */
  private readonly returning: (() => void)[] = [];
  /** Admissions and refusals per second of the last RECENT_SECONDS, as [second, admitted, shed]. */
  private readonly recent: [number, number, number][] = [];

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly onShed: (reason: ShedReason) => void = () => undefined,
    private readonly onFlowRefused: (kind: FlowKind) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waitingCount + this.returning.length;
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
   * do nothing). Rejects with 503 when the process's queue is full (and no longer flow gives a place up) or the wait
   * runs out, and with 429 CONCURRENCY_LIMIT_EXCEEDED when its flow has its whole share of the queue waiting. A
   * request whose client went away stops waiting.
   */
  enter(res: Departure, flow: Flow): Promise<() => void> {
    const state = this.flowState(flow);
    if (this.running < this.limits.maxInFlight) {
      this.running++;
      state.running++;
      this.count(1, 0);
      return Promise.resolve(this.releaser(flow.key, state));
    }
    // A full queue first: with the default share (the whole queue) one flow alone filling it meets the process's
    // capacity, 503, as everyone would.
    if (this.waitingCount >= this.limits.maxQueued) {
      if (!this.pushOutLongest(state)) {
        this.forget(flow.key, state);
        return Promise.reject(this.shed("queue_full"));
      }
    } else if (state.waiting.length >= this.limits.maxQueuedPerFlow) return Promise.reject(this.refuseFlow(flow.key, state));
    return new Promise((resolve, reject) => {
      const leave = () => {
        const i = state.waiting.indexOf(waiter);
        if (i >= 0) {
          state.waiting.splice(i, 1);
          this.waitingCount--;
        }
        clearTimeout(timer);
        res.off("close", gone);
        this.forget(flow.key, state);
      };
      // Nobody reads the answer of a request whose client left; it only must not take a slot later.
      const gone = () => {
        leave();
        reject(serviceUnavailable("The client went away while waiting."));
      };
      const timer = setTimeout(() => {
        leave();
        reject(this.shed("queue_timeout"));
      }, this.limits.queueTimeoutMs);
      const waiter: Waiter = {
        seq: this.seq++,
        // The slot passes straight from the finishing request to this one: `running` does not change.
        admit: () => {
          clearTimeout(timer);
          res.off("close", gone);
          this.count(1, 0);
          resolve(this.releaser(flow.key, state));
        },
        refuse: (error) => {
          leave();
          reject(error);
        },
      };
      res.once("close", gone);
      state.waiting.push(waiter);
      this.waitingCount++;
    });
  }

  /**
   * Takes a slot again for a request that gave its own up while it waited outside (src/platform/outside.ts): it goes
   * ahead of every queue and is never shed, since what it does next (recording what it waited for) must happen.
   */
  reenter(flow: Flow): Promise<() => void> {
    // The flow's state is looked up when the slot is taken: while its request waited outside, it may have been dropped.
    const take = () => {
      const state = this.flowState(flow);
      state.running++;
      return this.releaser(flow.key, state);
    };
    if (this.running < this.limits.maxInFlight) {
      this.running++;
      return Promise.resolve(take());
    }
    return new Promise((resolve) => this.returning.push(() => resolve(take())));
  }

  private flowState(flow: Flow): FlowState {
    let state = this.flows.get(flow.key);
    if (!state) {
      state = { kind: flow.kind, running: 0, waiting: [] };
      this.flows.set(flow.key, state);
    }
    return state;
  }

  /** Drops a flow that has nothing running or waiting, so the map holds only flows in the process now. */
  private forget(key: string, state: FlowState): void {
    if (state.running === 0 && state.waiting.length === 0 && this.flows.get(key) === state) this.flows.delete(key);
  }

  /** The function that frees one slot, once: it passes to the next request in turn or is given back. */
  private releaser(key: string, state: FlowState): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.running--;
      this.forget(key, state);
      const next = this.next();
      if (next) next();
      else this.running--;
    };
  }

  /** Whose turn it is: a returning request, else the oldest waiter of the flow with the fewest requests running. */
  private next(): (() => void) | undefined {
    const back = this.returning.shift();
    if (back) return back;
    let best: FlowState | undefined;
    for (const state of this.flows.values()) {
      const head = state.waiting[0];
      if (!head) continue;
      if (!best || state.running < best.running || (state.running === best.running && head.seq < best.waiting[0].seq)) best = state;
    }
    if (!best) return undefined;
    const waiter = best.waiting.shift();
    if (!waiter) return undefined;
    this.waitingCount--;
    best.running++;
    return waiter.admit;
  }

  /**
   * Makes room in a full queue for a request of `state`'s flow by refusing the newest waiter of the flow with the most
   * waiting, when that flow has at least two more than this one (else the newcomer would only trade places with it).
   */
  private pushOutLongest(state: FlowState): boolean {
    let longest: [string, FlowState] | undefined;
    for (const entry of this.flows) if (!longest || entry[1].waiting.length > longest[1].waiting.length) longest = entry;
    if (!longest || longest[1].waiting.length < state.waiting.length + 2) return false;
    const [key, victim] = longest;
    victim.waiting.at(-1)?.refuse(this.refuseFlow(key, victim));
    return true;
  }

  private refuseFlow(key: string, state: FlowState): ApiError {
    this.onFlowRefused(state.kind);
    const waiting = state.waiting.length;
    this.forget(key, state);
    return new ApiError(
      "CONCURRENCY_LIMIT_EXCEEDED",
      `Too many of your requests are waiting on this server at once (${waiting} queued behind ${state.running} running). ` +
        "Nothing was counted against your per-minute limits; send fewer requests at a time and retry after Retry-After.",
      undefined,
      { "retry-after": "1" },
    );
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
