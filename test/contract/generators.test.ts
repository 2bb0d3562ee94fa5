import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApi } from "swagger-typescript-api";
import { afterAll, describe, expect, it } from "vitest";
import { API_VERSIONS, FIRST_API_VERSION } from "../../src/platform/versions.js";
import type { OpenApiDocument } from "../../src/rest/openapi-document.js";
import { operationIds } from "../../src/rest/openapi.js";
import { ROOT } from "./support/mesh.js";
import { compileStrict } from "./support/compile.js";

/**
 * A second generator beside openapi-typescript (client.test.ts, versions.test.ts): swagger-typescript-api builds a
 * fetch client from each printed version's document, which must hold a method per operation and compile under
 * tsc --strict. Two generators read a document differently, so a construct one of them mishandles shows here.
 */

const documents = [
  { version: FIRST_API_VERSION, file: "schema/openapi.json" },
  ...API_VERSIONS.filter((v) => v !== FIRST_API_VERSION).map((version) => ({ version, file: `schema/openapi-${version}.json` })),
];

const dir = mkdtempSync(join(tmpdir(), "generators-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(documents)("$file", ({ version, file }) => {
  it(`generates a swagger-typescript-api client for ${version} that compiles under tsc --strict`, async () => {
    const input = join(ROOT, file);
    const doc: OpenApiDocument = JSON.parse(readFileSync(input, "utf8"));
    expect(doc.info.version).toBe(version);
    const fileName = `client-${version}.ts`;
    await generateApi({ input, output: dir, fileName, httpClientType: "fetch", silent: true });
    const client = readFileSync(join(dir, fileName), "utf8");
    expect(operationIds(doc).filter((id) => !client.includes(`${id}: (`))).toEqual([]);
    await expect(compileStrict(join(dir, fileName))).resolves.toBeUndefined();
  }, 30_000);
});
