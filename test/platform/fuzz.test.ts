import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { ValidateFunction } from "ajv";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import { routes } from "../../src/rest/routes/index.js";
import type { AnyRoute } from "../../src/rest/route.js";
import { compileBody, compileObject } from "../../src/rest/validate.js";

/**
 * Property-based fuzzing of every route in the route table (routes other teams add are covered as they land).
 * Each generated request is broken in at least one way the router must refuse before running anything, with
 * noise everywhere else. Properties: no 5xx, every error is problem+json, nothing leaks, and no table changes.
 */
let app: TestApp;
let tenant: Tenant;
let countAll: () => Promise<Record<string, number>>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_SANDBOX_STORE: "1000000", RATE_LIMIT_SANDBOX_APP: "1000000" });
  tenant = await createTenant(app);
  // Every table but the rate-limit counters, which every authenticated request rightly increments.
  const { rows } = await app.services.pool.query<{ name: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
     WHERE table_schema IN ('public', 'graphile_worker') AND table_type = 'BASE TABLE' AND table_name <> 'RateLimitCounter'`,
  );
  const sql = `SELECT ${rows.map((r, i) => `(SELECT count(*) FROM ${r.name})::int AS t${i}`).join(", ")}`;
  countAll = async () => {
    const { rows: [counts] } = await app.services.pool.query<Record<string, number>>(sql);
    return Object.fromEntries(rows.map((r, i) => [r.name, counts[`t${i}`]]));
  };
});
afterAll(() => app.close());

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const nasty = fc.constantFrom(
  "", "%", "%zz", "%E0%A4%A", "%00", "..", ".", "null", "undefined", "-1", "0", "1e309", "NaN", "true", "[]", "{}",
  "00000000-0000-0000-0000-00000000000g", "8a5e6c1e-0000-4000-8000-00000000000", "' OR 1=1 --", "<script>", "ä漢字🙂", "x".repeat(2000),
);
const text = fc.oneof(nasty, printable, fc.string({ maxLength: 40 }));

/** A path segment as a client might send it: properly encoded, or raw (stray `%`, unicode) within one segment. */
const segment = fc.oneof(
  text.map((s) => encodeURIComponent(s)),
  text.map((s) => s.replace(/[/?#\\]/g, "_")),
);

type Mode = "path" | "query" | "json" | "media" | "schema" | "auth" | "noise";

interface Plan {
  route: AnyRoute;
  path?: ValidateFunction;
  query?: ValidateFunction;
  body?: ValidateFunction;
  modes: Mode[];
}

const hasBody = (r: AnyRoute) => r.method !== "GET" && r.method !== "DELETE";

function planOf(route: AnyRoute): Plan {
  const path = route.pathParams ? compileObject(route.pathParams, Object.keys(route.pathParams)) : undefined;
  const query = route.query ? compileObject(route.query.properties, route.query.required) : undefined;
  const body = route.body ? compileBody(route.body) : undefined;
  const modes: Mode[] = ["auth"];
  if (path) modes.push("path");
  if (query && Object.keys(route.query?.properties ?? {}).some((k) => ["abc", "-1", "", "x".repeat(300)].some((v) => !query({ [k]: v })))) modes.push("query");
  if (hasBody(route)) modes.push("json", "media");
  if (body) modes.push("schema");
  // A read cannot write: it may also go through whole, with noise only.
  if (route.method === "GET") modes.push("noise");
  return { route, path, query, body, modes };
}

interface FuzzRequest {
  mode: Mode;
  params: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body?: string;
}

function requestOf(plan: Plan): fc.Arbitrary<FuzzRequest> {
  const { route } = plan;
  const names = (route.path.match(/\{(\w+)\}/g) ?? []).map((m) => m.slice(1, -1));
  const knownQuery = Object.keys(route.query?.properties ?? {});
  const bodyFields = Object.keys(((route.body as { properties?: Record<string, unknown> } | undefined)?.properties) ?? {});
  const params = fc.record(Object.fromEntries(names.map((n) => [n, segment]))) as fc.Arbitrary<Record<string, string>>;
  const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...knownQuery, "limit", "cursor", "__proto__", "constructor"), printable), text), { maxLength: 4 });
  const headers = fc.record(
    {
      "x-request-id": fc.oneof(printable, fc.uuid()),
      traceparent: printable,
      "idempotency-key": fc.oneof(printable, fc.uuid(), fc.constant("k".repeat(300))),
      accept: fc.constantFrom("*/*", "application/json", "text/html", "application/xml"),
      "content-type": fc.constantFrom("application/json", "application/json; charset=utf-8", "application/merge-patch+json", "text/plain", "application/x-www-form-urlencoded"),
    },
    { requiredKeys: [] },
  );
  const jsonBody = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...bodyFields, "__proto__", "constructor"), printable), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
  );
  const invalidJson = fc.oneof(
    fc.constantFrom("{", "[1,", '{"a":}', "nul", "{'a':1}", '{"a":1}}', "\u0000", "--"),
    fc.string({ minLength: 1, maxLength: 40 }),
  ).filter((s) => {
    if (s.trim() === "") return false;
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  });

  return fc
    .record({
      mode: fc.constantFrom(...plan.modes),
      params,
      query,
      headers,
      json: jsonBody,
      invalidJson,
      media: fc.constantFrom("text/plain", "application/xml", "multipart/form-data; boundary=x", "application/octet-stream"),
      token: fc.oneof(fc.constant("garbage"), fc.constant(""), printable.map((s) => `${s}.${s}.${s}`)),
    })
    .map(({ mode, params: p, query: q, headers: h, json, invalidJson: bad, media, token }): FuzzRequest => {
      const headersOut: Record<string, string> = { ...h, authorization: mode === "auth" ? `Bearer ${token}` : `Bearer ${tenant.token}` };
      let body: string | undefined = hasBody(route) ? JSON.stringify(json) : undefined;
      if (mode === "json") {
        body = bad;
        headersOut["content-type"] = "application/json";
      }
      if (mode === "media") {
        body = JSON.stringify(json) || "x";
        headersOut["content-type"] = media;
      }
      if (mode === "schema") headersOut["content-type"] = "application/json";
      // Form bodies parse into objects: with no schema to refuse them, such a write could run.
      if (hasBody(route) && mode !== "media" && headersOut["content-type"] === "application/x-www-form-urlencoded") headersOut["content-type"] = "application/json";
      return { mode, params: p, query: q, headers: headersOut, body };
    })
    .filter((r) => {
      if (r.mode === "path") return plan.path !== undefined && !plan.path(decodedParams(r.params));
      if (r.mode === "query") return plan.query !== undefined && !plan.query(Object.fromEntries(r.query));
      if (r.mode === "schema") return plan.body !== undefined && !plan.body(JSON.parse(r.body ?? "null"));
      return true;
    });
}

function decodedParams(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => {
      try {
        return [k, decodeURIComponent(v)];
      } catch {
        return [k, v];
      }
    }),
  );
}

const LEAKS = /\bat [\w.<>]+ \(|node_modules|prisma|\bSELECT\b|\bINSERT\b|\bUPDATE "|stack/i;

async function send(route: AnyRoute, r: FuzzRequest): Promise<{ status: number; type: string; text: string }> {
  const path = route.path.replace(/\{(\w+)\}/g, (_m, n: string) => r.params[n]);
  const search = new URLSearchParams(r.query).toString();
  const res = await fetch(`${app.baseUrl}${path}${search ? `?${search}` : ""}`, { method: route.method, headers: r.headers, body: r.body });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}

describe("fuzzing every route of the route table", () => {
  it("has routes to fuzz", () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  for (const route of routes) {
    it(`${route.method} ${route.path}: malformed input → no 5xx, problem+json errors, no leaks, nothing written`, async () => {
      const plan = planOf(route);
      const before = await countAll();
      await fc.assert(
        fc.asyncProperty(requestOf(plan), async (r) => {
          const res = await send(route, r);
          expect(res.status, `${r.mode}: ${res.text}`).toBeLessThan(500);
          if (r.mode !== "noise") expect(res.status, `${r.mode}: ${res.text}`).toBeGreaterThanOrEqual(400);
          expect(res.text).not.toMatch(LEAKS);
          if (res.status >= 400) {
            expect(res.type).toContain("application/problem+json");
            const problem = JSON.parse(res.text) as Record<string, unknown>;
            expect(problem).toMatchObject({ status: res.status });
            for (const f of ["type", "title", "detail", "code", "instance", "requestId", "traceId"]) expect(typeof problem[f]).toBe("string");
          }
        }),
        { numRuns: 30 },
      );
      expect(await countAll()).toEqual(before);
    });
  }
});
