import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant, partnerPrincipal, type Tenant } from "../helpers/tenants.js";
import { LATEST_API_VERSION } from "../../src/platform/versions.js";
import { createCatalog, createCustomer, createOrder } from "../helpers/fixtures.js";
import { routes as rows } from "../../src/rest/routes.js";
import { schema } from "../../src/graphql/schema.js";
import { authorizedRoutes, type AuthorizedRoute as Route } from "../../src/rest/authorization.js";
import { print } from "graphql";
import type { JsonSchema } from "../../src/platform/json.js";
import type { PartnerPrincipal } from "../../src/platform/auth/principal.js";
import { defineBody, type OperationInput } from "../../src/platform/validate.js";
import { tableCounter } from "./support.js";

/**
 * Property-based fuzzing of every route in the route table (routes other teams add are covered as they land).
 * Each generated request is broken in at least one way the router must refuse before running anything, with
 * noise everywhere else; the hostile modes send an otherwise valid request (real ids of the store) carrying one
 * value the database cannot store, through the REST route and through its GraphQL operation on /graphql.
 * Properties: no 5xx, every error is problem+json, nothing leaks, and no table changes.
 */
/** The route table with each row's input read off its GraphQL field, as the router checks with it. */
const routes = authorizedRoutes(schema, rows);

let app: TestApp;
let tenant: Tenant;
let principal: PartnerPrincipal;
let ids: string[];
let countAll: () => Promise<Record<string, number>>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_SANDBOX_STORE: "1000000", RATE_LIMIT_SANDBOX_APP: "1000000", RATE_LIMIT_TOKEN_PER_CLIENT: "1000000" });
  // In the newest version, whose shape the route table declares (an older one may ignore a parameter it lists).
  tenant = await createTenant(app, { apiVersion: LATEST_API_VERSION });
  principal = await partnerPrincipal(app, tenant);
  // Real rows for the hostile modes to name, so a request gets as far as the code that would store it.
  const { products } = await createCatalog(app.services.db, tenant.storeId);
  const customer = await createCustomer(app.services.db, tenant.storeId);
  const order = await createOrder(app.services.db, tenant.storeId, { customerId: customer.id });
  ids = [...products.map((p) => p.id), customer.id, order.id];
  countAll = await tableCounter(app);
});
afterAll(() => app.close());

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const nasty = fc.constantFrom(
  "",
  "%",
  "%zz",
  "%E0%A4%A",
  "%00",
  "..",
  ".",
  "null",
  "undefined",
  "-1",
  "0",
  "1e309",
  "NaN",
  "true",
  "[]",
  "{}",
  "00000000-0000-0000-0000-00000000000g",
  "8a5e6c1e-0000-4000-8000-00000000000",
  "' OR 1=1 --",
  "<script>",
  "ä漢字🙂",
  "x".repeat(2000),
);
const text = fc.oneof(nasty, printable, fc.string({ maxLength: 40 }));

