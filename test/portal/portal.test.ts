import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { startReceiver, verifySignature, waitFor, type Receiver } from "../webhooks/receiver.js";
import { startWorker } from "../../workers/runner.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { accessible as accessibleIn, launchBrowser, skipBrowser } from "./browser.js";

/**
 * The partner portal in a real browser (Debian's Chromium through playwright-core), against the real service, a
 * real worker and a real webhook receiver on 127.0.0.1. One browser and one page for the whole file: the steps
 * follow a partner through the portal, by role and accessible name. Every page is checked with axe-core, every
 * request the page makes is recorded and must be a documented route or the portal's own assets.
 * UPDATE_SCREENSHOTS=1 writes the screenshots docs/portal.md shows. The global setup builds the portal first.
 */

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? new URL("../../docs/portal/", import.meta.url) : null;
const JS_BUDGET_GZIP_BYTES = 150 * 1024;
const HOSTILE = `<img src=x onerror="window.__pwned=1"></script><b>bold</b>`;

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let tenant: Tenant;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const requests: { method: string; url: string; idempotencyKey: string | undefined }[] = [];
const cspViolations: string[] = [];

const accessible = (what: string) => accessibleIn(page, what);

async function screenshot(name: string, fullPage = true): Promise<void> {
  if (!SCREENSHOTS) return;
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage });
}

async function go(link: string): Promise<void> {
  await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: link, exact: true }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(link);
}

const status = (text: string | RegExp) => page.getByRole("status").filter({ hasText: text });

