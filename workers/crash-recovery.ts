import { EventEmitter } from "node:events";
import pg from "pg";
import type { WorkerEvents } from "graphile-worker";
import type { Services } from "../src/platform/services.js";
import type { Logger } from "../src/platform/log.js";
import { FORCE_UNLOCK_WORKERS, HOLD_LIVENESS_LOCK, POOLS_HOLDING_JOBS, TRY_LIVENESS_LOCK } from "./sql.js";

/**
 * graphile-worker leaves the jobs of a worker that died without shutting down (SIGKILL, OOM, power loss)
 * locked for four hours. So each worker pool of ours holds a session advisory lock named after its pool id,
 * on a connection of its own, which PostgreSQL releases the moment the process dies. Every worker sweeps at
 * start and then periodically: a pool that still has jobs locked but whose advisory lock is free is dead, and
 * `force_unlock_workers` hands its jobs to whoever is alive. Re-running them is safe: fan-out is idempotent
 * and a delivery attempt is leased (src/modules/webhooks/delivery/prepare.ts). Assumes every worker runs through startWorker.
 */

/** Namespace (first key) of the liveness advisory locks. */
export const LOCK_CLASS = 0x5747_4b52;
const RECOVERY_INTERVAL_MS = 5000;
/** Backoff of the liveness connection's reconnects: from this, doubling, up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

export interface CrashRecovery {
  /** Pass to graphile-worker's `run` so each new pool takes its liveness lock. */
  events: WorkerEvents;
  stop(): Promise<void>;
}

/** Unlocks the jobs of pools that are gone; returns their ids. */
async function recoverAbandonedJobs(pool: pg.Pool, ownPools: ReadonlySet<string>): Promise<string[]> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ lockedBy: string }>(POOLS_HOLDING_JOBS);
    const dead: string[] = [];
    for (const { lockedBy } of rows) {
      if (ownPools.has(lockedBy)) continue;
      const { rows: probe } = await client.query<{ free: boolean }>(TRY_LIVENESS_LOCK, [LOCK_CLASS, lockedBy]);
      if (!probe[0].free) continue;
      dead.push(lockedBy);
    }
    if (dead.length > 0) await client.query(FORCE_UNLOCK_WORKERS, [dead]);
    return dead;
  } finally {
    client.release();
  }
}

/**
 * The connection holding this process's liveness locks. When it drops (a database restart, a failover,
 * `pg_terminate_backend`), PostgreSQL frees the locks and other workers would soon re-run this one's jobs; so it
 * reconnects, with backoff, and takes the lock of every pool again.
 */
class Liveness {
  private client: pg.Client | null = null;
  private readonly pools = new Set<string>();
  private retryMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  /** Connects; throws when it cannot, so a worker does not start without its liveness connection. */
  start(): Promise<void> {
    return this.connect();
  }

  hold(poolId: string): void {
    this.pools.add(poolId);
    // While reconnecting, the new connection takes it with the others.
    if (this.client) lock(this.client, poolId).catch((err: unknown) => this.log.error({ err }, "could not take the liveness lock"));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: "worker-liveness" });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      // A pool added during this loop is still visited: a Set's iteration includes later additions.
      for (const id of this.pools) await lock(client, id);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || client !== this.client) return;
    this.client = null;
    this.log.error({ err }, "liveness connection lost: other workers may treat this one as dead and re-run its jobs; reconnecting");
    client.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    this.timer = setTimeout(() => {
      this.connect().then(
        () => {
          this.retryMs = RECONNECT_MIN_MS;
          if (this.stopped) void this.stop();
          else this.log.info({ pools: [...this.pools] }, "liveness connection back: locks retaken");
        },
        (err: unknown) => {
          if (this.stopped) return;
          this.log.warn({ err, retryMs: this.retryMs }, "liveness connection: reconnect failed; retrying");
          this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
          this.reconnect();
        },
      );
    }, this.retryMs);
  }
}

function lock(client: pg.Client, poolId: string): Promise<unknown> {
  return client.query(HOLD_LIVENESS_LOCK, [LOCK_CLASS, poolId]);
}

export async function startCrashRecovery(services: Services, databaseUrl: string): Promise<CrashRecovery> {
  const log = services.log.child({ component: "crash-recovery" });
  const liveness = new Liveness(databaseUrl, log);
  await liveness.start();

  const ownPools = new Set<string>();
  const events: WorkerEvents = new EventEmitter();
  events.on("pool:create", ({ workerPool }) => {
    ownPools.add(workerPool.id);
    liveness.hold(workerPool.id);
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
      await liveness.stop();
    },
  };
}
