import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildSchema, introspectionFromSchema, lexicographicSortSchema, printSchema } from "graphql";
import { minifyIntrospection, outputIntrospectionFile } from "@gql.tada/internal";
import { loadConfig } from "../platform/config.js";
import { schema } from "../graphql/schema.js";
import { routes } from "../rest/routes.js";
import { buildOpenApi, printOpenApi } from "../rest/openapi.js";
import { API_VERSIONS, FIRST_API_VERSION } from "../platform/versions.js";
import { printChangelog } from "../modules/versions/changelog.js";

/**
 * The checked-in contract artefacts, printed from code. The OpenAPI servers use the default base URL, not
 * this machine's PUBLIC_BASE_URL, so the file is the same wherever it is printed; the running service
 * serves its own base URL at /public/v1/openapi.json. The introspection types gql.tada reads to type the
 * route documents are printed from schema.graphql's text, so they are exactly the published schema.
 */
export function printArtefacts(): Record<string, string> {
  const sdl = `${printSchema(lexicographicSortSchema(schema))}\n`;
  const introspection = minifyIntrospection(introspectionFromSchema(buildSchema(sdl)));
  const baseUrl = loadConfig({}).publicBaseUrl;
  // schema/openapi.json is the first version's document, the contract first published; each later version has its own file.
  const documents = Object.fromEntries(
    API_VERSIONS.map((version) => [
      version === FIRST_API_VERSION ? "schema/openapi.json" : `schema/openapi-${version}.json`,
      printOpenApi(buildOpenApi(routes, schema, baseUrl, version)),
    ]),
  );
  return {
    "schema/schema.graphql": sdl,
    ...documents,
    "docs/changelog.md": printChangelog(),
    "src/platform/schema/graphql-env.d.ts": outputIntrospectionFile(introspection, { fileType: ".d.ts", shouldPreprocess: true }),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  for (const [file, text] of Object.entries(printArtefacts())) {
    writeFileSync(`${root}${file}`, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
