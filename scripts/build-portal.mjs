// Builds the partner portal (src/portal/, Preact) into dist/portal/: index.html and assets/ with content-hashed names,
// so the server can let browsers cache an asset for good and the page for no time at all. `npm run build` (run by
// `npm start`) and the portal's browser test call it.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Builds into `outdir` (default dist/portal under the repository) and answers the asset file names. */
export async function buildPortal(outdir = join(root, "dist", "portal")) {
  const assets = join(outdir, "assets");
  await rm(outdir, { recursive: true, force: true });
  await mkdir(assets, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { portal: "src/portal/main.tsx", style: "src/portal/portal.css" },
    outdir: assets,
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: ["chrome115", "firefox115", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: "src/portal/tsconfig.json",
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const script = outputs.find((f) => f.endsWith(".js"));
  const style = outputs.find((f) => f.endsWith(".css"));
  if (!script || !style) throw new Error(`the portal build made no script or no stylesheet: ${outputs.join(", ")}`);
  const page = (await readFile(join(root, "src/portal/index.html"), "utf8")).replace("%SCRIPT%", `assets/${script}`).replace("%STYLE%", `assets/${style}`);
  await writeFile(join(outdir, "index.html"), page);
  return { script, style };
}
