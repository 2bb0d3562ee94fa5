import type pg from "pg";
import type { Logger } from "../log.js";
import { redisScript, type SharedRedis } from "../redis.js";
import type { Principal } from "../auth/principal.js";
import { createPrisma, type Db } from "./prisma.js";
import { createPool } from "./pool.js";
import { MARK_WRITE, PRIMARY_WAL_POSITION, REPLAY_POSITION, WRITE_MARKS } from "./replica-sql.js";
import { batchStatements } from "./batch.js";

/**
 * Where each process finds a writer's latest write: its WAL position on the primary, recorded after the write
 * committed and before its response left, so any process's next read for that writer can pick a replica that has
 * replayed it.
 */
export interface WriteMarks {
  mark(writer: string): Promise<void>;
  lastWrite(writer: string): Promise<bigint | null>;
}

const lsnOf = (rows: { lsn: string | null }[]): bigint | null => (rows[0]?.lsn == null ? null : BigInt(rows[0].lsn));

/**
 * Marks in the WriteMark table on the primary: one upsert per write, and one primary-key read per read, batched:
 * the reads that start in the same tick look up their writers in one statement (measured under 16 concurrent
 * readers, this is most of what a read still costs the primary).
 */
export function postgresWriteMarks(primary: pg.Pool): WriteMarks {
  const lookups = batchStatements<string, bigint | null>(async (writers) => {
    const { rows } = await primary.query<{ writer: string; lsn: string }>({ name: "write_marks_get", text: WRITE_MARKS, values: [[...new Set(writers)]] });
    const found = new Map(rows.map((r) => [r.writer, BigInt(r.lsn)]));
    return writers.map((w) => found.get(w) ?? null);
  });
  return {
    mark: async (writer) => {
      await primary.query({ name: "write_mark_set", text: MARK_WRITE, values: [writer] });
    },
    lastWrite: (writer) => lookups.load(writer),
  };
}

/**
 * Sets a mark unless a later one is there (concurrent writes of one writer may record out of order). Positions are
 * decimal strings: the longer is the later, and of equal length the one that sorts later. A mark outlives any
 * replica lag that could still hide its write (REPLICA_MAX_LAG_MS), then expires.
 */
const MARK_SCRIPT = redisScript(`local c = redis.call('GET', KEYS[1])
if (not c) or (#c < #ARGV[1]) or (#c == #ARGV[1] and c < ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`);

/** Marks in Redis (REDIS_URL): the WAL position still comes from the primary, but the primary stores nothing. */
export async function redisWriteMarks(redis: SharedRedis, primary: pg.Pool, ttlMs: number): Promise<WriteMarks> {
  const commands = await redis.use("reads go to the primary");
  return {
    mark: async (writer) => {
      const lsn = lsnOf((await primary.query<{ lsn: string }>({ name: "wal_position", text: PRIMARY_WAL_POSITION })).rows);
      if (lsn === null) return;
      await commands.run(MARK_SCRIPT, [`write-mark:${writer}`], [lsn.toString(), String(ttlMs)]);
    },
    lastWrite: async (writer) => {
      const value = await commands.get(`write-mark:${writer}`);
      return value === null ? null : BigInt(value);
    },
  };
}

/** Why a read went to the primary although replicas are configured. */
export const FALLBACK_REASONS = ["unavailable", "lagging", "behind_write", "marks_unavailable", "failed"] as const;
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

interface Replica {
  /** host:port/database, for logs and metric labels (never the password). */
  name: string;
  pool: pg.Pool;
  db: Db;
  /** The pool's own query, for probes: they must fail rather than fall back to the primary. */
  probe: () => Promise<bigint | null>;
  replayed: bigint | null;
  /** When a probe last answered (ms since the epoch); 0 before the first. */
  answeredAt: number;
  probing: boolean;
  up: boolean;
  lagMs: number;
  reads: number;
}

/** The name a replica URL is shown by: its address and database, without credentials. */
export function replicaName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

/** Who wrote, for read-your-writes: an Application (all its tokens), or an admin key; null for no one. */
function writerOf(principal: Principal): string | null {
  if (principal.kind === "partner") return `app:${principal.applicationId}`;
  if (principal.kind === "admin") return `admin:${principal.adminKeyId ?? "ADMIN_API_KEY"}`;
  return null;
}

/**
 * Errors that say the replica, not the statement, failed: no connection (a node error code, not an SQLSTATE),
 * connection exceptions (08), operator intervention such as a shutdown (57), insufficient resources (53), system
 * errors (58) and internal errors (XX). The replica is then skipped until a probe answers again.
 */
