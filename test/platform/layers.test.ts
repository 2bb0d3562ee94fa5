import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Which layer may import which. Domains are reached through the adapters (HTTP, REST, GraphQL), never the reverse;
 * REST runs GraphQL documents and HTTP mounts both, so those imports go one way only.
 */

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

const DOMAINS = ["orders", "customers", "catalog", "store", "webhooks", "sandbox", "admin", "events", "auth", "crypto", "db", "ratelimit"];
const ADAPTERS = ["http", "rest", "graphql"];

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
    expect(rest?.imports).toEqual(expect.arrayContaining(["http/body.js", "graphql/context.js"]));
  });

  it("no domain module imports HTTP, REST or GraphQL", () => {
    expect(violations((f) => DOMAINS.includes(layerOf(f)), ADAPTERS)).toEqual([]);
  });

  it("authentication does not depend on the admin operations", () => {
    expect(violations((f) => layerOf(f) === "auth", ["admin"])).toEqual([]);
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

  it("REST imports from GraphQL only what it needs to run documents, never the type definitions or their values", () => {
    const plumbing = new Set(["graphql/context.js", "graphql/commands.js", "graphql/pagination.js"]);
    expect(
      violations(
        (f) => layerOf(f) === "rest",
        ["graphql"],
        (_file, target) => plumbing.has(target),
      ),
    ).toEqual([]);
  });
});
