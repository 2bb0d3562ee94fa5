import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/platform/db/embedded.js";
import { migrate } from "../../src/platform/db/migrate.js";
import { createLogger } from "../../src/platform/log.js";
import { buildPortal } from "../../scripts/build-portal.mjs";

/** What tests run as child processes, bundled by name: our CLIs and the lone worker (test/helpers/process.ts). */
const BUNDLES = {
  admin: "src/cli/admin.ts",
  listen: "src/cli/listen.ts",
  start: "src/cli/start.ts",
  "worker-process": "test/webhooks/worker-process.ts",
} as const;
export type BundleName = keyof typeof BUNDLES;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    templateDb: string;
    bundleDir: string;
  }
}

/** BUNDLES bundled as scripts/build.mjs bundles `npm start`'s, into a new directory of this run; answers it. */
async function bundle(): Promise<string> {
  // A process through the tsx loader spends about twice the CPU transforming sources, and tests start dozens. The
  // directory is the run's own (concurrent runs share dist/) and two levels below the root, as dist/cli/ is.
  await mkdir(join(ROOT, "dist"), { recursive: true });
  const bundleDir = await mkdtemp(join(ROOT, "dist", "test-bundles-"));
  await build({
    absWorkingDir: ROOT,
    entryPoints: BUNDLES,
    outdir: bundleDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    // Shared code goes to chunks, so a dynamic import stays lazy: the admin CLI answers --help without loading
    // the application's packages.
    splitting: true,
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return bundleDir;
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL's server when set (e.g. the local PostgreSQL 15),
 * otherwise an embedded one in a temporary directory. A migrated template database is cloned per test file; its
 * name is the run's own, so runs sharing one server (two checkouts, say) never drop each other's template.
 */
async function templateDatabase(): Promise<{ serverUrl: string; templateDb: string; stop: () => Promise<void> }> {
  let embedded: EmbeddedDatabase | null = null;
  let dir: string | null = null;
  let serverUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    serverUrl = process.env.TEST_DATABASE_URL;
  } else {
    dir = await mkdtemp(join(tmpdir(), "partner-test-pg-"));
    // A throwaway cluster needs no crash safety: without fsync every commit and CREATE DATABASE skips the disk flush.
    embedded = await startEmbeddedPostgres(dir, createLogger("silent"), { postgresFlags: ["-c", "fsync=off", "-c", "full_page_writes=off"] });
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
  return {
    serverUrl,
    templateDb,
    stop: async () => {
      if (!embedded) await onServer(`drop database if exists ${templateDb} with (force)`);
      if (embedded) await embedded.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // esbuild builds in a process of its own, so the bundles are made while PostgreSQL starts and migrates. The partner
  // portal the test servers serve (GET /portal) is built here, so that a fresh clone's `npm test` needs no
  // `npm start` first and no two test files rebuild it under each other.
  const [database, bundleDir] = await Promise.all([templateDatabase(), bundle(), buildPortal()]);
  project.provide("serverUrl", database.serverUrl);
  project.provide("templateDb", database.templateDb);
  project.provide("bundleDir", bundleDir);
  return async () => {
    await rm(bundleDir, { recursive: true, force: true });
    await database.stop();
  };
}
