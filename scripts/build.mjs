// Bundles the service's own TypeScript (src/, workers/, the generated Prisma client) into dist/cli/start.mjs for
// `npm start`; packages stay in node_modules. Running through the tsx loader instead keeps a loader thread with a
// heap of its own and every transformed source in memory: about 55 MiB of resident memory per process.
// The bundle sits two levels below the project root, as src/cli/start.ts does, so paths resolved from
// import.meta.url (prisma/migrations, node_modules) land in the same places. The partner portal's web app is built
// beside it, into dist/portal/.
import { build } from "esbuild";
import { buildPortal } from "./build-portal.mjs";

await build({
  entryPoints: ["src/cli/start.ts"],
  outfile: "dist/cli/start.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
await buildPortal();
