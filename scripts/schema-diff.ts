// The SQL that takes one Prisma schema to another, from Prisma's schema engine built to WebAssembly
// (@prisma/schema-engine-wasm, pinned to the build of the installed Prisma). Prisma 7's CLI runs only its native
// schema engine, which it downloads from outside the npm registry, so `prisma migrate diff` cannot run here. The
// engine opens a connection through the pg adapter to `url` (any reachable PostgreSQL: nothing is written to it).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import * as engineGlue from "@prisma/schema-engine-wasm/schema_engine_bg";

const require = createRequire(import.meta.url);
const wasmDir = dirname(require.resolve("@prisma/schema-engine-wasm"));

/** The engine build must be the installed Prisma's (`@prisma/engines-version`): upgrading one without the other fails here. */
function checkEngineVersion(): void {
  const wanted = (require("@prisma/engines-version/package.json") as { prisma: { enginesVersion: string } }).prisma.enginesVersion;
  const wasm = (JSON.parse(readFileSync(join(wasmDir, "package.json"), "utf8")) as { version: string }).version;
  if (!wasm.endsWith(`.${wanted}`)) {
    throw new Error(
      `@prisma/schema-engine-wasm is ${wasm}, but the installed Prisma's engines are ${wanted}: install @prisma/schema-engine-wasm@<version ending in .${wanted}>`,
    );
  }
}

let loaded: Promise<typeof engineGlue.SchemaEngine> | undefined;

/** Instantiates the WebAssembly module once (Node 20 cannot import .wasm as a module without a flag). */
function loadEngine(): Promise<typeof engineGlue.SchemaEngine> {
  loaded ??= (async () => {
    checkEngineVersion();
    const { instance } = await WebAssembly.instantiate(readFileSync(join(wasmDir, "schema_engine_bg.wasm")), { "./schema_engine_bg.js": engineGlue });
    engineGlue.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
    return engineGlue.SchemaEngine;
  })();
  return loaded;
}

export type SchemaSource = { path: string; content: string } | "empty";

/** The migration script from `from` to `to`; an empty script (comments at most) when they describe the same database. */
export async function diffSchemas(from: SchemaSource, to: SchemaSource, url: string): Promise<string> {
  const SchemaEngine = await loadEngine();
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: url, max: 1 }));
  const engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, adapter);
  const target = (s: SchemaSource) => (s === "empty" ? { tag: "empty" as const } : { tag: "schemaDatamodel" as const, files: [s] });
  try {
    const result = await engine.diff({ from: target(from), to: target(to), script: true, exitCode: null, filters: { externalTables: [], externalEnums: [] } });
    return result.stdout ?? "";
  } finally {
    engine.free();
  }
}