function replicaFailed(err: unknown): boolean {
  const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return /^(08|53|57|58|XX)/.test(code);
}

/**
 * Sends reads to streaming replicas (DATABASE_REPLICA_URLS) without letting a caller miss its own writes.
 *
 * Every REPLICA_POLL_MS the process samples the primary's WAL position and asks each replica how far it has
 * replayed. A replica's lag is the age of the oldest primary sample it has not replayed yet: 0 while it keeps up,
 * however long ago the last write was, and growing from the first unreplayed write when replay stalls. A read goes to
 * a replica that answered lately, lags at most REPLICA_MAX_LAG_MS and has replayed the caller's latest write (its
 * WriteMarks position); when the polled positions say none has, the most advanced one is asked once more before the
 * read falls back to the primary. A read that fails on a replica runs again on the primary, so reads never fail for
 * a replica; the replica is skipped until its next probe answers.
 *
 * With no replicas configured, `readDb` answers the primary (null) and nothing is polled or recorded.
 */
export class ReadRouter {
  private readonly replicas: Replica[];
  private readonly samples: { lsn: bigint; at: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sampling = false;
  private next = 0;
  private marksFailing = false;
  readonly stats = {
    primaryReads: 0,
    fallbacks: Object.fromEntries(FALLBACK_REASONS.map((r) => [r, 0])) as Record<FallbackReason, number>,
  };

  constructor(
    private readonly primary: pg.Pool,
    replicaUrls: readonly string[],
    private readonly marks: WriteMarks | null,
    private readonly opts: {
      maxLagMs: number;
      pollMs: number;
      poolSize: number;
      connectionTimeoutMs: number;
      queryTimeoutMs: number;
      preparedStatements: boolean;
    },
    private readonly log: Logger,
  ) {
    this.replicas = replicaUrls.map((url) => this.openReplica(url));
  }

  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  private openReplica(url: string): Replica {
    const name = replicaName(url);
    const pool = createPool(url, {
      max: this.opts.poolSize,
      connectionTimeoutMs: this.opts.connectionTimeoutMs,
      log: this.log,
      preparedStatements: this.opts.preparedStatements,
      applicationName: "partner-api replica reads",
      // A timed-out statement's connection is released with its error, so the pool closes it.
      queryTimeoutMs: this.opts.queryTimeoutMs,
    });
    const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult<{ lsn: string | null }>>;
    const replica: Replica = {
      name,
      pool,
      db: createPrisma(pool, { maxWaitMs: this.opts.connectionTimeoutMs }),
      probe: () => {
        // A replica that stops answering (a hung host, not a refused connection) must not hold a poll, or a read
        // waiting on a fresh probe, for longer than it takes to be judged silent.
        const ask = query({ name: "replay_position", text: REPLAY_POSITION }).then((r) => lsnOf(r.rows));
        let timer: NodeJS.Timeout | undefined;
        const silent = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.silentAfterMs} ms`)), this.silentAfterMs);
        });
        return Promise.race([ask, silent]).finally(() => clearTimeout(timer));
      },
      replayed: null,
      answeredAt: 0,
      probing: false,
      up: false,
      lagMs: 0,
      reads: 0,
    };
    // Prisma's reads reach the pool as promise-form pool.query calls: one that fails runs again on the primary.
    const onPrimary = this.primary.query.bind(this.primary) as (...args: unknown[]) => Promise<unknown>;
    const onReplica = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    pool.query = ((...args: unknown[]) =>
      onReplica(...args).catch((err: unknown) => {
        this.stats.fallbacks.failed++;
        if (replicaFailed(err) && replica.up) {
          replica.up = false;
          this.log.warn({ replica: name, err }, "read replica failed: its reads go to the primary until it answers again");
        }
        return onPrimary(...args);
      })) as typeof pool.query;
    return replica;
  }

  /** Starts polling the primary and the replicas. */
  start(): void {
    if (!this.enabled || this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.opts.pollMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (!this.sampling) {
      this.sampling = true;
      try {
        const { rows } = await this.primary.query<{ lsn: string }>({ name: "wal_position", text: PRIMARY_WAL_POSITION });
        const lsn = lsnOf(rows);
        const now = Date.now();
        if (lsn !== null) this.samples.push({ lsn, at: now });
        // Past this age an unreplayed sample already makes a replica too late; older ones decide nothing.
        const keepFrom = now - this.opts.maxLagMs - 10 * this.opts.pollMs;
        while (this.samples.length > 1 && this.samples[0].at < keepFrom) this.samples.shift();
      } catch {
        // The primary is unreachable: requests report it; lags keep their last values.
      } finally {
        this.sampling = false;
      }
    }
    for (const r of this.replicas) void this.poll(r);
  }

  private async poll(r: Replica): Promise<void> {
    if (r.probing) return;
    r.probing = true;
    try {
      const replayed = await r.probe();
      if (replayed === null) {
        // Not in recovery: a promoted replica (or the primary's own URL) is no replica to follow the primary with.
        if (r.up) this.log.warn({ replica: r.name }, "read replica is not in recovery (promoted?): skipped");
        r.up = false;
        return;
      }
      if (!r.up) this.log.info({ replica: r.name }, "read replica answers: reads go to it again");
      r.replayed = replayed;
      r.answeredAt = Date.now();
      r.up = true;
      const behind = this.samples.find((s) => s.lsn > replayed);
      r.lagMs = behind ? r.answeredAt - behind.at : 0;
    } catch (err) {
      if (r.up) this.log.warn({ replica: r.name, err }, "read replica unreachable: its reads go to the primary until it answers again");
      r.up = false;
    } finally {
      r.probing = false;
    }
  }

  /** How long a replica may go without answering a probe before it takes no reads. */
  private get silentAfterMs(): number {
    return Math.max(1000, 5 * this.opts.pollMs);
  }

  /** A replica that answered lately (a hung one stops answering) and keeps up. */
  private usable(r: Replica, now: number): boolean {
    return r.up && now - r.answeredAt <= this.silentAfterMs && r.lagMs <= this.opts.maxLagMs;
  }

  private toPrimary(reason: FallbackReason): null {
    this.stats.fallbacks[reason]++;
    this.stats.primaryReads++;
    return null;
  }

  /**
   * Where `principal`'s read runs: the client of a replica that has its latest write, or null for the primary (the
   * caller's own client, `services.db`).
   */
  async readDb(principal: Principal): Promise<Db | null> {
    if (!this.enabled) return null;
    const now = Date.now();
    const candidates = this.replicas.filter((r) => this.usable(r, now));
    if (candidates.length === 0) return this.toPrimary(this.replicas.some((r) => r.up) ? "lagging" : "unavailable");
    const writer = writerOf(principal);
    let mark: bigint | null = null;
    if (writer && this.marks) {
      try {
        mark = await this.marks.lastWrite(writer);
        this.marksFailing = false;
      } catch (err) {
        // Once per outage: every read would say it again.
        if (!this.marksFailing) this.log.warn({ err }, "cannot read the callers' last write positions: reads go to the primary until they can");
        this.marksFailing = true;
        return this.toPrimary("marks_unavailable");
      }
    }
    const fresh = mark === null ? candidates : candidates.filter((r) => r.replayed !== null && r.replayed >= mark);
    if (fresh.length > 0) return this.use(fresh[this.next++ % fresh.length]);
    // The last poll is up to REPLICA_POLL_MS old and a write just made is usually replayed within a millisecond:
    // ask the most advanced replica again rather than send every read after a write to the primary.
    const best = candidates.reduce((a, b) => ((a.replayed ?? 0n) >= (b.replayed ?? 0n) ? a : b));
    try {
      const replayed = await best.probe();
      if (replayed !== null && mark !== null && replayed >= mark) {
        if (best.replayed === null || replayed > best.replayed) best.replayed = replayed;
        return this.use(best);
      }
    } catch {
      // Its next poll decides whether it is down; this read goes to the primary.
    }
    return this.toPrimary("behind_write");
  }

  private use(r: Replica): Db {
    r.reads++;
    return r.db;
  }

  /** Records that `principal` wrote: call after its write committed and before answering it. */
  async wrote(principal: Principal): Promise<void> {
    const writer = writerOf(principal);
    if (!this.enabled || !this.marks || !writer) return;
    try {
      await this.marks.mark(writer);
    } catch (err) {
      // The write stands; without its mark a read on another process could miss it until replicas catch up.
      this.log.warn({ err }, "could not record the write's position for read-your-writes");
    }
  }

  /** Each replica's state, for /metrics. */
  get replicaStates(): { name: string; up: boolean; lagMs: number; reads: number }[] {
    return this.replicas.map((r) => ({ name: r.name, up: this.usable(r, Date.now()), lagMs: r.lagMs, reads: r.reads }));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(this.replicas.map((r) => r.db.$disconnect()));
  }
}
