import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { ROOT } from "./support/mesh.js";

/** schema/openapi.json passes a standard OpenAPI linter (Redocly's recommended rules, see redocly.yaml), without a warning. */

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

it("redocly lint finds no error and no warning", async () => {
  const { stdout } = await promisify(execFile)("npx", ["--no-install", "redocly", "lint", "schema/openapi.json", "--format=json"], {
    cwd: ROOT,
    // Offline and quiet: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", CI: "true" },
  }).catch((e: { stdout: string }) => e); // exit code 1 when there are errors: the report says which
  const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as LintReport;
  const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
  expect(problems).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
});
