import { EventEmitter } from "node:events";
import pg from "pg";
import type { WorkerEvents } from "graphile-worker";
import type { Services } from "../src/services.js";

/**
 * graphile-worker leaves the jobs of a worker that died without shutting down (SIGKILL, OOM, power loss)
 * locked for four hours. So each worker pool of ours holds a session advisory lock named after its pool id,
 * on a connection of its own, which PostgreSQL releases the moment the process dies. Every worker sweeps at
 * start and then periodically: a pool that still has jobs locked but whose advisory lock is free is dead, and
 * `force_unlock_workers` hands its jobs to whoever is alive. Re-running them is safe: fan-out is idempotent
 * and a delivery attempt is leased (src/webhooks/attempt.ts). Assumes every worker runs through startWorker.
 */

/** Namespace (first key) of the liveness advisory locks. */
const LOCK_CLASS = 0x5747_4b52;
/** A new pool may lock its first jobs a moment before its liveness lock is granted; never judge it that early. */
const GRACE = "2 seconds";
const RECOVERY_INTERVAL_MS = 5000;

export interface CrashRecovery {
  /** Pass to graphile-worker's `run` so each new pool takes its liveness lock. */
  events: WorkerEvents;
  stop(): Promise<void>;
}

/** Unlocks the jobs of pools that are gone; returns their ids. */
async function recoverAbandonedJobs(pool: pg.Pool, ownPools: ReadonlySet<string>): Promise<string[]> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ lockedBy: string }>(
      `select distinct locked_by as "lockedBy" from graphile_worker.jobs where locked_by is not null and locked_at < now() - interval '${GRACE}'`,
    );
    const dead: string[] = [];
    for (const { lockedBy } of rows) {
      if (ownPools.has(lockedBy)) continue;
      const { rows: probe } = await client.query<{ free: boolean }>("select pg_try_advisory_lock($1, hashtext($2)) as free", [LOCK_CLASS, lockedBy]);
      if (!probe[0].free) continue;
      await client.query("select pg_advisory_unlock($1, hashtext($2))", [LOCK_CLASS, lockedBy]);
      dead.push(lockedBy);
    }
    if (dead.length > 0) await client.query("select graphile_worker.force_unlock_workers($1::text[])", [dead]);
    return dead;
  } finally {
    client.release();
  }
}

export async function startCrashRecovery(services: Services, databaseUrl: string): Promise<CrashRecovery> {
  const log = services.log.child({ component: "crash-recovery" });
  const liveness = new pg.Client({ connectionString: databaseUrl, application_name: "worker-liveness" });
  liveness.on("error", (err) => log.error({ err }, "liveness connection lost: other workers will treat this one as dead and re-run its jobs"));
  await liveness.connect();

  const ownPools = new Set<string>();
  const events: WorkerEvents = new EventEmitter();
  events.on("pool:create", ({ workerPool }) => {
    ownPools.add(workerPool.id);
    liveness.query("select pg_advisory_lock($1, hashtext($2))", [LOCK_CLASS, workerPool.id]).catch((err: unknown) => log.error({ err }, "could not take the liveness lock"));
  });

  const sweep = (): void => {
    recoverAbandonedJobs(services.pool, ownPools)
      .then((pools) => {
        if (pools.length > 0) log.warn({ pools }, "re-queued the jobs of workers that died mid-job");
      })
      .catch((err: unknown) => log.error({ err }, "crash recovery sweep failed"));
  };
  sweep();
  const timer = setInterval(sweep, RECOVERY_INTERVAL_MS);
  timer.unref();

  return {
    events,
    async stop() {
      clearInterval(timer);
      await liveness.end().catch(() => undefined);
    },
  };
}
