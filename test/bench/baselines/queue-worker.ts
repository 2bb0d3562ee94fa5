import http from "node:http";
import { run, Logger, type Task } from "graphile-worker";
import { signatureHeader } from "../../../src/modules/webhooks/signing.js";
import { QUEUE_BASELINE_TASK } from "../lib/webhooks.js";
import { createWorkerPool, workerTuning } from "../../../workers/tuning.js";
import { createLogger } from "../../../src/platform/log.js";

/**
 * Baseline for the delivery benchmarks: graphile-worker alone, run with the options workers/runner.ts uses, and
 * one job per event (`bench_post`) that signs a small body and POSTs it to the receiver. No fan-out, no delivery
 * rows, no attempt records: what is left is the queue's own add_job → start latency and throughput on this
 * machine, plus one signed HTTP request. Other processes' workers ignore the task (they do not know it).
 */

const secret = process.env.BENCH_SECRET ?? "";
const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 128);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(url: string, id: string): Promise<void> {
  const body = JSON.stringify({ eventId: id, eventType: "bench.post" });
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-service-event-id": id,
    "x-service-signature": signatureHeader([secret], Math.floor(Date.now() / 1000), body),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const benchPost: Task = async (payload) => {
  const { id, url } = payload as { id: string; url: string };
  await post(url, id);
};

const pgPool = createWorkerPool(process.env.DATABASE_URL ?? "", concurrency, createLogger("silent"));
const runner = await run({
  pgPool,
  ...workerTuning(concurrency),
  noHandleSignals: true,
  taskList: { [QUEUE_BASELINE_TASK]: benchPost },
  logger: new Logger(() => () => undefined),
});
process.stdout.write(`${JSON.stringify({ msg: "worker started", name: "queue-baseline" })}\n`);
process.on("SIGTERM", () => {
  void runner
    .stop()
    .then(() => pgPool.end())
    .finally(() => process.exit(0));
});
