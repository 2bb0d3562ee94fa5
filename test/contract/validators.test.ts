import { readFileSync } from "node:fs";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Validator } from "@seriousme/openapi-schema-validator";
import { type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import { oas } from "@stoplight/spectral-rulesets";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/mesh.js";

/**
 * schema/openapi.json as the validators partners' tools run read it: each must find no error and no warning
 * (Redocly's lint is test/contract/lint.test.ts).
 */

const text = readFileSync(join(ROOT, "schema/openapi.json"), "utf8");

describe("schema/openapi.json", () => {
  it("is valid for @apidevtools/swagger-parser (orval and others use it)", async () => {
    await expect(SwaggerParser.validate(join(ROOT, "schema/openapi.json"))).resolves.toBeTruthy();
  });

  it("is valid for @seriousme/openapi-schema-validator", async () => {
    const result = await new Validator().validate(JSON.parse(text));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("has no Spectral spectral:oas finding, not even a hint", async () => {
    const spectral = new Spectral();
    // The ruleset's functions are typed for the values they check, narrower than a rule's `unknown` input.
    spectral.setRuleset({ extends: [oas as RulesetDefinition] });
    const results = await spectral.run(text);
    expect(results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`)).toEqual([]);
  });
});
