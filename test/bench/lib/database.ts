import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { startEmbeddedPostgres } from "../../../src/platform/db/embedded.js";
import { migrate } from "../../../src/platform/db/migrate.js";
import { createLogger } from "../../../src/platform/log.js";
import { treeCpuSeconds } from "./processes.js";
import { makeReplica } from "../../helpers/replication.js";

export interface BenchDatabase {
  /** The fresh, migrated database every process of the run uses. */
  url: string;
  /** Where it runs, for the report. */
  description: string;
  /** CPU seconds the database server has used so far (embedded only: a server named by URL may be shared or remote). */
  cpuSeconds?: () => number;
  /** Makes and starts a streaming replica of it (embedded, opened with `replication`), stopped by close. */
  replica?: () => Promise<BenchReplica>;
  close(): Promise<void>;
}

export interface BenchReplica {
  url: string;
  /** CPU seconds the replica server has used so far. */
  cpuSeconds: () => number;
}

/**
 * Server settings for the embedded cluster: reads stay in memory (the machine has RAM to spare), checkpoints do
 * not interrupt the data load, and index builds skip WAL (wal_level=minimal). Settings that change commit latency
 * (fsync, synchronous_commit) stay at their defaults, because the delivery benchmarks measure commits.
 */
const EMBEDDED_SETTINGS: [string, string][] = [
  ["shared_buffers", "1GB"],
  ["effective_cache_size", "4GB"],
  ["max_connections", "300"],
  ["max_wal_size", "8GB"],
  ["checkpoint_timeout", "30min"],
  ["maintenance_work_mem", "512MB"],
  ["wal_level", "minimal"],
  ["max_wal_senders", "0"],
  ["jit", "off"],
];

/** What a primary with a replica needs instead of wal_level=minimal (which keeps no WAL a replica could replay). */
const REPLICATION_SETTINGS: [string, string][] = [
  ["wal_level", "replica"],
  ["max_wal_senders", "5"],
];

/** The replica's own: it serves the same reads from memory as the primary does. */
const REPLICA_SETTINGS = ["shared_buffers = 1GB", "effective_cache_size = 4GB", "max_connections = 300", "jit = off"];

/**
 * A fresh database for one run: on BENCH_DATABASE_URL's server when set (a new database beside the one named,
 * dropped at the end), otherwise on an embedded PostgreSQL in a temporary directory, removed at the end.
 * Migrated with the project's own migrator, as `npm start` does.
 */
export async function openBenchDatabase(opts: { replication?: boolean } = {}): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) {
    if (opts.replication) throw new Error("--replica needs the embedded database (BENCH_DATABASE_URL's server cannot be copied here)");
    const name = `partner_bench_${randomBytes(4).toString("hex")}`;
    await adminQuery(given, `create database ${name}`);
    const url = new URL(given);
    url.pathname = `/${name}`;
    const close = () => adminQuery(given, `drop database if exists ${name} with (force)`);
    await migrate(url.toString()).catch(async (e: unknown) => {
      await close();
      throw e;
    });
    return { url: url.toString(), description: `PostgreSQL at ${url.host} (BENCH_DATABASE_URL)`, close };
  }
  const dir = await mkdtemp(join(tmpdir(), "partner-bench-pg-"));
  let stop = async (): Promise<void> => undefined;
  let stopReplica = async (): Promise<void> => undefined;
  const close = async () => {
    await stopReplica().catch(() => undefined);
    await stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const settings = opts.replication
      ? EMBEDDED_SETTINGS.map(([k, v]): [string, string] => [k, REPLICATION_SETTINGS.find(([r]) => r === k)?.[1] ?? v])
      : EMBEDDED_SETTINGS;
    const flags = settings.flatMap(([k, v]) => ["-c", `${k}=${v}`]);
    const embedded = await startEmbeddedPostgres(dir, createLogger("silent"), { postgresFlags: flags });
    stop = embedded.stop;
    await migrate(embedded.url);
    const version = await serverVersion(embedded.url);
    const shown = settings.filter(([k]) => ["shared_buffers", "wal_level"].includes(k)).map(([k, v]) => `${k}=${v}`);
    const postmaster = Number((await readFile(join(dir, "pg", "postmaster.pid"), "utf8")).split("\n")[0]);
    const url = new URL(embedded.url);
    const replica = async (): Promise<BenchReplica> => {
      const server = await makeReplica({
        primaryDir: join(dir, "pg"),
        adminUrl: embedded.url,
        conninfo: `host=127.0.0.1 port=${url.port} user=${url.username} password=${decodeURIComponent(url.password)}`,
        dir: join(dir, "replica"),
        settings: REPLICA_SETTINGS,
        password: decodeURIComponent(url.password),
      });
      stopReplica = () => server.stop("fast");
      const pid = await server.pid();
      return { url: server.url(url.pathname.slice(1)), cpuSeconds: () => treeCpuSeconds(pid) };
    };
    return {
      url: embedded.url,
      description: `embedded PostgreSQL ${version} (${shown.join(", ")}, fsync and synchronous_commit on)`,
      cpuSeconds: () => treeCpuSeconds(postmaster),
      ...(opts.replication ? { replica } : {}),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>("show server_version");
    return rows[0].server_version.split(" ")[0];
  } finally {
    await client.end();
  }
}

/** Runs one statement on its own connection (database creation, a vacuum between modules). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