describe.skipIf(skipBrowser)("the partner portal in a real browser", () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "1h", WEBHOOK_TIMEOUT_MS: "2000" });
    receiver = await startReceiver();
    worker = await startWorker(app.services, app.databaseUrl);
    tenant = await createTenant(app, { name: "Pizzaria Portal" });
    context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.baseUrl });
    context.on("request", (r) => requests.push({ method: r.method(), url: r.url(), idempotencyKey: r.headers()["idempotency-key"] }));
    page = await context.newPage();
    page.on("console", (m) => {
      if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    destroyWebhookAgents();
    await app?.close();
  });

  it("is served from the service's own build with a strict CSP, and its JavaScript stays within budget", async () => {
    const res = await fetch(`${app.baseUrl}/portal`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    const assets = await readdir(new URL("../../dist/portal/assets/", import.meta.url));
    const scripts = assets.filter((f) => f.endsWith(".js"));
    const gzipped = (
      await Promise.all(scripts.map(async (f) => gzipSync(await readFile(new URL(`../../dist/portal/assets/${f}`, import.meta.url))).length))
    ).reduce((a, b) => a + b, 0);
    expect(gzipped).toBeGreaterThan(0);
    expect(gzipped).toBeLessThanOrEqual(JS_BUDGET_GZIP_BYTES);
    const asset = await fetch(`${app.baseUrl}/portal/assets/${scripts[0]}`);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${app.baseUrl}/portal/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/portal`, { method: "POST" })).status).toBe(405);
  });

  it("signs in with client_id and client_secret by keyboard alone; the token stays in sessionStorage", async () => {
    await page.goto(`${app.baseUrl}/portal`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in");
    await accessible("Sign in");
    await screenshot("sign-in");
    const focusedLabel = () => page.evaluate("document.activeElement?.labels?.[0]?.textContent ?? document.activeElement?.textContent ?? ''");
    for (let i = 0; i < 5 && !String(await focusedLabel()).startsWith("Client ID"); i++) await page.keyboard.press("Tab");
    expect(await focusedLabel()).toMatch(/^Client ID/);
    await page.keyboard.type(tenant.clientId);
    await page.keyboard.press("Tab");
    expect(await focusedLabel()).toMatch(/^Client secret/);
    await page.keyboard.type(tenant.clientSecret);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await focusedLabel()).toBe("Sign in");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");

    const session = await page.evaluate<string>("Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)).join('')");
    expect(await page.evaluate<number>("localStorage.length")).toBe(0);
    expect(session).toContain(tenant.storeCode);
    expect(session).not.toContain(tenant.clientSecret);

    const main = page.getByRole("main");
    await expect.poll(() => main.textContent()).toContain("Pizzaria Portal");
    const text = (await main.textContent()) ?? "";
    for (const shown of [tenant.storeCode, "SANDBOX", "webhooks:manage", "orders:read", FIRST_API_VERSION, "Token expires"]) expect(text).toContain(shown);
    await accessible("Overview");
    await screenshot("overview");
  });

  let endpointUrl: string;
  let firstSecret: string;

  it("creates an endpoint at a real receiver, shows its secret once, and sends a test event", async () => {
    endpointUrl = receiver.url("/portal-hooks");
    await go("Webhooks");
    await expect.poll(() => page.getByRole("main").textContent()).toContain("No endpoint yet");
    await page.getByLabel("Endpoint URL").fill(endpointUrl);
    await page.getByRole("checkbox", { name: "order.created", exact: true }).check();
    await page.getByRole("checkbox", { name: "customer.created", exact: true }).check();
    await page.getByRole("button", { name: "Create endpoint" }).click();
    const secretRegion = page.getByRole("region", { name: "Signing secret of the new endpoint" });
    firstSecret = ((await secretRegion.locator("code").textContent()) ?? "").trim();
    expect(firstSecret).toMatch(/^whsec_/);
    const table = page.getByRole("table");
    await expect.poll(() => table.textContent()).toContain(endpointUrl);
    expect(await page.getByRole("columnheader").allTextContents()).toEqual(["URL", "Status", "Last success", "Failures", "Success rate (24 h)"]);
    await accessible("Webhooks");
    await screenshot("webhooks");

    await table.getByRole("link", { name: endpointUrl }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Endpoint");
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect.poll(() => status(/Test event/).textContent(), { timeout: 10_000 }).toContain("DELIVERED (HTTP 200)");
    const [received] = receiver.requests("/portal-hooks");
    expect(JSON.parse(received.body)).toMatchObject({ eventType: "webhook.test" });
    expect(verifySignature(String(received.headers["x-service-signature"]), received.body, firstSecret)).toBe(true);
    await accessible("Endpoint");
    await screenshot("endpoint");
  });

  it("creates a sandbox order whose note renders as text, and shows its delivery with payload and attempts", async () => {
    await go("Sandbox");
    await page.getByLabel("Scenario").selectOption("delivery");
    await page.getByLabel("Order notes (optional)").fill(HOSTILE);
    await page.getByRole("button", { name: "Create order" }).click();
    await expect.poll(() => status(/Order #/).textContent(), { timeout: 10_000 }).toContain("created");
    // The note is shown as the characters it holds: no element was made of it, and nothing ran.
    expect(await page.getByRole("main").textContent()).toContain(HOSTILE);
    expect(await page.locator("main img, main b").count()).toBe(0);
    expect(await page.evaluate("window.__pwned === undefined")).toBe(true);
    await accessible("Sandbox");
    await screenshot("sandbox");

    await go("Deliveries");
    await page.getByLabel("Event type").selectOption("order.created");
    const row = page.getByRole("row").filter({ hasText: "order.created" });
    await expect
      .poll(
        async () => {
          const delivered = await row.filter({ hasText: "DELIVERED" }).count();
          if (delivered === 0) await page.getByRole("button", { name: "Refresh" }).click();
          return delivered;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe(1);
    await accessible("Deliveries");
    await screenshot("deliveries");
    await row.getByRole("link", { name: /^Open delivery of order\.created/ }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Delivery");
    const payload = page.getByRole("region", { name: "Payload as sent" });
    await expect.poll(() => payload.textContent()).toContain('"eventType": "order.created"');
    const attempt = page.getByRole("region", { name: "Attempt 1 (SCHEDULED)" });
    const attemptText = (await attempt.textContent()) ?? "";
    expect(attemptText).toContain("Response status200");
    expect(attemptText).toContain("X-Service-Signature");
    expect(await attempt.getByRole("columnheader").allTextContents()).toEqual(["Header", "Value"]);
    await accessible("Delivery");
  });

  it("shows a failing receiver's answer as text, and Replay shows the new attempt when it lands", async () => {
    receiver.on("/portal-hooks", () => ({ status: 500, body: HOSTILE, headers: { "content-type": "text/html" } }));
    const fired = await call<{ eventId: string }>(app, "POST", "/public/v1/sandbox/events", { token: tenant.token, body: { type: "customer.created" } });
    expect(fired.status).toBe(201);
    const delivery = await waitFor("the failed delivery", () =>
      app.services.db.webhookDelivery.findFirst({ where: { eventId: fired.body.eventId, status: "FAILED" } }),
    );
    await page.goto(`${app.baseUrl}/portal#/deliveries/${delivery.id}`);
    const first = page.getByRole("region", { name: "Attempt 1 (SCHEDULED)" });
    await expect.poll(() => first.textContent()).toContain("Response status500");
    const body = page.getByRole("region", { name: "Response body of attempt 1" });
    expect(await body.textContent()).toBe(HOSTILE);
    expect(await page.locator("main img, main b").count()).toBe(0);
    expect(await page.getByRole("main").textContent()).toContain("Next scheduled attempt");
    await screenshot("delivery-failed");

    receiver.on("/portal-hooks", () => ({ status: 200, body: "ok" }));
    await page.getByRole("button", { name: "Replay" }).click();
    await expect.poll(() => status(/Replay attempt/).textContent(), { timeout: 15_000 }).toContain("Replay attempt 2: HTTP 200");
    expect(await page.getByRole("region", { name: "Attempt 2 (REPLAY)" }).textContent()).toContain("Response status200");
    await expect.poll(() => page.getByRole("main").textContent()).toContain("DELIVERED");
    await accessible("Delivery after replay");
  });

  it("rotates the secret (shown once, with a copy button) and the next delivery verifies with the new one", async () => {
    await go("Webhooks");
    await page.getByRole("table").getByRole("link", { name: endpointUrl }).click();
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const region = page.getByRole("region", { name: "New signing secret" });
    await expect.poll(async () => ((await region.locator("code").textContent()) ?? "").trim()).toMatch(/^whsec_/);
    const rotated = ((await region.locator("code").textContent()) ?? "").trim();
    expect(rotated).not.toBe(firstSecret);
    await region.getByRole("button", { name: "Copy secret" }).click();
    await expect.poll(() => page.evaluate("navigator.clipboard.readText()")).toBe(rotated);

    const before = receiver.requests("/portal-hooks").length;
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect.poll(() => status(/Test event/).textContent(), { timeout: 10_000 }).toContain("DELIVERED");
    const latest = receiver.requests("/portal-hooks")[before];
    expect(verifySignature(String(latest.headers["x-service-signature"]), latest.body, rotated)).toBe(true);

    // Shown once: the page read again holds the prefix only.
    await page.reload();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Endpoint");
    await expect.poll(() => page.getByRole("main").textContent()).toContain(rotated.slice(0, 12));
    expect(await page.getByRole("main").textContent()).not.toContain(rotated);
  });

  it("pauses and resumes the endpoint and recovers a time window", async () => {
    await page.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => status(/The endpoint is/).textContent()).toBe("The endpoint is INACTIVE.");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => status(/The endpoint is/).textContent()).toBe("The endpoint is ACTIVE.");
    await page.getByLabel("From").fill("2020-01-01T00:00:00");
    await page.getByRole("button", { name: "Recover", exact: true }).click();
    await expect.poll(() => status(/deliveries will be sent again/).textContent()).toMatch(/^\d+ deliveries will be sent again/);
  });

  it("the live tail appends an event fired through REST as it commits", async () => {
    await go("Events");
    await expect.poll(() => page.getByRole("table", { name: "Event feed" }).textContent()).toContain("order.created");
    await page.getByRole("button", { name: "Live tail" }).click();
    expect(await page.getByRole("button", { name: "Live tail" }).getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => status(/^Live:/).count(), { timeout: 10_000 }).toBe(1);
    const fired = await call<{ eventId: string }>(app, "POST", "/public/v1/sandbox/events", { token: tenant.token, body: { type: "store.updated" } });
    expect(fired.status).toBe(201);
    const feed = page.getByRole("table", { name: "Event feed" });
    await expect.poll(() => feed.textContent(), { timeout: 2000, interval: 50 }).toContain(fired.body.eventId);
    await accessible("Events");
    await screenshot("events");
    await page.getByRole("button", { name: "Live tail" }).click();
  });

  it("lists every event type with its scope, schema and example from the OpenAPI document", async () => {
    await go("Event types");
    const section = page.getByRole("region", { name: "order.created", exact: true });
    await expect.poll(() => section.textContent()).toContain("orders:read");
    await section.getByText("Example payload of order.created").click();
    expect(await section.getByRole("region", { name: "Example payload of order.created" }).textContent()).toContain('"orderNumber"');
    await section.getByText("Schema of order.created").click();
    expect(await section.getByRole("region", { name: "Schema of order.created" }).textContent()).toContain('"required"');
    expect(await page.getByRole("heading", { level: 2 }).count()).toBeGreaterThanOrEqual(12);
    await accessible("Event types");
    await screenshot("event-types", false);
  });

  it("requests a bulk export and lists it with its download link once written", async () => {
    await go("Exports");
    await page.getByLabel("Resource").selectOption("orders");
    await page.getByRole("button", { name: "Export", exact: true }).click();
    await expect.poll(() => status(/queued/).count()).toBe(1);
    const link = page.getByRole("link", { name: /^Download/ });
    await expect
      .poll(async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return link.count();
      })
      .toBe(1);
    expect(await link.getAttribute("href")).toMatch(/\/public\/v1\/exports\/[0-9a-f-]{36}\/file\?expires=\d+&signature=/);
    await accessible("Exports");
  });

  it("shows an API error as the problem's title and detail with its traceId", async () => {
    await go("Webhooks");
    await page.getByLabel("Endpoint URL").fill("http://169.254.169.254/latest");
    await page.getByRole("checkbox", { name: "order.created", exact: true }).check();
    await page.getByRole("button", { name: "Create endpoint" }).click();
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("Unprocessable entity");
    expect(await alert.textContent()).toMatch(/Trace ID \(quote it to support\): [0-9a-f]{32}/);
  });

  it("Sign out revokes the token and forgets it", async () => {
    const held: { token: string } = JSON.parse(await page.evaluate<string>("Object.values(sessionStorage)[0]"));
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in");
    expect(await page.evaluate("sessionStorage.length + localStorage.length")).toBe(0);
    expect((await call(app, "GET", "/public/v1/webhooks", { token: held.token })).status).toBe(401);
    await page.goto(`${app.baseUrl}/portal#/webhooks`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in");
  });

  it("signs in with an administrator's portal link, once; the secret leaves the address bar", async () => {
    const made = await graphql<{ createPortalLink: { url: string } }>(
      app,
      "mutation($input: CreatePortalLinkInput!) { createPortalLink(input: $input) { url } }",
      { input: { clientId: tenant.clientId, storeId: tenant.storeId, ttlMinutes: 5 } },
      ADMIN_KEY,
    );
    const link = new URL(made.data!.createPortalLink.url);
    const local = `${app.baseUrl}/portal${link.hash}`;
    await page.goto(local);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    expect(page.url()).not.toContain("link_secret");
    expect(await page.getByRole("main").textContent()).toContain(tenant.storeCode);
    await page.getByRole("button", { name: "Sign out" }).click();

    await page.goto(local);
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("already used");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in");
  });

  it("made no request outside the service, and only documented routes and its own assets", async () => {
    // The document the service publishes (the printed contract's freshness is the contract suite's to check).
    const doc: { paths: Record<string, Record<string, unknown>> } = await (await fetch(`${app.baseUrl}/public/v1/openapi.json`)).json();
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`) })),
    );
    const origin = new URL(app.baseUrl).origin;
    expect(requests.filter((r) => !r.url.startsWith("data:") && new URL(r.url).origin !== origin)).toEqual([]);
    const undocumented = requests
      .map((r) => ({ method: r.method, path: new URL(r.url).pathname }))
      .filter(({ method, path }) => {
        if (method === "GET" && (path === "/portal" || /^\/portal\/assets\/[\w-]+\.(js|css)$/.test(path))) return false;
        // The live tail's stream: the subscription storeEvents, documented with the GraphQL schema.
        if (method === "POST" && path === "/graphql") return false;
        return !operations.some((o) => o.method === method && o.pattern.test(path));
      });
    expect(undocumented).toEqual([]);
    const used = new Set(requests.map((r) => `${r.method} ${new URL(r.url).pathname.replace(/[0-9a-f-]{36}/g, "{id}")}`));
    for (const route of [
      "POST /partner/auth/token",
      "POST /partner/auth/revoke",
      "POST /partner/auth/portal-link",
      "POST /public/v1/webhooks",
      "POST /public/v1/webhooks/{id}/test",
      "POST /public/v1/webhooks/{id}/rotate-secret",
      "PATCH /public/v1/webhooks/{id}",
      "POST /public/v1/webhooks/{id}/recover",
      "POST /public/v1/webhooks/deliveries/{id}/replay",
      "GET /public/v1/webhooks/deliveries/{id}/attempts",
      "POST /public/v1/sandbox/orders",
      "GET /public/v1/events",
      "POST /public/v1/exports",
      "GET /public/v1/exports",
      "GET /public/v1/openapi.json",
      "POST /graphql",
    ]) {
      expect(used, route).toContain(route);
    }
    expect(cspViolations).toEqual([]);
  });

  it("sent an Idempotency-Key with every write to the API", () => {
    const writes = requests.filter((r) => r.method !== "GET" && new URL(r.url).pathname.startsWith("/public/v1/"));
    expect(writes.length).toBeGreaterThanOrEqual(8);
    expect(writes.filter((w) => !w.idempotencyKey)).toEqual([]);
    expect(new Set(writes.map((w) => w.idempotencyKey)).size).toBe(writes.length);
  });
});
