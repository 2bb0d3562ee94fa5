import { loadConfig } from "../../../src/platform/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startServices } from "../../../src/app.js";
import { schema } from "../../../src/graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../../../src/http/server.js";
import { prismaRunner } from "./prisma-runner.js";

/**
 * Baseline (b): the service itself, the same routes through the same pipeline (token verification, the grant and
 * rate-limit statement, input validation, problem details, request logs and metrics), with the one thing the issue
 * takes away: GraphQL. The two benchmarked operations are answered by direct Prisma calls that send the statement
 * the façade's resolvers send (same include, orderings and relation load strategy). What separates it from the
 * façade is GraphQL execution and Pothos' selection planning, nothing else.
 */

const config = loadConfig(process.env);
const log = createLogger(config.LOG_LEVEL);
const { services, close } = await startServices(config, log, { migrate: false });
const server = createHttpServer(createHttpApp(services, schema, { runOperation: prismaRunner(services.db) }));
const port = await listen(server, config.PORT, config.HOST);
log.info({ port, host: config.HOST }, "listening");
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void close().finally(() => process.exit(0)));
});
