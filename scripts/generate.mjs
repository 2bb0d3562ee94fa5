// Generates the Prisma client and Pothos types offline. Prisma 7's CLI makes sure its native schema engine is on
// disk before `generate` (and downloads it when not), though `generate` never runs it; these machines reach only
// the npm registry, so the download would fail. PRISMA_SCHEMA_ENGINE_BINARY names an engine to use instead: here a
// stand-in that only says it is one, so `prisma migrate …` fails plainly if run. Migration SQL comes from
// scripts/new-migration.ts, on the WebAssembly schema engine.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const standIn = fileURLToPath(new URL("./no-schema-engine.sh", import.meta.url));
execFileSync("npx", ["prisma", "generate"], {
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || standIn, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
});
