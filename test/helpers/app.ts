import type { Server } from "node:http";
import { loadConfig } from "../../src/platform/config.js";
import { createLogger } from "../../src/platform/log.js";
import { startServices, type Started } from "../../src/app.js";
import { schema } from "../../src/graphql/schema.js";
import { createHttpApp, createHttpServer, listen } from "../../src/http/server.js";
import type { Services } from "../../src/platform/services.js";
import { createTestDatabase } from "./database.js";

export interface TestApp {
  baseUrl: string;
  services: Services;
  databaseUrl: string;
  started: Started;
  close(): Promise<void>;
}

/** The real service on 127.0.0.1 (random port) over a database of its own. */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
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
  const port = await listen(server, 0, "127.0.0.1");
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    services: started.services,
    databaseUrl: database.url,
    started,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((res) => server.close(() => res()));
      await started.close();
      await database.drop();
    },
  };
}
