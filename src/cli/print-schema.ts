import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { lexicographicSortSchema, printSchema } from "graphql";
import { loadConfig } from "../platform/config.js";
import { schema } from "../graphql/schema.js";
import { routes } from "../rest/routes.js";
import { buildOpenApi, printOpenApi } from "../rest/openapi.js";

/**
 * The checked-in contract artefacts, printed from code. The OpenAPI servers use the default base URL, not
 * this machine's PUBLIC_BASE_URL, so the file is the same wherever it is printed; the running service
 * serves its own base URL at /public/v1/openapi.json.
 */
export function printArtefacts(): Record<string, string> {
  return {
    "schema/schema.graphql": `${printSchema(lexicographicSortSchema(schema))}\n`,
    "schema/openapi.json": printOpenApi(buildOpenApi(routes, loadConfig({}).publicBaseUrl)),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  for (const [file, text] of Object.entries(printArtefacts())) {
    writeFileSync(`${root}${file}`, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
