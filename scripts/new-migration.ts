// Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL that takes the last committed
// prisma/schema.prisma (git HEAD) to the working one, from Prisma's WebAssembly schema engine (./schema-diff.ts).
// The diff is between two datamodels; the engine still opens a connection through the pg adapter, to DATABASE_URL or
// else a throwaway embedded PostgreSQL. Nothing is written to that database.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../src/platform/db/embedded.js";
import { createLogger } from "../src/platform/log.js";
import { diffSchemas } from "./schema-diff.js";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run migration:new -- <snake_case_name>");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "new-migration-"));
// As root, embedded PostgreSQL runs as a "postgres" user, which must be able to enter the directory.
chmodSync(scratch, 0o755);
// A schema committed before Prisma 7 names its URL in the datasource block, which Prisma 7 refuses (P1012).
const committed = execFileSync("git", ["show", "HEAD:prisma/schema.prisma"], { encoding: "utf8" }).replace(/^\s*url\s*=\s*env\("DATABASE_URL"\)\s*$/m, "");
const previous = { path: "previous.prisma", content: committed };
const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres(join(scratch, "pg"), createLogger("silent"));
try {
  const current = { path: "prisma/schema.prisma", content: readFileSync("prisma/schema.prisma", "utf8") };
  const sql = await diffSchemas(previous, current, process.env.DATABASE_URL ?? (embedded?.url as string));
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
