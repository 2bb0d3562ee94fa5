import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { Logger as WorkerLogger, runMigrations as runWorkerMigrations } from "graphile-worker";
import type { Logger } from "../log.js";
import { PROJECT_ROOT } from "../root.js";
import { APPLIED_MIGRATION_NAMES, APPLIED_MIGRATIONS, LOCK_MIGRATIONS, RECORD_MIGRATION, UNLOCK_MIGRATIONS } from "./sql.js";

export const MIGRATIONS_DIR = join(PROJECT_ROOT, "prisma", "migrations");

const quietWorkerLogger = new WorkerLogger(() => () => undefined);

/** Any constant works; it only has to be the same in every process of this service. */
const MIGRATION_LOCK_ID = 724_001;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

/**
 * Applies prisma/migrations in name order, each in its own transaction, under an advisory lock so
 * processes starting together take turns. Prisma 7's `prisma migrate deploy` runs only its native schema engine,
 * which cannot be downloaded on these machines, hence this small migrator. A changed, already-applied file is an error:
 * migrations are append-only. graphile-worker's own schema is migrated under the same lock.
 */
export async function migrate(connectionString: string, log?: Logger, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query(LOCK_MIGRATIONS, [MIGRATION_LOCK_ID]);
    await client.query(`create table if not exists _migrations (
      name text primary key, checksum text not null, applied_at timestamptz not null default now())`);
    const { rows } = await client.query<{ name: string; checksum: string }>(APPLIED_MIGRATIONS);
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const m of migrations) {
      const previous = done.get(m.name);
      if (previous !== undefined) {
        if (previous !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      await client.query("begin");
      try {
        await client.query(m.sql);
        await client.query(RECORD_MIGRATION, [m.name, m.checksum]);
        await client.query("commit");
      } catch (e) {
        await client.query("rollback");
        throw new Error(`migration ${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.name);
      log?.info({ migration: m.name }, "migration applied");
    }
    await runWorkerMigrations({ connectionString, logger: quietWorkerLogger });
  } finally {
    await client.query(UNLOCK_MIGRATIONS, [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
  return applied;
}

// The files ship with the process: read them once, not on every readiness probe.
let expectedMigrations: Promise<Migration[]> | null = null;

/** True when every migration file has been applied (used by /readyz). */
export async function migrationsApplied(query: (sql: string) => Promise<{ rows: { name: string }[] }>): Promise<boolean> {
  expectedMigrations ??= readMigrations();
  const expected = await expectedMigrations;
  const { rows } = await query(APPLIED_MIGRATION_NAMES);
  const have = new Set(rows.map((r) => r.name));
  return expected.every((m) => have.has(m.name));
}
