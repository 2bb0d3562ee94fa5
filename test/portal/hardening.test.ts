import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { Browser, Page } from "playwright-core";
import type { Runner } from "graphile-worker";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, call, createTenant, graphql, grantChangeSeen, type Tenant } from "../helpers/tenants.js";
import { startReceiver, waitFor, type Receiver } from "../webhooks/receiver.js";
import { startWorker } from "../../workers/runner.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { setApplicationStatus } from "../../src/modules/admin/operations.js";
import { sha256Hex } from "../../src/platform/crypto/hash.js";
import { accessible, launchBrowser, skipBrowser } from "./browser.js";

/**
 * What keeps the portal's session the partner's own, in Chromium against the real service: no page of another origin
 * keeps a handle on the portal's window (Cross-Origin-Opener-Policy), a portal link opened while signed in asks before
 * it replaces the session, a wrong secret is answered in the page (never by the browser's password dialog), a token
 * the API refuses ends the session while a refusal of one operation does not, Sign out revokes the token; and the
 * small things a partner reads: the endpoint of each delivery, the event types the feed can return, times in UTC.
 */

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let browser: Browser;

const SESSION_KEY = "partner-portal-session";

/**
 * A page in a context of its own (its own sessionStorage), in a browser zone that is not UTC; closed when the test
 * ends, so pages of earlier tests do not keep renderers and streams busy under the next.
 */
async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, timezoneId: "America/Sao_Paulo" });
  onTestFinished(() => context.close());
  return context.newPage();
}

const heading = (page: Page) => page.getByRole("heading", { level: 1 }).textContent();

async function signIn(page: Page, tenant: Tenant): Promise<void> {
  await page.goto(`${app.baseUrl}/portal`);
  await page.getByLabel("Client ID").fill(tenant.clientId);
  await page.getByLabel("Client secret").fill(tenant.clientSecret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => heading(page)).toBe("Overview");
}

/** The token the page holds, and the store code it is for; null when signed out. */
async function heldSession(page: Page): Promise<{ token: string; tenantId: string } | null> {
  const text = await page.evaluate<string | null>(`sessionStorage.getItem(${JSON.stringify(SESSION_KEY)})`);
  return text ? JSON.parse(text) : null;
}

async function go(page: Page, link: string): Promise<void> {
  await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: link, exact: true }).click();
  await expect.poll(() => heading(page)).toBe(link);
}

/** A one-time portal link for the tenant, as the service's own address (the link names PUBLIC_BASE_URL). */
async function portalLink(tenant: Tenant): Promise<{ url: string; secret: string }> {
  const made = await graphql<{ createPortalLink: { url: string } }>(
    app,
    "mutation($input: CreatePortalLinkInput!) { createPortalLink(input: $input) { url } }",
    { input: { clientId: tenant.clientId, storeId: tenant.storeId, ttlMinutes: 5 } },
    ADMIN_KEY,
  );
  const { hash } = new URL(made.data!.createPortalLink.url);
  return { url: `${app.baseUrl}/portal${hash}`, secret: new URLSearchParams(hash.slice(1)).get("link_secret")! };
}

const linkUsed = async (secret: string) => (await app.services.db.portalLink.findUniqueOrThrow({ where: { secretHash: sha256Hex(secret) } })).usedAt !== null;

