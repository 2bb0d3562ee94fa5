import type { Server } from "node:http";
import { loadConfig } from "../../src/platform/config.js";
import { createLogger } from "../../src/platform/log.js";
import { startServices, type Started } from "../../src/app.js";
import { schema } from "../../src/graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import type { Services } from "../../src/platform/services.js";
import { createTestDatabase } from "./database.js";

type TestDatabase = Awaited<ReturnType<typeof createTestDatabase>>;

export interface TestApp {
  baseUrl: string;
  services: Services;
  databaseUrl: string;
  database: TestDatabase;
  started: Started;
  /** Stops the service and keeps its database, to start it again there (`startTestApp(env, { port, database })`). */
  stop(): Promise<void>;
  /** Stops the service and drops its database. */
  close(): Promise<void>;
}

/**
 * The real service on 127.0.0.1 (random port) over a database of its own; with `port` and `database`, started again
 * where an earlier one stopped, as a restart.
 */
export async function startTestApp(env: Record<string, string> = {}, at: { port?: number; database?: TestDatabase } = {}): Promise<TestApp> {
  const database = at.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ADMIN_API_KEY: "adm_test_admin_key_0123456789",
    PUBLIC_BASE_URL: "http://api.test.local",
    DB_POOL_SIZE: "5",
    // Tests send bursts on a busy machine; a short admission queue would shed some. Shedding is tested on its own.
    HTTP_MAX_QUEUED: "1000",
    HTTP_QUEUE_TIMEOUT_MS: "30000",
    ...env,
  });
  const started = await startServices(config, createLogger(config.LOG_LEVEL), { migrate: false });
  const server: Server = createHttpServer(createHttpApp(started.services, schema));
  const port = await listen(server, at.port ?? 0, "127.0.0.1");
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((res) => server.close(() => res()));
    await started.close();
  };
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    services: started.services,
    databaseUrl: database.url,
    database,
    started,
    stop,
    async close() {
      await stop();
      await database.drop();
    },
  };
}