/** A path segment as a client might send it: properly encoded, or raw (stray `%`, unicode) within one segment. */
const segment = fc.oneof(
  text.map((s) => encodeURIComponent(s)),
  text.map((s) => s.replace(/[/?#\\]/g, "_")),
);

type Mode = "path" | "query" | "json" | "deep" | "media" | "schema" | "auth" | "noise" | "hostile" | "graphql";

interface Plan {
  route: Route;
  path?: OperationInput;
  query?: OperationInput;
  body?: OperationInput;
  modes: Mode[];
}

const hasBody = (r: Route) => r.method !== "GET" && r.method !== "DELETE";

function planOf(route: Route): Plan {
  const { pathParams: path, query, body } = route;
  const modes: Mode[] = ["auth"];
  if (path) modes.push("path");
  if (query && Object.keys(query.properties).some((k) => ["abc", "-1", "", "x".repeat(300)].some((v) => !query.accepts({ [k]: v })))) modes.push("query");
  if (hasBody(route)) modes.push("json", "deep", "media");
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
  /** The route's own operation sent to /graphql instead (mode "graphql"). */
  graphql?: { query: string; variables: Record<string, unknown> };
}

/**
 * JSON nested past JSON_MAX_DEPTH (32) somewhere: the whole body, or one field of an object, as arrays or objects,
 * up to 3,000 levels (which overflowed the stack of a recursive walker).
 */
const deepJson = fc
  .record({ depth: fc.oneof(fc.integer({ min: 33, max: 40 }), fc.integer({ min: 41, max: 3000 })), arrays: fc.boolean(), inField: fc.boolean() })
  .map(({ depth, arrays, inField }) => {
    const [open, close] = arrays ? ["[", "]"] : ['{"a":', "}"];
    const value = `${open.repeat(depth)}"x"${close.repeat(depth)}`;
    // In a field, the object around it is one level more.
    return inField ? `{"name":${value}}` : value;
  });

function requestOf(plan: Plan): fc.Arbitrary<FuzzRequest> {
  const { route } = plan;
  const names = (route.path.match(/\{(\w+)\}/g) ?? []).map((m) => m.slice(1, -1));
  const knownQuery = Object.keys(route.query?.properties ?? {});
  const bodyFields = Object.keys(route.body?.properties ?? {});
  const params = fc.record(Object.fromEntries(names.map((n) => [n, segment]))) as fc.Arbitrary<Record<string, string>>;
  const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...knownQuery, "limit", "cursor", "__proto__", "constructor"), printable), text), { maxLength: 4 });
  const headers = fc.record(
    {
      "x-request-id": fc.oneof(printable, fc.uuid()),
      traceparent: printable,
      "idempotency-key": fc.oneof(printable, fc.uuid(), fc.constant("k".repeat(300))),
      accept: fc.constantFrom("*/*", "application/json", "text/html", "application/xml"),
      "content-type": fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "application/merge-patch+json",
        "text/plain",
        "application/x-www-form-urlencoded",
      ),
    },
    { requiredKeys: [] },
  );
  const jsonBody = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...bodyFields, "__proto__", "constructor"), printable), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
  );
  const invalidJson = fc
    .oneof(fc.constantFrom("{", "[1,", '{"a":}', "nul", "{'a':1}", '{"a":1}}', "\u0000", "--"), fc.string({ minLength: 1, maxLength: 40 }))
    .filter((s) => {
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
      // curl -d sends application/x-www-form-urlencoded unless told otherwise: JSON in it is still refused.
      media: fc.constantFrom(
        "text/plain",
        "application/xml",
        "multipart/form-data; boundary=x",
        "application/octet-stream",
        "application/x-www-form-urlencoded",
      ),
      deep: deepJson,
      token: fc.oneof(
        fc.constant("garbage"),
        fc.constant(""),
        printable.map((s) => `${s}.${s}.${s}`),
      ),
    })
    .map(({ mode, params: p, query: q, headers: h, json, invalidJson: bad, media, deep, token }): FuzzRequest => {
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
      if (mode === "deep") {
        body = deep;
        headersOut["content-type"] = "application/json";
      }
      if (mode === "schema") headersOut["content-type"] = "application/json";
      // The body is read once the route is matched and the token admitted: its refusals need a well-formed path.
      const params = mode === "deep" || mode === "media" ? Object.fromEntries(names.map((n) => [n, ids[0]])) : p;
      return { mode, params, query: q, headers: headersOut, body };
    })
    .filter((r) => {
      if (r.mode === "path") return plan.path !== undefined && !plan.path.accepts(decodedParams(r.params));
      if (r.mode === "query") return plan.query !== undefined && !plan.query.accepts(Object.fromEntries(r.query));
      if (r.mode === "schema") return plan.body !== undefined && !plan.body.accepts(JSON.parse(r.body ?? "null"));
      return true;
    });
}

// ---- Hostile values: what the database cannot store, inside otherwise valid requests ----

const SAMPLE_TEXT = [
  "Ana Souza",
  "11 98765-4321",
  "Rua Augusta",
  "1500",
  "01310-100",
  "SP",
  "Sem cebola",
  "Borda de catupiry",
  "ana@example.com",
  "https://93.184.216.34/hooks",
];
/** PostgreSQL text holds no NUL, and its UTF-8 no unpaired surrogate (which a JSON "\ud800" escape carries). */
const UNSTORABLE_CHARS = ["\u0000", "\ud800", "\udfff"];
const HOSTILE_DATES = [
  "0000-01-01T00:00:00Z",
  "0000-12-31T23:59:59.999Z",
  "10000-01-01T00:00:00Z",
  "+010000-01-01T00:00:00.000Z",
  "9999-12-31T23:59:59-01:00",
  "0001-01-01T00:00:00+01:00",
];
const HUGE_NUMBERS = [1e300, 2 ** 31, 21_474_836.48, Number.MAX_SAFE_INTEGER, 1e21];
/** Path segments that decode to a NUL, or do not decode at all (a malformed escape, an encoded lone surrogate). */
const HOSTILE_SEGMENTS = ["%00", "abc%00def", "%ED%A0%80", "%zz", "8a5e6c1e-0000-4000-8000-00000000000%00"];

