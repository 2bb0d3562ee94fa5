import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { Admission, type AdmissionLimits, type Flow, type FlowKind, type ShedReason } from "../../src/http/admission.js";
import { ApiError } from "../../src/platform/errors.js";

/**
 * The admission queue on its own: who waits, who is refused with what, and whose turn comes next. The same class
 * answers the HTTP server's requests (test/platform/fair-admission.test.ts drives it through the service).
 */

const app = (name: string): Flow => ({ key: `application:${name}`, kind: "application" });
const A = app("a");
const B = app("b");
const C = app("c");

function admission(limits: Partial<AdmissionLimits> = {}) {
  const shed: ShedReason[] = [];
  const refused: FlowKind[] = [];
  const queue = new Admission(
    { maxInFlight: 2, maxQueued: 10, queueTimeoutMs: 10_000, maxQueuedPerFlow: 10, ...limits },
    (r) => shed.push(r),
    (k) => refused.push(k),
  );
  return { queue, shed, refused };
}

/** A request of `flow`: its response (close it to make the client go away) and when it was admitted or refused. */
function request(queue: Admission, flow: Flow, log: string[] = [], name = flow.key) {
  const res = new EventEmitter();
  const entered = queue.enter(res, flow).then(
    (leave) => {
      log.push(name);
      return leave;
    },
    (error: unknown) => {
      log.push(`${name}!`);
      throw error;
    },
  );
  // Refusals are asserted through `outcome`; an unobserved one must not fail the run.
  entered.catch(() => undefined);
  return { res, entered };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "admitted",
    (e: unknown) => (e instanceof ApiError ? `${e.status} ${e.code}` : String(e)),
  );
const tick = () => new Promise((r) => setImmediate(r));

