import { loadConfig } from "../../src/platform/config.js";
import { createLogger } from "../../src/platform/log.js";
import { startServices } from "../../src/app.js";
import { startWorker } from "../../workers/runner.js";

/**
 * A worker alone in its own process (like `npm start -- --role worker`), for the crash test to SIGKILL.
 * Configured by the environment; prints "ready" once it takes jobs.
 */
const config = loadConfig(process.env);
const started = await startServices(config, createLogger(config.LOG_LEVEL), { migrate: false });
await startWorker(started.services, started.directUrl);
process.stdout.write("ready\n");
