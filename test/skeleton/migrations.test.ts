import { afterAll, beforeAll, expect, it } from "vitest";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../../src/platform/db/migrate.js";

let url: string;
const name = `partner_migrate_${Date.now()}`;

beforeAll(async () => {
  const server = inject("serverUrl");
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const u = new URL(server);
  u.pathname = `/${name}`;
  url = u.toString();
});

afterAll(async () => {
  const c = new pg.Client({ connectionString: inject("serverUrl") });
  await c.connect();
  await c.query(`drop database if exists ${name} with (force)`);
  await c.end();
});

it("two processes migrating an empty database at once both succeed and apply each migration once", async () => {
  const [a, b] = await Promise.all([migrate(url), migrate(url)]);
  const all = (await readMigrations()).map((m) => m.name);
  // One process applied everything while the other waited on the lock, then found nothing to do.
  expect([a, b].sort((x, y) => x.length - y.length)).toEqual([[], all]);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query("select name, count(*)::int as n from _migrations group by name");
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) expect(r.n).toBe(1);
  const jobs = await c.query("select to_regclass('graphile_worker.jobs') as t");
  expect(jobs.rows[0].t).not.toBeNull();
  await c.end();
});

it("a second run applies nothing", async () => {
  expect(await migrate(url)).toEqual([]);
});

it("refuses to run when an applied migration file was changed", async () => {
  const dir = await mkdtemp(join(tmpdir(), "migrations-"));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  const first = (await readdir(dir)).sort()[0];
  await writeFile(join(dir, first, "migration.sql"), "-- edited\nselect 1;");
  const edited = await readMigrations(dir);
  expect(edited[0].checksum).not.toBe((await readMigrations())[0].checksum);
  await expect(migrate(url, undefined, dir)).rejects.toThrow(/was changed after it was applied/);
  await rm(dir, { recursive: true, force: true });
});
