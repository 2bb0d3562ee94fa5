// Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL that takes the last committed
// prisma/schema.prisma (git HEAD) to the working one. Prisma's JS schema engine cannot introspect a live database
// here ("Column type 'name' could not be deserialized"), so the diff is between two datamodels; the engine still
// opens a connection through the adapter, to DATABASE_URL or else a throwaway embedded PostgreSQL. Nothing is written
// to that database.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../src/platform/db/embedded.js";
import { createLogger } from "../src/platform/log.js";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run migration:new -- <snake_case_name>");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "new-migration-"));
// As root, embedded PostgreSQL runs as a "postgres" user, which must be able to enter the directory.
chmodSync(scratch, 0o755);
const previous = join(scratch, "previous.prisma");
writeFileSync(previous, execFileSync("git", ["show", "HEAD:prisma/schema.prisma"], { encoding: "utf8" }));
const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres(join(scratch, "pg"), createLogger("silent"));
try {
  const sql = execFileSync(
    "npx",
    ["prisma", "migrate", "diff", "--from-schema-datamodel", previous, "--to-schema-datamodel", "prisma/schema.prisma", "--script"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL ?? embedded?.url } },
  );
  if (!/\S/.test(sql.replace(/^--.*$/gm, ""))) {
    console.error("prisma/schema.prisma does not differ from HEAD: nothing to migrate");
    process.exitCode = 1;
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
    const dir = `prisma/migrations/${stamp}_${name}`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/migration.sql`, sql);
    console.log(`wrote ${dir}/migration.sql`);
  }
} finally {
  await embedded?.stop();
  rmSync(scratch, { recursive: true, force: true });
}
