import { readFileSync } from "node:fs";
import { join } from "node:path";
import { convert, convertV2, type Options } from "openapi-to-postmanv2";
import { describe, expect, it } from "vitest";
import { isRecord } from "../../src/platform/json.js";
import { API_VERSIONS, FIRST_API_VERSION } from "../../src/platform/versions.js";
import { ROOT } from "../helpers/process.js";

/**
 * Each checked-in document imported into Postman as it stands (openapi-to-postmanv2, both of its conversions, filling
 * values from the schemas and from the examples): no request it makes sends a placeholder or another version as
 * Api-Version, and its OAuth 2.0 token URL is one Postman can fetch.
 */

type Json = Record<string, unknown>;

const DOCUMENTS = API_VERSIONS.map((version) => ({ version, file: version === FIRST_API_VERSION ? "schema/openapi.json" : `schema/openapi-${version}.json` }));
const OPTIONS: Record<string, Options> = { schemas: {}, examples: { parametersResolution: "Example" } };
const CONVERSIONS = [
  { name: "convert", run: convert },
  { name: "convertV2", run: convertV2 },
].flatMap((conversion) => Object.keys(OPTIONS).map((resolution) => ({ ...conversion, resolution })));

function collectionOf(run: typeof convert, doc: Json, options: Options): Promise<Json> {
  return new Promise((resolve, reject) => {
    run({ type: "json", data: doc }, options, (err, result) => {
      const data = result?.output?.[0]?.data;
      if (err || !result?.result || !isRecord(data)) reject(new Error(err?.message ?? result?.reason ?? "no collection"));
      else resolve(data);
    });
  });
}

const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** Every request of the collection, through its folders. */
function requestsOf(items: unknown): Json[] {
  return objects(items).flatMap((item) => [...(isRecord(item.request) ? [item.request] : []), ...requestsOf(item.item)]);
}

/** The accessTokenUrl of every oauth2 auth in the collection: on the collection itself, its folders and its requests. */
function tokenUrlsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(tokenUrlsOf);
  if (!isRecord(value)) return [];
  const own = value.type === "oauth2" ? objects(value.oauth2).filter((entry) => entry.key === "accessTokenUrl") : [];
  return [...own.map((entry) => entry.value), ...Object.values(value).flatMap(tokenUrlsOf)];
}

describe.each(DOCUMENTS)("Postman's import of $file", ({ version, file }) => {
  const doc: Json = JSON.parse(readFileSync(join(ROOT, file), "utf8"));
  const server = objects(doc.servers)[0]?.url;

  it.each(CONVERSIONS)(
    "$name, values from the $resolution: Api-Version is absent, disabled or the document's own; the token URL is absolute",
    async ({ run, resolution }) => {
      const collection = await collectionOf(run, structuredClone(doc), OPTIONS[resolution]);
      const requests = requestsOf(collection.item);
      expect(requests.length).toBeGreaterThan(30);
      const sent = requests.flatMap((request) =>
        objects(request.header).filter((header) => String(header.key).toLowerCase() === "api-version" && header.disabled !== true),
      );
      expect([...new Set(sent.map((header) => header.value))].filter((value) => value !== version)).toEqual([]);

      const tokenUrls = tokenUrlsOf(collection);
      expect(tokenUrls.length).toBeGreaterThan(0);
      expect(new Set(tokenUrls)).toEqual(new Set([`${server}/partner/auth/token`]));
      for (const url of tokenUrls) expect(new URL(String(url)).protocol).toMatch(/^https?:$/);
    },
  );
});
