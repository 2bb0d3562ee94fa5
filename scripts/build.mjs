// `npm run build`: the service, the partner-listen package and the portal.
//
// dist/cli/start.mjs, for `npm start`: the service's own TypeScript (src/, workers/, the generated Prisma client);
// packages stay in node_modules. Running through the tsx loader instead keeps a loader thread with a heap of its own
// and every transformed source in memory: about 55 MiB of resident memory per process. The bundle sits two levels
// below the project root, as src/cli/start.ts does, so paths resolved from import.meta.url (prisma/migrations,
// node_modules) land in the same places.
//
// dist/partner-listen/, the `partner-listen` command as a package of one file with no dependencies, for partners
// without a clone: `node partner-listen.mjs …`, or `npm pack` it and `npx --package <tarball> partner-listen …`.
// `node scripts/build.mjs --listen <dir>` writes only that package, into <dir>.
//
// dist/portal/, the partner portal's web app (build-portal.mjs).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { buildPortal } from "./build-portal.mjs";

const { values } = parseArgs({ options: { listen: { type: "string" } } });
const common = { bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning" };

if (values.listen === undefined) {
  await build({ ...common, entryPoints: ["src/cli/start.ts"], outfile: "dist/cli/start.mjs", packages: "external" });
}

const listenDir = values.listen ?? "dist/partner-listen";
const { version } = JSON.parse(await readFile("package.json", "utf8"));
await mkdir(listenDir, { recursive: true });
await build({
  ...common,
  entryPoints: ["src/cli/listen.ts"],
  outfile: join(listenDir, "partner-listen.mjs"),
  banner: { js: "#!/usr/bin/env node" },
});
const listenPackage = {
  name: "partner-listen",
  version,
  description: "Forwards a store's partner event feed to a local URL, signed as webhook deliveries are.",
  type: "module",
  bin: { "partner-listen": "partner-listen.mjs" },
  files: ["partner-listen.mjs"],
  engines: { node: ">=20.11" },
};
await writeFile(join(listenDir, "package.json"), `${JSON.stringify(listenPackage, null, 2)}\n`);
if (values.listen === undefined) await buildPortal();
