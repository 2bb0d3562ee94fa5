import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Which layer may import which. src/modules holds one folder per domain (its rules, commands, queries, events,
 * GraphQL face and REST rows); src/platform the machinery every domain uses. HTTP, REST and GraphQL are thin
 * adapters over the modules: modules and platform never import them, and REST runs GraphQL documents through
 * the schema the modules build, never through the GraphQL adapter.
 */

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

const ADAPTERS = ["http", "rest", "graphql", "cli"];

/** Every source file (generated code aside) with the src-relative paths of the files it imports. */
function importGraph(): { file: string; imports: string[] }[] {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.startsWith("generated/"))
    .map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, file), "utf8"), true, true);
      const imports = importedFiles
        .map((i) => i.fileName)
        .filter((spec) => spec.startsWith("."))
        .map((spec) => relative(SRC, resolve(SRC, dirname(file), spec)));
      return { file, imports };
    });
}

const layerOf = (path: string) => path.split("/")[0];

/** "file -> import" for every import from `from` files (or layers) into `to` layers that `allowed` does not excuse. */
function violations(from: (file: string) => boolean, to: readonly string[], allowed: (file: string, target: string) => boolean = () => false): string[] {
  return importGraph()
    .filter(({ file }) => from(file))
    .flatMap(({ file, imports }) => imports.filter((t) => to.includes(layerOf(t)) && !allowed(file, t)).map((t) => `${file} -> ${t}`));
}

describe("layers", () => {
  it("finds the imports it checks", () => {
    // Guards the checks below against passing because the graph came out empty.
    const rest = importGraph().find((f) => f.file === "rest/router.ts");
    expect(rest?.imports).toEqual(expect.arrayContaining(["http/body.js", "platform/schema/context.js"]));
  });

  it("no module or platform file imports HTTP, REST, GraphQL or the CLIs", () => {
    expect(violations((f) => ["modules", "platform"].includes(layerOf(f)), ADAPTERS)).toEqual([]);
  });

  it("the platform does not depend on any domain module", () => {
    expect(violations((f) => layerOf(f) === "platform", ["modules"])).toEqual([]);
  });

  it("HTTP imports REST only where it mounts the REST API (server.ts) and publishes its route table (docs.ts)", () => {
    const mounts = new Set(["http/server.ts", "http/docs.ts"]);
    expect(
      violations(
        (f) => layerOf(f) === "http",
        ["rest"],
        (file) => mounts.has(file),
      ),
    ).toEqual([]);
  });

  it("REST and the GraphQL adapter do not import each other", () => {
    expect(violations((f) => layerOf(f) === "rest", ["graphql"])).toEqual([]);
    expect(violations((f) => layerOf(f) === "graphql", ["rest"])).toEqual([]);
  });
});
