import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSIONS, FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";
import type { OpenApiDocument } from "../../src/rest/openapi-document.js";
import { operationIds } from "../../src/rest/openapi.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant } from "../helpers/tenants.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { CONTRACT_CASES, type CaseContext } from "./cases.js";
import { exchange } from "./support/http.js";
import { ROOT } from "./support/mesh.js";
import { ContractValidator } from "./support/validator.js";
import { compileStrict } from "./support/compile.js";

/**
 * Every contract case (./cases.ts) again, in each version after the first, straight over HTTP: each answer, and
 * each webhook the cases cause, must conform to that version's printed document (schema/openapi-<version>.json),
 * whose objects the validator closes, so a name the version dropped fails as undocumented. The first version is
 * checked by the Mesh suite (mesh.test.ts) against schema/openapi.json.
 */

const LATER = API_VERSIONS.filter((v) => v !== FIRST_API_VERSION);

const printed = (version: string): OpenApiDocument => JSON.parse(readFileSync(join(ROOT, `schema/openapi-${version}.json`), "utf8"));

describe.each(LATER)("version %s", (version) => {
  const doc = printed(version);
  const validator = new ContractValidator(doc);
  let app: TestApp;
  let receiver: Receiver;
  let ctx: CaseContext;

  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", RATE_LIMIT_SANDBOX_STORE: "5000", RATE_LIMIT_SANDBOX_APP: "5000" });
    receiver = await startReceiver();
    ctx = { app, tenant: await createTenant(app, { apiVersion: version }), receiver };
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await app?.close();
  });

  const located = (operationId: string): { path: string; method: string } => {
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) if (op.operationId === operationId) return { path, method: method.toUpperCase() };
    throw new Error(`no operation ${operationId}`);
  };

  const runs = operationIds(doc).flatMap((operationId) => (CONTRACT_CASES[operationId] ?? []).map((c) => ({ operationId, c })));

  it("has the document's every operation among the cases", () => {
    expect(operationIds(doc).filter((id) => !CONTRACT_CASES[id])).toEqual([]);
    expect(doc.info.version).toBe(version);
  });

  it.each(runs.map((r) => [`${r.operationId}: ${r.c.name}`, r] as const))("%s", async (_title, { operationId, c }) => {
    const { token, anonymous, path: params, query, headers, body } = (await c.run?.(ctx)) ?? {};
    const { path, method } = located(operationId);
    const filled = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params?.[name] ?? ""));
    const search = new URLSearchParams(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)]));
    const res = await exchange(app, method, `${filled}${search.size ? `?${search}` : ""}`, {
      token: anonymous ? undefined : token === undefined ? ctx.tenant.token : (token ?? "not-a-token"),
      body,
      // Every case's tenant is answered in this version, whatever its pin.
      headers: { ...headers, "api-version": version },
    });
    const expected = c.status ?? Number(Object.keys(doc.paths[path][method.toLowerCase()].responses).find((s) => s.startsWith("2")));
    expect(res.status, res.body.slice(0, 500)).toBe(expected);
    expect(validator.check(res)).toEqual([]);
    // An operation that takes Api-Version answers in it; the platform routes under /public/v1 (the document, the
    // versions, an export's file, which is in the export's own version) take none.
    const parameters = doc.paths[path][method.toLowerCase()].parameters ?? [];
    if (parameters.some((p) => p.$ref === "#/components/parameters/ApiVersion")) expect(res.headers["api-version"]).toBe(version);
  });

  it("generates a client with openapi-typescript that compiles under tsc --strict", async () => {
    const dir = join(ROOT, "test/contract/client/generated");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `openapi-${version}.ts`);
    writeFileSync(file, astToString(await openapiTS(readFileSync(join(ROOT, `schema/openapi-${version}.json`), "utf8"))));
    await expect(compileStrict(file)).resolves.toBeUndefined();
  }, 120_000);

  it("delivers every webhook the cases caused in this version, as its document describes", () => {
    const bodies = receiver.all.map((r) => ({ version: r.headers["api-version"], envelope: JSON.parse(r.body) as { eventType: string } }));
    expect(bodies.length).toBeGreaterThan(0);
    for (const { version: sent, envelope } of bodies) {
      expect(sent).toBe(version);
      const at = ["webhooks", envelope.eventType, "post", "requestBody", "content", "application/json", "schema"];
      expect(validator.checkValue(at, envelope), envelope.eventType).toEqual([]);
    }
  });
});

describe("the printed documents", () => {
  it("print the latest as schema/openapi-<latest>.json and the first as schema/openapi.json", () => {
    expect(printed(LATEST_API_VERSION).info.version).toBe(LATEST_API_VERSION);
    const first: OpenApiDocument = JSON.parse(readFileSync(join(ROOT, "schema/openapi.json"), "utf8"));
    expect(first.info.version).toBe(FIRST_API_VERSION);
  });
});
