import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/platform/db/embedded.js";
import { migrate } from "../../src/platform/db/migrate.js";
import { createLogger } from "../../src/platform/log.js";

export const TEMPLATE_DB = "partner_test_template";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
  }
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL's server when set (e.g. the local PostgreSQL 15),
 * otherwise an embedded one in a temporary directory. A migrated template database is cloned per test file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let embedded: EmbeddedDatabase | null = null;
  let dir: string | null = null;
  let serverUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    serverUrl = process.env.TEST_DATABASE_URL;
  } else {
    dir = await mkdtemp(join(tmpdir(), "partner-test-pg-"));
    embedded = await startEmbeddedPostgres(dir, createLogger("silent"));
    serverUrl = embedded.url;
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DB} with (force)`);
  await admin.query(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${TEMPLATE_DB}`;
  await migrate(templateUrl.toString());
  project.provide("serverUrl", serverUrl);
  return async () => {
    if (embedded) await embedded.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
}
