import type { Server } from "node:http";
import { parseArgs } from "node:util";
import type { Runner } from "graphile-worker";
import { type Config, ConfigError, loadConfig } from "../platform/config.js";
import { createLogger, type Logger } from "../platform/log.js";
import { type Started, startServices } from "../app.js";
import { schema } from "../graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../http/server.js";
import { createMetricsServer } from "../http/metrics.js";
import { drainServer } from "../http/drain.js";
import { startWorker } from "../../workers/runner.js";
import { demoBanner, ensureDemo } from "../modules/admin/demo.js";

/** Listens on `port`, or stops the start with one sentence naming the setting when the port cannot be had. */
async function listenOn(server: Server, port: number, host: string, setting: "PORT" | "METRICS_PORT"): Promise<number> {
  try {
    return await listen(server, port, host);
  } catch (e) {
    const code = e instanceof Error && "code" in e ? e.code : undefined;
    if (code === "EADDRINUSE")
      throw new ConfigError(`${setting} ${port} on ${host} is already in use: stop the process using it or set ${setting} to a free port.`);
    if (code === "EACCES") throw new ConfigError(`${setting} ${port} on ${host} needs privileges this process lacks: set ${setting} to a port above 1023.`);
    if (code === "EADDRNOTAVAIL") throw new ConfigError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses (or 0.0.0.0).`);
    throw e;
  }
}

/** A stop that takes too long ends the process anyway, with code 1. */
function exitIfStuck(config: Config, log: Logger): void {
  setTimeout(() => {
    log.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "shutdown timed out");
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
}

/**
 * Starts the role's HTTP side (the API, or a worker's metrics and health) and worker; returns their shutdown for
 * SIGTERM or SIGINT. A failure on the way stops what was started.
 */
async function serve(config: Config, log: Logger, started: Started): Promise<(signal: string) => Promise<void>> {
  const { services } = started;
  const role = config.ROLE;
  let worker: Runner | null = null;
  let workerRunning = false;
  let server: Server | null = null;
  let stopping = false;
  const stop = async () => {
    // Live event streams never finish on their own: end them so the server can drain.
    await services.storeEvents.close();
    await Promise.all([server?.listening && drainServer(server, config.SHUTDOWN_TIMEOUT_MS), worker?.stop()]);
    await started.close();
  };
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    exitIfStuck(config, log);
    await stop();
    log.info("stopped");
    process.exit(0);
  };

  try {
    const app = role === "worker" ? null : createHttpApp(services, schema);
    if (role !== "api") {
      worker = await startWorker(services, started.directUrl);
      workerRunning = true;
      void worker.promise.finally(() => (workerRunning = false)).catch(() => undefined);
    }
    if (app) {
      server = createHttpServer(app);
      const port = await listenOn(server, config.PORT, config.HOST, "PORT");
      const demo = config.DEMO ? await ensureDemo(services.db) : null;
      // To the terminal, not the JSON log on standard output: log collectors must never receive the secret.
      if (demo) process.stderr.write(demoBanner(config.PORT === port ? config.publicBaseUrl : `http://${config.HOST}:${port}`, demo));
      log.info({ port, host: config.HOST, role }, "listening");
    } else {
      server = createMetricsServer(services.metrics, services, () => workerRunning);
      const port = await listenOn(server, config.METRICS_PORT, config.HOST, config.METRICS_PORT === config.PORT ? "PORT" : "METRICS_PORT");
      log.info({ role, port, host: config.HOST, serves: ["/metrics", "/healthz", "/readyz"] }, "worker started");
    }
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
  return shutdown;
}

/** `npm start`: the API, the webhook worker, or both (default), per --role or ROLE. */
async function main(): Promise<void> {
  let role: string | undefined;
  try {
    role = parseArgs({ options: { role: { type: "string" } }, allowPositionals: false }).values.role;
  } catch (e) {
    throw new ConfigError(`${e instanceof Error ? e.message : String(e)}: the only option is --role api|worker|all.`);
  }
  const config = loadConfig({ ...process.env, ...(role ? { ROLE: role } : {}) });
  const log = createLogger(config.LOG_LEVEL);
  // A signal during the start is held until the start is done, then stops the service: killed at once, the process
  // would leave behind the embedded PostgreSQL it may have started.
  let shutdown: ((signal: string) => Promise<void>) | null = null;
  let early: string | null = null;
  const onSignal = (signal: string) => {
    if (shutdown) return void shutdown(signal);
    if (early) return;
    early = signal;
    log.info({ signal }, "stopping as soon as the start is done");
    exitIfStuck(config, log);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  shutdown = await serve(config, log, await startServices(config, log));
  if (early) await shutdown(early);
}

main().catch((e: unknown) => {
  // A setting that is wrong, or does not fit the database or the host: its sentence says what to change.
  if (e instanceof ConfigError) process.stderr.write(`${e.message}\n`);
  else process.stderr.write(`Failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
