import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/platform/db/embedded.js";
import { migrate } from "../../src/platform/db/migrate.js";
import { createLogger } from "../../src/platform/log.js";
import { buildPortal } from "../../scripts/build-portal.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    templateDb: string;
  }
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL's server when set (e.g. the local PostgreSQL 15),
 * otherwise an embedded one in a temporary directory. A migrated template database is cloned per test file; its
 * name is the run's own, so runs sharing one server (two checkouts, say) never drop each other's template.
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
  const templateDb = `partner_test_template_${process.pid}`;
  const onServer = async (sql: string) => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  await onServer(`drop database if exists ${templateDb} with (force)`);
  await onServer(`create database ${templateDb}`);
  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${templateDb}`;
  await migrate(templateUrl.toString());
  // The partner portal the test servers serve (GET /portal): built once here, so that a fresh clone's `npm test` needs
  // no `npm start` first and no two test files rebuild it under each other.
  await buildPortal();
  project.provide("serverUrl", serverUrl);
  project.provide("templateDb", templateDb);
  return async () => {
    if (!embedded) await onServer(`drop database if exists ${templateDb} with (force)`);
    if (embedded) await embedded.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
}
