import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./support/mesh.js";

/**
 * The repository stands alone: code, schema and docs state a rule (or point into docs/) instead of citing
 * planning documents that are not in it, by section or by file name.
 */

const CITATION = /\b(?:SPEC|DECISIONS) (?:§|\d)|\b(?:SPEC|DECISIONS|ARCHITECTURE)\.md\b/;
const SCANNED = ["src", "workers", "schema", "docs", "test", "scripts", "prisma", "mesh", "README.md"];
// Build output, not part of the repository: the Prisma client is generated from prisma/schema.prisma (scanned).
const SKIPPED = new Set(["src/generated", "mesh/.mesh", "node_modules"]);

function files(path: string): string[] {
  if (SKIPPED.has(path)) return [];
  const entries = readdirSync(join(ROOT, path), { withFileTypes: true });
  return entries.flatMap((e) => (e.isDirectory() ? files(`${path}/${e.name}`) : [`${path}/${e.name}`]));
}

it("no file cites a document outside the repository", () => {
  const scanned = SCANNED.flatMap((p) => (p.endsWith(".md") ? [p] : files(p)));
  expect(scanned.length).toBeGreaterThan(100);
  const citations = scanned.flatMap((file) =>
    readFileSync(join(ROOT, file), "utf8")
      .split("\n")
      .flatMap((line, i) => (CITATION.test(line) ? [`${file}:${i + 1}: ${line.trim().slice(0, 160)}`] : [])),
  );
  expect(citations).toEqual([]);
});
