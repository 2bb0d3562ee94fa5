import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project's root: the nearest directory above this module holding package.json. Found by walking up rather
 * than by a fixed `../..` because the module runs both from src/ and from the bundle in dist/, at different depths.
 */
function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${from}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
