// Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that takes the database in
// DATABASE_URL (a scratch database migrated to the current state) to prisma/schema.prisma.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run migration:new -- <snake_case_name>   (DATABASE_URL: a migrated scratch database)");
  process.exit(2);
}
if (!process.env.DATABASE_URL) {
  console.error("DATABASE_URL must point at a scratch database migrated to the current migrations");
  process.exit(2);
}
const sql = execFileSync(
  "npx",
  ["prisma", "migrate", "diff", "--from-url", process.env.DATABASE_URL, "--to-schema-datamodel", "prisma/schema.prisma", "--script"],
  { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
);
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = `prisma/migrations/${stamp}_${name}`;
mkdirSync(dir, { recursive: true });
writeFileSync(`${dir}/migration.sql`, sql);
console.log(`wrote ${dir}/migration.sql`);
