import { LATEST_API_VERSION } from "../../src/platform/versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { routes } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call } from "../helpers/tenants.js";

/** The published contract over HTTP: the document without a token, and the reference page, offline. */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

describe("GET /public/v1/openapi.json", () => {
  it("serves the document for this deployment's base URL, without a token", async () => {
    const res = await call(app, "GET", "/public/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApi(routes, schema, "http://api.test.local", LATEST_API_VERSION))));
    expect((res.body as { servers: { url: string }[] }).servers[0].url).toBe("http://api.test.local");
  });

  it("answers other methods with 405", async () => {
    const res = await call(app, "POST", "/public/v1/openapi.json", { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
  });
});

describe("GET /docs", () => {
  it("is an HTML page that loads Redoc from this server only", async () => {
    const res = await fetch(`${app.baseUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('spec-url="/public/v1/openapi.json"');
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(["/docs/assets/redoc.standalone.js"]);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("serves the Redoc bundle from the installed package", async () => {
    const res = await fetch(`${app.baseUrl}/docs/assets/redoc.standalone.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
    const js = await res.text();
    expect(js.length).toBeGreaterThan(500_000);
    expect(js).toContain("ReDoc");
    // Redoc's sidebar logo came from Redocly's CDN.
    expect(js).not.toContain("cdn.redoc.ly");
  });

  it("answers an unknown asset with a 404 problem", async () => {
    const res = await call(app, "GET", "/docs/assets/nope.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});