const variantOf = (schema: JsonSchema): JsonSchema => (schema.anyOf as JsonSchema[] | undefined)?.find((v) => v.type !== "null") ?? schema;
const propertiesOf = (schema: JsonSchema): [string, JsonSchema][] => Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);

/** Arbitraries are built once per schema: `chain` asks for them again on every generated value. */
function memo(build: (schema: JsonSchema) => fc.Arbitrary<unknown>): (schema: JsonSchema) => fc.Arbitrary<unknown> {
  const built = new WeakMap<JsonSchema, fc.Arbitrary<unknown>>();
  return (schema) => {
    const known = built.get(schema);
    if (known) return known;
    const arbitrary = build(schema);
    built.set(schema, arbitrary);
    return arbitrary;
  };
}

/** Values a schema accepts, with the store's real ids for uuids (a request may still fail for another reason). */
const validOf = memo((schema) => {
  const s = variantOf(schema);
  // A body that is one of several (StatusChange): a value of any branch.
  if (Array.isArray(s.oneOf)) return fc.oneof(...(s.oneOf as JsonSchema[]).map((branch) => validOf(branch)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  switch (s.type) {
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: Number(s.minimum ?? 0), max: Math.min(Number(s.maximum ?? 5), 5) });
    case "number":
      return fc.integer({ min: 0, max: 10_000 }).map((cents) => cents / 100);
    case "array":
      return fc.array(validOf(s.items as JsonSchema), { minLength: Number(s.minItems ?? 0), maxLength: Math.max(Number(s.minItems ?? 0), 2) });
    case "object":
      return fc.record(Object.fromEntries(propertiesOf(s).map(([k, v]) => [k, validOf(v)])), { requiredKeys: (s.required ?? []) as string[] });
  }
  if (s.format === "uuid") return fc.constantFrom(...ids);
  if (s.format === "date-time") {
    return fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2030-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString());
  }
  const input = defineBody(s);
  const fitting = SAMPLE_TEXT.filter((t) => input.accepts(t));
  return fitting.length > 0 ? fc.constantFrom(...fitting) : fc.string({ minLength: 1, maxLength: 10 });
});

/** The text with one unstorable character put somewhere in it. */
const withUnstorable = (text: fc.Arbitrary<unknown>, chars = UNSTORABLE_CHARS): fc.Arbitrary<string> =>
  fc.tuple(text.map(String), fc.constantFrom(...chars), fc.nat()).map(([t, c, at]) => {
    const i = at % (t.length + 1);
    return t.slice(0, i) + c + t.slice(i);
  });

/** A value of the schema that is valid but for one leaf the database cannot store: text, a date or a number. */
const hostileOf: (schema: JsonSchema) => fc.Arbitrary<unknown> = memo((schema) => {
  const s = variantOf(schema);
  if (Array.isArray(s.oneOf)) return fc.oneof(...(s.oneOf as JsonSchema[]).map((branch) => hostileOf(branch)));
  if (s.type === "object") {
    const props = propertiesOf(s);
    if (props.length === 0) return withUnstorable(fc.constantFrom(...SAMPLE_TEXT));
    const required = (s.required ?? []) as string[];
    return fc
      .constantFrom(...props)
      .chain(([key, sub]) =>
        fc.record({ ...Object.fromEntries(props.map(([k, v]) => [k, validOf(v)])), [key]: hostileOf(sub) }, { requiredKeys: [...required, key] }),
      );
  }
  if (s.type === "array") {
    const items = s.items as JsonSchema;
    return fc.tuple(fc.array(validOf(items), { maxLength: 1 }), hostileOf(items)).map(([valid, bad]) => [...valid, bad]);
  }
  if (s.type === "integer" || s.type === "number") return fc.constantFrom(...HUGE_NUMBERS);
  if (s.format === "date-time") return fc.oneof(fc.constantFrom(...HOSTILE_DATES), withUnstorable(validOf(s)));
  return withUnstorable(validOf(s));
});