describe("admission", () => {
  it("is work-conserving: while a slot is free one flow takes every slot and nobody waits", async () => {
    const { queue } = admission({ maxInFlight: 3, maxQueuedPerFlow: 1 });
    const leaves = await Promise.all([0, 1, 2].map(() => request(queue, A).entered));
    expect(queue.inFlight).toBe(3);
    expect(queue.queued).toBe(0);
    for (const leave of leaves) leave();
    expect(queue.inFlight).toBe(0);
  });

  it("gives a freed slot to the flow with the fewest requests running, oldest first within a flow", async () => {
    const { queue } = admission({ maxInFlight: 2 });
    const log: string[] = [];
    const a1 = await request(queue, A, log, "a1").entered;
    const a2 = await request(queue, A, log, "a2").entered;
    // A holds both slots; requests of A, A, B, A and C arrive in that order and wait.
    const waiting = [
      request(queue, A, log, "a3"),
      request(queue, A, log, "a4"),
      request(queue, B, log, "b1"),
      request(queue, A, log, "a5"),
      request(queue, C, log, "c1"),
    ];
    expect(queue.queued).toBe(5);
    log.length = 0;
    a1();
    await tick();
    // A has one running, B and C none: B's request, the older of the two, goes first.
    expect(log).toEqual(["b1"]);
    a2();
    await tick();
    // A none running, B one, C none: A's and C's tie at none; A's oldest waiter arrived first.
    expect(log).toEqual(["b1", "a3"]);
    (await waiting[2].entered)();
    await tick();
    // A one, B none (nothing waiting), C none: C.
    expect(log).toEqual(["b1", "a3", "c1"]);
    (await waiting[0].entered)();
    await tick();
    (await waiting[4].entered)();
    await tick();
    expect(log).toEqual(["b1", "a3", "c1", "a4", "a5"]);
  });

  it("refuses a flow whose own queue is full with 429 CONCURRENCY_LIMIT_EXCEEDED, and lets another flow wait", async () => {
    const { queue, refused, shed } = admission({ maxInFlight: 1, maxQueuedPerFlow: 2 });
    await request(queue, A).entered;
    const queued = [request(queue, A), request(queue, A)];
    const over = request(queue, A);
    expect(await outcome(over.entered)).toBe("429 CONCURRENCY_LIMIT_EXCEEDED");
    await over.entered.catch((e: unknown) => {
      expect(e).toBeInstanceOf(ApiError);
      if (e instanceof ApiError) expect(e.headers).toEqual({ "retry-after": "1" });
    });
    const other = request(queue, B);
    expect(queue.queued).toBe(3);
    expect(refused).toEqual(["application"]);
    expect(shed).toEqual([]);
    for (const q of [...queued, other]) q.res.emit("close");
  });

  it("when the whole queue is full, a newcomer takes the place of the newest waiter of the longest flow", async () => {
    const { queue, refused, shed } = admission({ maxInFlight: 1, maxQueued: 4 });
    const log: string[] = [];
    const leave = await request(queue, A, log, "a0").entered;
    const a = [1, 2, 3, 4].map((i) => request(queue, A, log, `a${i}`));
    const b1 = request(queue, B, log, "b1");
    expect(await outcome(a[3].entered)).toBe("429 CONCURRENCY_LIMIT_EXCEEDED");
    expect(refused).toEqual(["application"]);
    // A has 3 waiting, B 1: B's next still finds room, by A's newest giving way (A then has 2, B 2).
    const b2 = request(queue, B, log, "b2");
    expect(await outcome(a[2].entered)).toBe("429 CONCURRENCY_LIMIT_EXCEEDED");
    // Now the two flows wait as many each: a third of B's would only trade places, so the process is full: 503.
    const b3 = request(queue, B, log, "b3");
    expect(await outcome(b3.entered)).toBe("503 SERVICE_UNAVAILABLE");
    expect(shed).toEqual(["queue_full"]);
    leave();
    await tick();
    // Neither flow runs anything now: the oldest waiter of the two goes first.
    expect(log.filter((l) => !l.endsWith("!"))).toEqual(["a0", "a1"]);
    for (const q of [b1, a[1], b2]) q.res.emit("close");
    expect(queue.queued).toBe(0);
  });

  it("one flow alone filling the process's queue (its default share) gets 503, as a process at capacity answers everyone", async () => {
    const { queue, shed, refused } = admission({ maxInFlight: 1, maxQueued: 2, maxQueuedPerFlow: 2 });
    await request(queue, A).entered;
    const waiting = [request(queue, A), request(queue, A)];
    expect(await outcome(request(queue, A).entered)).toBe("503 SERVICE_UNAVAILABLE");
    expect(shed).toEqual(["queue_full"]);
    expect(refused).toEqual([]);
    for (const w of waiting) w.res.emit("close");
  });

  it("a wait past the queue timeout is 503, and a client that leaves gives its place up", async () => {
    const { queue, shed } = admission({ maxInFlight: 1, queueTimeoutMs: 50 });
    const leave = await request(queue, A).entered;
    const timedOut = request(queue, B);
    expect(await outcome(timedOut.entered)).toBe("503 SERVICE_UNAVAILABLE");
    expect(shed).toEqual(["queue_timeout"]);
    const gone = request(queue, B);
    gone.res.emit("close");
    expect(await outcome(gone.entered)).toBe("503 SERVICE_UNAVAILABLE");
    expect(queue.queued).toBe(0);
    leave();
    expect(queue.inFlight).toBe(0);
  });

  it("a request back from waiting outside goes before every queue, and counts as its flow's again", async () => {
    const { queue } = admission({ maxInFlight: 1 });
    const log: string[] = [];
    const leave = await request(queue, A, log, "a1").entered;
    const b = request(queue, B, log, "b1");
    const back = queue.reenter(B);
    leave();
    const again = await back;
    expect(log).toEqual(["a1"]);
    // B now runs one (the returning request): A's next would win over B's waiter only if A had fewer running.
    again();
    await tick();
    expect(log).toEqual(["a1", "b1"]);
    (await b.entered)();
    expect(queue.inFlight).toBe(0);
  });
});
