import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { printArtefacts } from "../../src/cli/print-schema.js";
import { ROOT } from "./support/mesh.js";

/** schema/ holds what the code prints; a change to routes or GraphQL types without reprinting fails here. */

function firstDifference(a: string, b: string): string {
  const left = a.split("\n");
  const right = b.split("\n");
  const i = left.findIndex((line, n) => line !== right[n]);
  const at = i === -1 ? left.length : i;
  return `line ${at + 1}: file has ${JSON.stringify(left[at] ?? "(end)")}, code prints ${JSON.stringify(right[at] ?? "(end)")}`;
}

describe("printed artefacts are current", () => {
  it.each(Object.entries(printArtefacts()))("%s", (file, printed) => {
    const onDisk = readFileSync(join(ROOT, file), "utf8");
    expect(onDisk === printed, `${file} is stale: run \`npm run print-schema\` and commit it (${firstDifference(onDisk, printed)})`).toBe(true);
  });
});
