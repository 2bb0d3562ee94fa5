import { readFileSync } from "node:fs";
import { expect, inject, it } from "vitest";
import { diffSchemas } from "../../scripts/schema-diff.js";

/**
 * `npm run migration:new` writes a migration's SQL with Prisma's WebAssembly schema engine (scripts/schema-diff.ts),
 * since Prisma 7's CLI needs a native engine these machines cannot download. The engine build must match the
 * installed Prisma; this fails when they drift apart, before anyone needs a migration.
 */
const schema = { path: "prisma/schema.prisma", content: readFileSync("prisma/schema.prisma", "utf8") };

it("finds nothing to migrate between the schema and itself", async () => {
  expect((await diffSchemas(schema, schema, inject("serverUrl"))).replace(/^--.*$/gm, "").trim()).toBe("");
});

it("writes the SQL for a new model", async () => {
  const next = { ...schema, content: `${schema.content}\nmodel MigrationProbe {\n  id   Int    @id\n  name String\n}\n` };
  const sql = await diffSchemas(schema, next, inject("serverUrl"));
  expect(sql).toContain(`CREATE TABLE "MigrationProbe"`);
  expect(sql).toContain(`CONSTRAINT "MigrationProbe_pkey" PRIMARY KEY ("id")`);
});
