import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { loadConfig } from "../../src/platform/config.js";
import { createPortal, portalPolicy } from "../../src/http/portal.js";
import { ServerResponse, IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** PORTAL_FRAME_ANCESTORS: who may frame the portal, in its CSP and, where it can say it, X-Frame-Options. */

describe("PORTAL_FRAME_ANCESTORS", () => {
  it("defaults to 'none', takes 'self' and origins, and refuses anything that is not a frame-ancestors source", () => {
    expect(loadConfig({}).PORTAL_FRAME_ANCESTORS).toBe("'none'");
    expect(loadConfig({ PORTAL_FRAME_ANCESTORS: "  'self'   https://*.example.com https://dash.example.com:8443 " }).PORTAL_FRAME_ANCESTORS).toBe(
      "'self' https://*.example.com https://dash.example.com:8443",
    );
    for (const bad of ["https://a.example.com; script-src *", "'none' https://a.example.com", "*", "javascript:alert(1)", "https://a.example.com/path"]) {
      expect(() => loadConfig({ PORTAL_FRAME_ANCESTORS: bad }), bad).toThrow(/PORTAL_FRAME_ANCESTORS/);
    }
  });

  it("a process without the build answers 503 saying how to build it, not 500", async () => {
    const empty = await mkdtemp(join(tmpdir(), "no-portal-"));
    try {
      const res = new ServerResponse(new IncomingMessage(new Socket()));
      await expect(createPortal("'none'", `${empty}/`).handle("GET", "/portal", res)).rejects.toMatchObject({
        code: "SERVICE_UNAVAILABLE",
        detail: expect.stringContaining("npm run build"),
      });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("is the policy's frame-ancestors", () => {
    expect(portalPolicy("https://dash.example.com")).toMatch(/(^|; )frame-ancestors https:\/\/dash\.example\.com($|;)/);
  });

  describe("on the portal's responses", () => {
    let apps: TestApp[] = [];
    beforeAll(async () => {
      apps = await Promise.all([startTestApp({ PORTAL_FRAME_ANCESTORS: "https://dash.example.com" }), startTestApp({ PORTAL_FRAME_ANCESTORS: "'self'" })]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all(apps.map((a) => a.close()));
    });

    it("an origin: frame-ancestors names it and X-Frame-Options, which cannot, is left out; the API keeps DENY", async () => {
      const res = await fetch(`${apps[0].baseUrl}/portal`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors https://dash.example.com");
      expect(res.headers.get("x-frame-options")).toBeNull();
      const api = await fetch(`${apps[0].baseUrl}/healthz`);
      expect(api.headers.get("x-frame-options")).toBe("DENY");
      expect(api.headers.get("content-security-policy")).toBeNull();
    });

    it("its hashed assets count under one metrics route", async () => {
      const page = await (await fetch(`${apps[0].baseUrl}/portal`)).text();
      const asset = /src="(\/portal\/assets\/[^"]+)"/.exec(page)?.[1];
      expect((await fetch(`${apps[0].baseUrl}${asset}`)).status).toBe(200);
      const metrics = await (await fetch(`${apps[0].baseUrl}/metrics`)).text();
      expect(metrics).toContain('route="/portal/assets/{name}"');
      expect(metrics).not.toContain(`route="${asset}"`);
    });

    it("'self': SAMEORIGIN", async () => {
      const res = await fetch(`${apps[1].baseUrl}/portal/`);
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'self'");
      expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    });
  });
});
