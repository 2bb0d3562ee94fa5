import { readFileSync } from "node:fs";
import { QueryCompiler } from "@prisma/client/runtime/query_compiler_bg.postgresql.mjs";
import { describe, expect, it } from "vitest";

/**
 * src/platform/db/plan-cache.ts replaces `QueryCompiler.prototype.compile`, an internal of Prisma's query compiler
 * with no promise of stability, and relies on how this version's compiler treats placeholders. Its own checks
 * (a cached plan must equal the compiler's) keep answers right, but a new version could leave the cache silently
 * refusing every shape, or change what a plan is. So an upgrade must fail here until someone has re-checked it.
 */
const WRITTEN_FOR = "6.19.3";

const versionOf = (pkg: string): unknown => JSON.parse(readFileSync(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), "utf8")).version;

describe("the plan cache's Prisma version", () => {
  it.each(["@prisma/client", "prisma", "@prisma/adapter-pg"])("%s is the version plan-cache.ts was written against", (pkg) => {
    const installed = versionOf(pkg);
    if (installed !== WRITTEN_FOR) {
      expect.fail(
        `${pkg} is ${String(installed)}, but src/platform/db/plan-cache.ts patches Prisma ${WRITTEN_FOR}'s internal QueryCompiler. ` +
          "Before moving this pin, re-check: that @prisma/client/runtime/query_compiler_bg.postgresql.mjs still exports QueryCompiler " +
          'with compile(request: string); that the compiler still turns {"$type":"Param"} into {"prisma__type":"param"} placeholders; ' +
          "that test/platform/plan-cache.test.ts passes with planCacheStats() reporting cached plans (not only refused shapes); " +
          "and whether the new version caches plans itself (Prisma 7 does), which makes plan-cache.ts removable. See docs/architecture.md.",
      );
    }
  });

  it("finds the compiler method it patches", () => {
    expect(typeof QueryCompiler.prototype.compile).toBe("function");
  });
});
