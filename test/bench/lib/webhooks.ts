import { randomBytes } from "node:crypto";
import type { BenchContext } from "../context.js";
import { adminQuery } from "./database.js";
import type { BenchTenant } from "./tenants.js";
import { serviceCommand, startService, type Service } from "./processes.js";
import type { Receiver } from "./receiver.js";

/**
 * What the delivery benchmarks need: one endpoint per sandbox tenant registered through the public API
 * (POST /public/v1/webhooks, subscribed to order.created) on the run's receiver, and one worker process
 * (`src/cli/start.ts --role worker`). When this build has no webhook routes (404), that is reported instead.
 * Also the queue baseline: graphile-worker alone (baselines/queue-worker.ts), measured side by side.
 */

export interface Endpoint {
  tenant: BenchTenant;
  path: string;
  /** The secret the registration returned (the bare delivery loop signs with it). */
  secret: string;
}

export type DeliverySetup = { available: true; endpoints: Endpoint[]; worker: Service } | { available: false; reason: string };

export async function prepareDeliveries(ctx: BenchContext, receiver: Receiver): Promise<DeliverySetup> {
  // The queue baselines ran on the same graphile-worker jobs table: the dead rows of their tens of thousands of jobs
  // are not the service's doing, and left in place they made every job fetch of the latency run that follows step
  // over them (p50 15.7 ms instead of about 2 ms). The service's worker starts on the table as a vacuum leaves it.
  await adminQuery(ctx.databaseUrl, "vacuum (analyze) graphile_worker._private_jobs");
  const endpoints: Endpoint[] = [];
  for (const tenant of ctx.sandboxTenants) {
    const path = `/hooks/${tenant.storeCode}`;
    const res = await fetch(`${ctx.api.baseUrl}/public/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      // The most an endpoint may ask for: the benchmarks measure the worker, not the endpoints' pace (the default, 50 a
      // second, would hold ten endpoints to 500 deliveries a second).
      body: JSON.stringify({ url: receiver.url(path), events: ["order.created"], rateLimit: 10_000 }),
    });
    if (res.status === 404) {
      return { available: false, reason: "POST /public/v1/webhooks answers 404: the webhook routes and worker tasks are not in this build" };
    }
    const body = (await res.json()) as { secret?: string };
    if (res.status !== 201 || !body.secret) throw new Error(`registering a webhook endpoint: ${res.status} ${JSON.stringify(body)}`);
    receiver.setSecret(path, body.secret);
    endpoints.push({ tenant, path, secret: body.secret });
  }
  // BENCH_WORKER_PROFILE_DIR: where the worker writes a --cpu-prof profile when it stops (to see where its time goes).
  const profileDir = process.env.BENCH_WORKER_PROFILE_DIR;
  const flags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const worker = await startService({ name: "worker", ...serviceCommand("worker", ctx.apiEnv, flags), logDir: ctx.logDir, ready: /"msg":"worker started"/ });
  return { available: true, endpoints, worker };
}

/** The queue baseline's task: known only to baselines/queue-worker.ts. */
export const QUEUE_BASELINE_TASK = "bench_post";
export const QUEUE_BASELINE_PATH = "/queue-baseline";

/** Runs `work` while a baseline delivery process (test/bench/baselines/<script>) runs, and only then: an idle one still polls. */
async function withBaseline<T>(
  ctx: BenchContext,
  name: string,
  script: string,
  env: Record<string, string>,
  work: (worker: Service) => Promise<T>,
): Promise<T> {
  const worker = await startService({
    name,
    args: ["--import", "tsx", `test/bench/baselines/${script}`],
    env: { DATABASE_URL: ctx.databaseUrl, ...env },
    logDir: ctx.logDir,
    ready: /"msg":"worker started"/,
  });
  try {
    return await work(worker);
  } finally {
    await worker.stop();
  }
}

/** Runs `work` while the queue baseline worker runs. */
export async function withQueueBaseline<T>(ctx: BenchContext, receiver: Receiver, work: (worker: Service) => Promise<T>): Promise<T> {
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  receiver.setSecret(QUEUE_BASELINE_PATH, secret);
  return withBaseline(ctx, "queue-baseline", "queue-worker.ts", { BENCH_SECRET: secret }, work);
}

/** The bare delivery loop's queue and record tables (baselines/bare-delivery-loop.ts), made anew for each run. */
export const BARE_TABLES = `
drop table if exists bench_bare_job, bench_bare_delivery;
create table bench_bare_job (id bigserial primary key, event_id uuid not null, claimed_at timestamptz);
create table bench_bare_delivery (event_id uuid, endpoint_id uuid, http_status int, attempted_at timestamptz not null default now(),
  primary key (event_id, endpoint_id))`;

/** Runs `work` while the bare delivery loop runs, posting to the endpoints of `endpoints` on the run's receiver. */
export async function withBareLoop<T>(ctx: BenchContext, receiver: Receiver, endpoints: Endpoint[], work: (worker: Service) => Promise<T>): Promise<T> {
  const secrets = Object.fromEntries(endpoints.map((e) => [receiver.url(e.path), e.secret]));
  return withBaseline(ctx, "bare-delivery-loop", "bare-delivery-loop.ts", { BARE_SECRETS: JSON.stringify(secrets) }, work);
}