/** One declared query parameter with a hostile value. A URL cannot carry an unpaired surrogate (escapes decode as UTF-8). */
function hostileQueryOf(properties: Record<string, JsonSchema>): fc.Arbitrary<[string, string][]> {
  return fc.constantFrom(...Object.entries(properties)).chain(([name, schema]) => {
    const s = variantOf(schema);
    const value =
      s.type === "integer" || s.type === "number"
        ? fc.constantFrom(...HUGE_NUMBERS.map(String))
        : s.format === "date-time"
          ? fc.constantFrom(...HOSTILE_DATES)
          : withUnstorable(validOf(s), ["\u0000"]);
    return value.map((v): [string, string][] => [[name, v]]);
  });
}

type Slot = "repeat" | "path" | "query" | "body";

/**
 * A request valid but for one hostile part: a path parameter, a query parameter, a body leaf, or a query
 * parameter given twice. Through REST it must be a 400; through GraphQL (mode "graphql": the route's operation
 * with the variables the route would pass) an error that is not INTERNAL_SERVER_ERROR.
 */
function hostileRequestOf(plan: Plan, door: "hostile" | "graphql"): fc.Arbitrary<FuzzRequest> {
  const { route } = plan;
  const names = (route.path.match(/\{(\w+)\}/g) ?? []).map((m) => m.slice(1, -1));
  const queryProps = route.query?.properties ?? {};
  const slots: Slot[] = [
    ...(door === "hostile" ? (["repeat"] as const) : []),
    ...(names.length > 0 ? (["path"] as const) : []),
    ...(Object.keys(queryProps).length > 0 ? (["query"] as const) : []),
    ...(route.body ? (["body"] as const) : []),
  ];
  return fc.constantFrom(...slots).chain((slot) =>
    fc
      .record({
        params: fc.record(Object.fromEntries(names.map((n) => [n, slot === "path" ? fc.constantFrom(...HOSTILE_SEGMENTS) : fc.constantFrom(...ids)]))),
        query:
          slot === "query"
            ? hostileQueryOf(queryProps)
            : slot === "repeat"
              ? fc.tuple(fc.constantFrom(...Object.keys(queryProps), "limit", "x"), fc.constantFrom("1", "5", "")).map(([n, v]): [string, string][] => [
                  [n, v],
                  [n, v],
                ])
              : fc.constant<[string, string][]>([]),
        body: route.body ? (slot === "body" ? hostileOf(route.body.schema) : validOf(route.body.schema)) : fc.constant(undefined),
      })
      .map(({ params, query, body }): FuzzRequest => {
        const headers = { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" };
        const request = { mode: door, params, query, headers, body: body === undefined ? undefined : JSON.stringify(body) };
        if (door === "hostile") return request;
        // Types coerced as the router would ("5" → 5), so only the hostile value can be what GraphQL refuses.
        const queryObject: Record<string, unknown> = Object.fromEntries(query);
        plan.query?.accepts(queryObject);
        const variables = route.variables({ path: decodedParams(params), query: queryObject, body: body ?? {}, principal });
        return { ...request, graphql: { query: print(route.document), variables } };
      }),
  );
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

/** ajv's own wording, which no message a client reads may carry. */
const VALIDATOR_WORDING =
  /must have required property|must be equal to one of the allowed values|must match (pattern|format)|must NOT|must be [<>]=|must be (string|integer|number|boolean|object|array|null)\b|must pass "/;

const LEAKS = /\bat [\w.<>]+ \(|node_modules|prisma|\bSELECT\b|\bINSERT\b|\bUPDATE "|stack/i;

async function send(route: Route, r: FuzzRequest): Promise<{ status: number; type: string; text: string }> {
  if (r.graphql) {
    const res = await fetch(`${app.baseUrl}/graphql`, { method: "POST", headers: r.headers, body: JSON.stringify(r.graphql) });
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
  }
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
      const viaGraphql = route.body || route.query || route.pathParams ? [{ arbitrary: hostileRequestOf(plan, "graphql"), weight: 1 }] : [];
      const requests = fc.oneof({ arbitrary: requestOf(plan), weight: 3 }, { arbitrary: hostileRequestOf(plan, "hostile"), weight: 2 }, ...viaGraphql);
      await fc.assert(
        fc.asyncProperty(requests, async (r) => {
          const res = await send(route, r);
          const says = `${r.mode} ${JSON.stringify(r.graphql?.variables ?? [r.query, r.body])}: ${res.text}`;
          expect(res.status, says).toBeLessThan(500);
          expect(res.text).not.toMatch(LEAKS);
          if (r.mode === "graphql") {
            const errors = (JSON.parse(res.text) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
            expect(errors.length, says).toBeGreaterThan(0);
            expect(
              errors.map((e) => e.extensions?.code),
              says,
            ).not.toContain("INTERNAL_SERVER_ERROR");
            return;
          }
          if (r.mode === "hostile") expect(res.status, says).toBe(400);
          if (r.mode !== "noise") expect(res.status, says).toBeGreaterThanOrEqual(400);
          if (r.mode === "media") expect(res.status, says).toBe(415);
          if (r.mode === "deep") expect(res.status, says).toBe(400);
          if (res.status >= 400) {
            expect(res.type).toContain("application/problem+json");
            const problem = JSON.parse(res.text) as Record<string, unknown>;
            expect(problem).toMatchObject({ status: res.status });
            for (const f of ["type", "title", "detail", "code", "instance", "requestId", "traceId"]) expect(typeof problem[f]).toBe("string");
            if (r.mode === "deep") expect(problem.detail, says).toMatch(/32 levels/);
            const violations = (problem.errors ?? []) as Record<string, unknown>[];
            expect(String(problem.detail), says).not.toMatch(VALIDATOR_WORDING);
            for (const v of violations) {
              expect(String(v.message), says).not.toMatch(VALIDATOR_WORDING);
              // A message that lists the values a field takes gives them as data too.
              if (String(v.message).includes("must be one of")) expect(Array.isArray(v.allowed), says).toBe(true);
            }
          }
        }),
        { numRuns: 30 },
      );
      expect(await countAll()).toEqual(before);
    });
  }

  it("POST /partner/auth/token: malformed or unstorable client credentials → 401 INVALID_CLIENT, never 5xx", async () => {
    // Each ends in a character that is not a hex digit, so what follows it cannot complete the escape.
    const malformed = ["%~", "%zz", "%E0%A4%A~", "%ED%A0%80", "%0~"];
    const id = printable.filter((t) => !t.includes(":"));
    // HTTP Basic parts are form-urlencoded: a bad escape anywhere, or an escaped NUL in the client_id.
    const basic = fc
      .oneof(fc.tuple(withUnstorable(id, [...malformed, "%00"]), printable), fc.tuple(id, withUnstorable(printable, malformed)))
      .chain(([clientId, clientSecret]) =>
        fc.boolean().map((form) => ({ headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}` }, body: {}, form })),
      );
    const secret = printable.filter((t) => t !== "");
    // A form body cannot carry an unpaired surrogate (its escapes decode as UTF-8): only JSON can.
    const inBody = fc
      .oneof(
        fc.tuple(withUnstorable(printable, ["\u0000"]), secret, fc.boolean()),
        fc.tuple(withUnstorable(printable, ["\ud800", "\udfff"]), secret, fc.constant(false)),
      )
      .map(([clientId, clientSecret, form]) => ({ headers: {}, body: { client_id: clientId, client_secret: clientSecret }, form }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(basic, inBody), async ({ headers, body, form }) => {
        const fields = { grant_type: "client_credentials", ...body };
        const res = await fetch(`${app.baseUrl}/partner/auth/token`, {
          method: "POST",
          headers: { ...headers, "content-type": form ? "application/x-www-form-urlencoded" : "application/json" },
          body: form ? new URLSearchParams(fields).toString() : JSON.stringify(fields),
        });
        const text = await res.text();
        expect(res.status, `${JSON.stringify({ headers, body })}: ${text}`).toBe(401);
        expect(res.headers.get("content-type")).toBe("application/json");
        expect(JSON.parse(text)).toMatchObject({ code: "INVALID_CLIENT", error: "invalid_client" });
      }),
      { numRuns: 30 },
    );
  });
});