async function createEndpoint(tenant: Tenant, url: string, events: string[]): Promise<string> {
  const res = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", { token: tenant.token, body: { url, events } });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe.skipIf(skipBrowser)("the portal's session stays the partner's own", () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "1h", WEBHOOK_TIMEOUT_MS: "2000" });
    receiver = await startReceiver();
    worker = await startWorker(app.services, app.databaseUrl);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    destroyWebhookAgents();
    await app?.close();
  });

  it("its pages carry Cross-Origin-Opener-Policy: same-origin, so a page of another origin that opened it cannot navigate it", async () => {
    const page = await fetch(`${app.baseUrl}/portal`);
    expect(page.headers.get("cross-origin-opener-policy")).toBe("same-origin");
    const asset = /src="(\/portal\/assets\/[^"]+)"/.exec(await page.text())?.[1];
    expect((await fetch(`${app.baseUrl}${asset}`)).headers.get("cross-origin-opener-policy")).toBe("same-origin");

    const victim = await createTenant(app, { name: "Pizzaria Opened" });
    const attacker = await createTenant(app, { name: "Attacker's store" });
    // Another origin: the receiver, a plain HTTP server on another port of 127.0.0.1.
    receiver.on("/elsewhere", () => ({
      headers: { "content-type": "text/html; charset=utf-8" },
      body: "<!doctype html><title>Elsewhere</title><p>Another site</p>",
    }));
    const opener = await newPage();
    await opener.goto(receiver.url("/elsewhere"));
    const [portal] = await Promise.all([
      opener.context().waitForEvent("page"),
      opener.evaluate(`window.portal = window.open(${JSON.stringify(`${app.baseUrl}/portal`)}); 0`),
    ]);
    await expect.poll(() => heading(portal)).toBe("Sign in");
    await portal.getByLabel("Client ID").fill(victim.clientId);
    await portal.getByLabel("Client secret").fill(victim.clientSecret);
    await portal.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => heading(portal)).toBe("Overview");
    expect(await portal.evaluate("window.opener")).toBeNull();

    // Later, the opener tries to send the portal to the attacker's link: its handle was severed when the portal loaded.
    const link = await portalLink(attacker);
    const severed = await opener.evaluate<boolean>(`(() => {
      const closed = window.portal.closed;
      try { window.portal.location = ${JSON.stringify(link.url)}; } catch {}
      return closed;
    })()`);
    expect(severed).toBe(true);
    await portal.waitForTimeout(1500);
    expect(await heading(portal)).toBe("Overview");
    expect(portal.url()).not.toContain("link_secret");
    expect((await heldSession(portal))?.tenantId).toBe(victim.storeCode);
    expect(await linkUsed(link.secret)).toBe(false);
  });

  it("a portal link opened while signed in asks first, keeps the session until confirmed, and the switch revokes the old token", async () => {
    const mine = await createTenant(app, { name: "Pizzaria Mine" });
    const other = await createTenant(app, { name: "Pizzaria Other" });
    const page = await newPage();
    await signIn(page, mine);
    const before = await heldSession(page);
    const link = await portalLink(other);

    const asked = async () => {
      await expect.poll(() => heading(page)).toBe("Switch to another store?");
      expect(page.url()).not.toContain("link_secret");
      const main = (await page.getByRole("main").textContent()) ?? "";
      expect(main).toContain(`You are signed in to the store ${mine.storeCode}`);
      expect(main).toContain("would switch this tab to that store");
      expect(await heldSession(page)).toEqual(before);
      expect(await linkUsed(link.secret)).toBe(false);
    };

    // Pasted into the open portal (only the fragment changes): asked, and kept.
    await page.goto(link.url);
    await asked();
    await accessible(page, "Switch to another store?");
    await page.getByRole("button", { name: `Stay signed in to ${mine.storeCode}` }).click();
    await expect.poll(() => heading(page)).toBe("Overview");
    expect(await heldSession(page)).toEqual(before);
    expect(await linkUsed(link.secret)).toBe(false);

    // Loaded afresh in the tab that holds the session: asked again, and switched.
    await page.goto("about:blank");
    await page.goto(link.url);
    await asked();
    await page.getByRole("button", { name: "Sign out and open the link" }).click();
    await expect.poll(() => heading(page)).toBe("Overview");
    await expect.poll(() => page.getByRole("main").textContent()).toContain("Pizzaria Other");
    expect((await heldSession(page))?.tenantId).toBe(other.storeCode);
    expect(await linkUsed(link.secret)).toBe(true);
    expect((await call(app, "GET", "/public/v1/store", { token: before!.token })).status).toBe(401);
  });

  it("a wrong secret shows the API's reason within seconds, with no browser dialog, and the page stays usable", async () => {
    const tenant = await createTenant(app);
    const page = await newPage();
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.type());
      void d.dismiss();
    });
    await page.goto(`${app.baseUrl}/portal`);
    await page.getByLabel("Client ID").fill(tenant.clientId);
    await page.getByLabel("Client secret").fill("cs_wrong");
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === "/partner/auth/token");
    const started = performance.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent(), { timeout: 5000 }).toContain("Unknown client_id or wrong client_secret.");
    console.info(`wrong secret: the reason shown ${Math.round(performance.now() - started)} ms after Sign in`);

    // The credentials went in the form body, not as HTTP Basic, so the 401 challenges nobody.
    const response = await answered;
    const request = response.request();
    expect(response.status()).toBe(401);
    expect(response.headers()["www-authenticate"]).toBeUndefined();
    expect(await request.headerValue("authorization")).toBeNull();
    expect(await request.headerValue("content-type")).toBe("application/x-www-form-urlencoded");
    expect(new URLSearchParams(request.postData() ?? "").get("client_secret")).toBe("cs_wrong");
    await accessible(page, "Sign in, wrong secret");

    await page.getByLabel("Client secret").fill(tenant.clientSecret);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => heading(page)).toBe("Overview");
    expect(dialogs).toEqual([]);
  });

  it("a refusal of one operation (an endpoint an administrator holds INACTIVE, a missing scope) is shown on the page, signed in", async () => {
    const tenant = await createTenant(app);
    const id = await createEndpoint(tenant, receiver.url("/held"), ["order.created"]);
    const held = await graphql(app, "mutation($id: ID!) { setWebhookEndpointStatus(id: $id, status: INACTIVE) { id } }", { id }, ADMIN_KEY);
    expect(held.errors).toBeUndefined();
    const page = await newPage();
    await signIn(page, tenant);
    await page.goto(`${app.baseUrl}/portal#/webhooks/${id}`);
    await expect.poll(() => heading(page)).toBe("Endpoint");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("set INACTIVE by an administrator");
    expect(await heading(page)).toBe("Endpoint");
    expect(await heldSession(page)).not.toBeNull();

    const reader = await createTenant(app, { scopes: ["orders:read"] });
    const limited = await newPage();
    await signIn(limited, reader);
    await go(limited, "Webhooks");
    await expect.poll(() => limited.getByRole("alert").textContent()).toContain("Insufficient scope");
    expect(await heading(limited)).toBe("Webhooks");
    expect(await heldSession(limited)).not.toBeNull();
  });

  it("a token the API refuses (the Application disabled) returns the page to Sign in with the API's reason", async () => {
    const tenant = await createTenant(app);
    const page = await newPage();
    await signIn(page, tenant);
    // The overview's own read of the store answers first: refused after the disable, it would sign the page out
    // before the click this test makes, and the click would wait for a link that is gone.
    await expect.poll(() => page.locator(".facts dd").first().textContent()).toMatch(/^Store /);
    await setApplicationStatus(app.services.db, tenant.clientId, "DISABLED");
    await grantChangeSeen(app);
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Webhooks", exact: true }).click();
    await expect.poll(() => heading(page)).toBe("Sign in");
    expect(await page.getByRole("alert").textContent()).toContain("This Application is disabled");
    expect(await heldSession(page)).toBeNull();
    await accessible(page, "Sign in, Application disabled");
  });

  it("the deliveries list names each delivery's endpoint and links to it; Recover takes UTC", async () => {
    const tenant = await createTenant(app);
    const urls = [receiver.url("/first"), receiver.url("/second")];
    const ids = [await createEndpoint(tenant, urls[0], ["order.created"]), await createEndpoint(tenant, urls[1], ["order.created"])];
    const order = await call(app, "POST", "/public/v1/sandbox/orders", { token: tenant.token, body: { scenario: "delivery" } });
    expect(order.status).toBe(201);
    await waitFor("both deliveries", async () => (await app.services.db.webhookDelivery.count({ where: { endpointId: { in: ids } } })) === 2);

    const page = await newPage();
    await signIn(page, tenant);
    await go(page, "Deliveries");
    await page.getByLabel("Event type").selectOption("order.created");
    const rows = page.getByRole("row").filter({ hasText: "order.created" });
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByRole("columnheader").allTextContents()).toContain("Endpoint");
    for (const [i, url] of urls.entries()) {
      const link = rows.getByRole("link", { name: url, exact: true });
      expect(await link.getAttribute("href")).toBe(`#/webhooks/${ids[i]}`);
    }
    await accessible(page, "Deliveries with their endpoints");

    await rows.getByRole("link", { name: urls[1], exact: true }).click();
    await expect.poll(() => heading(page)).toBe("Endpoint");
    await expect.poll(() => page.getByRole("main").textContent()).toContain(urls[1]);
    expect(await page.getByRole("contentinfo").textContent()).toContain("UTC");
    // The browser's zone is São Paulo's; the window entered is read as UTC all the same.
    await page.getByLabel("From (UTC)").fill("2026-01-02T03:04:05");
    const recovery = page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname.endsWith("/recover"));
    await page.getByRole("button", { name: "Recover", exact: true }).click();
    expect(JSON.parse((await recovery).postData() ?? "{}")).toMatchObject({ since: "2026-01-02T03:04:05.000Z" });
  });

  it("the events page offers only the types the feed can return to the token", async () => {
    const reader = await createTenant(app, { scopes: ["orders:read", "webhooks:manage"] });
    const page = await newPage();
    await signIn(page, reader);
    await go(page, "Events");
    const types = page.getByRole("group", { name: /^Event types/ }).locator("label");
    await expect.poll(() => types.count()).toBeGreaterThan(0);
    // order.* and the export events (webhooks:manage, in the feed): no webhook.* type, though the token carries
    // webhooks:manage, and none the token may not read.
    const offered = await types.allTextContents();
    expect(offered.every((t) => t.startsWith("order.") || t.startsWith("export."))).toBe(true);
    expect(offered).toContain("export.completed");
  });
});
