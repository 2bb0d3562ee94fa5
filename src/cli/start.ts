import { parseArgs } from "node:util";
import { type Config, ConfigError, loadConfig } from "../platform/config.js";
import { createLogger } from "../platform/log.js";
import { startServices } from "../app.js";
import { schema } from "../graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../http/server.js";
import { createMetricsServer, Metrics } from "../http/metrics.js";
import { drainServer } from "../http/drain.js";
import { startWorker } from "../../workers/runner.js";
import { demoBanner, ensureDemo } from "../modules/admin/demo.js";

/** `npm start`: the API, the webhook worker, or both (default), per --role or ROLE. */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { role: { type: "string" } }, allowPositionals: false });
  let config: Config;
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
    setTimeout(() => {
      log.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "shutdown timed out");
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
    // Live event streams never finish on their own: end them so the server can drain.
    await services.storeEvents.close();
    await Promise.all([server && drainServer(server, config.SHUTDOWN_TIMEOUT_MS), worker?.stop()]);
    await started.close();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  const app = role === "worker" ? null : createHttpApp(services, schema);
  const metrics = app?.metrics ?? new Metrics(services.pool, log);
  if (role !== "api") worker = await startWorker(services, started.databaseUrl, metrics);
  if (app) {
    server = createHttpServer(app);
    const port = await listen(server, config.PORT, config.HOST);
    const demo = await ensureDemo(services.db);
    if (demo) process.stdout.write(demoBanner(config.PORT === port ? config.publicBaseUrl : `http://${config.HOST}:${port}`, demo));
    log.info({ port, host: config.HOST, role }, "listening");
  } else {
    log.info({ role }, "worker started");
    if (config.METRICS_PORT !== undefined) {
      server = createMetricsServer(metrics, config);
      const port = await listen(server, config.METRICS_PORT, config.HOST);
      log.info({ port, host: config.HOST }, "serving /metrics and /healthz");
    }
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`Failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
