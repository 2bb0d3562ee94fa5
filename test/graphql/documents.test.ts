import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";
import { documentNesting } from "../../src/graphql/documents.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "../platform/support.js";

/**
 * What one GraphQL document may cost the process: its size, its tokens and its nesting are refused before it is
 * parsed, and only accepted documents are kept for reuse, within a budget in bytes.
 */

interface Answer {
  status: number;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function post(baseUrl: string, token: string, query: string): Promise<Answer> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

/** A gauge's value from /metrics. */
async function gauge(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(" ")[1]);
}

/** `count` aliases of one page of orders: a document whose cost grows with `count` and `limit`. */
const aliases = (tag: string, count: number, limit = 20) =>
  `{ ${Array.from({ length: count }, (_, i) => `${tag}${i}: orders(limit: ${limit}) { data { id } }`).join(" ")} }`;

describe("GraphQL documents", () => {
  let app: TestApp;
  let t: Tenant;
  beforeAll(async () => {
    app = await startTestApp();
    t = await createTenant(app);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("a document larger than GRAPHQL_MAX_DOCUMENT_BYTES is 413 before it is parsed", async () => {
    const query = `{ store { name } }${" ".repeat(65_536)}`;
    const answer = await post(app.baseUrl, t.token, query);
    expect(answer.status).toBe(413);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe("PAYLOAD_TOO_LARGE");
    expect(answer.body.errors?.[0]?.message).toMatch(/GRAPHQL_MAX_DOCUMENT_BYTES/);
  });

  it("a document of more than GRAPHQL_MAX_TOKENS tokens is 400, however small", async () => {
    const query = `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: __typename`).join(" ")} }`;
    expect(Buffer.byteLength(query)).toBeLessThan(65_536);
    const answer = await post(app.baseUrl, t.token, query);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors?.[0]?.extensions?.code).toBe("INVALID_REQUEST");
    expect(answer.body.errors?.[0]?.message).toMatch(/5000 tokens/);
  });

  it("brackets nested thousands deep are 400, never a stack overflow", async () => {
    for (const query of [`{ orders(limit: ${"[".repeat(3000)}1${"]".repeat(3000)}) { data { id } } }`, `${"{ store ".repeat(2000)}${"}".repeat(2000)}`]) {
      const answer = await post(app.baseUrl, t.token, query);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.extensions?.code).toBe("INVALID_REQUEST");
    }
    const after = await post(app.baseUrl, t.token, "{ store { name } }");
    expect(after.status).toBe(200);
  });

  it("a body that is not a JSON object is 400 before GraphQL sees it, a large array included", async () => {
    for (const body of [JSON.stringify(Array.from({ length: 50_000 }, () => 1)), '"{ store { name } }"', ""]) {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${t.token}` },
        body,
      });
      expect(res.status).toBe(400);
    }
  });

  it("keeps accepted documents for reuse and never a refused or unparsable one", async () => {
    const before = await gauge(app.baseUrl, "graphql_documents_kept");
    // Refused for cost (each distinct), for an unknown field, and unparsable.
    for (let i = 0; i < 20; i++) {
      const answer = await post(app.baseUrl, t.token, aliases(`c${i}_`, 300, 100));
      expect(answer.body.errors?.[0]?.message).toMatch(/cost/);
    }
    for (let i = 0; i < 10; i++)
      expect((await post(app.baseUrl, t.token, `{ store { nope${i} } }`)).body.errors?.[0]?.extensions?.code).toBe("INVALID_REQUEST");
    for (let i = 0; i < 10; i++) expect((await post(app.baseUrl, t.token, `{ store { name } ${i}`)).body.errors?.[0]?.extensions?.code).toBe("INVALID_REQUEST");
    expect(await gauge(app.baseUrl, "graphql_documents_kept")).toBe(before);
    // One accepted document, twice: kept once.
    for (let i = 0; i < 2; i++) expect((await post(app.baseUrl, t.token, "{ store { name code } }")).status).toBe(200);
    expect(await gauge(app.baseUrl, "graphql_documents_kept")).toBe(before + 1);
    expect(await gauge(app.baseUrl, "graphql_documents_kept_bytes")).toBeGreaterThan(0);
  });

  it("a partner's refused introspection is not kept, and the administrator's accepted one still runs", async () => {
    const query = "{ __schema { queryType { name } } }";
    const refused = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code === "INVALID_REQUEST" && answer.body.data === undefined;
    expect(refused(await post(app.baseUrl, t.token, query))).toBe(true);
    const admin = await post(app.baseUrl, ADMIN_KEY, query);
    expect(admin.body).toEqual({ data: { __schema: { queryType: { name: "Query" } } } });
    // The administrator's validation does not let the partner through from the cache.
    expect(refused(await post(app.baseUrl, t.token, query))).toBe(true);
  });
});

describe("the nesting scan", () => {
  it("counts brackets outside strings, block strings and comments", () => {
    expect(documentNesting("{ a(b: [[1]]) { c } }")).toBe(4);
    expect(documentNesting('{ a(b: "{{{[[[") }')).toBe(2);
    expect(documentNesting('{ a(b: """ {{{ \\""" [[[ """) }')).toBe(2);
    expect(documentNesting("# {{{{{\n{ a }")).toBe(1);
  });
});

describe("a process with npm start's 256 MB heap", () => {
  let app: TestApp;
  let api: ApiProcess;
  let t: Tenant;
  beforeAll(async () => {
    app = await startTestApp();
    t = await createTenant(app);
    api = await startApiProcess(app.databaseUrl, { NODE_OPTIONS: "--max-old-space-size=256" });
  }, 150_000);
  afterAll(async () => {
    if (api) await stopApiProcess(api);
    await app?.close();
  });

  it("survives distinct large documents, refused or unparsable, and keeps serving", async () => {
    // Each kind exhausted the heap when every parsed document and parse error was kept by its text: 900 KB
    // unparsable documents, 380 KB documents of 20,000 aliases, and 50 KB documents refused for their cost (each
    // about 5 MB once parsed).
    for (let i = 0; i < 10; i++) expect((await post(api.baseUrl, t.token, `{ x${i} ${"a ".repeat(450_000)}`)).status).toBe(413);
    for (let i = 0; i < 10; i++) expect((await post(api.baseUrl, t.token, aliases(`x${i}_`, 20_000))).status).toBe(413);
    for (let i = 0; i < 25; i++) {
      const query = aliases(`a${i}_${"x".repeat(120)}_`, 300, 100);
      expect(Buffer.byteLength(query)).toBeGreaterThan(45_000);
      expect((await post(api.baseUrl, t.token, query)).body.errors?.[0]?.message).toMatch(/cost/);
    }
    expect((await post(api.baseUrl, t.token, "{ store { name } }")).status).toBe(200);
    expect(api.child.exitCode).toBeNull();
    expect(await gauge(api.baseUrl, "graphql_documents_kept")).toBe(1);
    expect(await gauge(api.baseUrl, "nodejs_heap_size_used_bytes")).toBeLessThan(200 * 1024 * 1024);
  }, 120_000);
});
