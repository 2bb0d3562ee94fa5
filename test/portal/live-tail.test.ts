import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { revokeGrant } from "../../src/modules/admin/operations.js";
import { accessible, launchBrowser, skipBrowser } from "./browser.js";

/**
 * The events page's live tail in a real browser against the real service: it follows the store's events over the
 * live stream (the subscription storeEvents over Server-Sent Events), reads nothing of the feed while the stream is
 * open, comes back after the service restarts having caught up what it missed, and returns to Sign in, saying why,
 * when its credential ends.
 */

let app: TestApp;
let tenant: Tenant;
let browser: Browser;
let page: Page;
/** The page's requests by kind, in order: feed reads (GET /public/v1/events) and stream openings (POST /graphql). */
const requests: ("feed" | "stream")[] = [];

const feedReads = () => requests.filter((r) => r === "feed").length;
const streamOpenings = () => requests.filter((r) => r === "stream").length;
const tailStatus = () => page.getByRole("status").first().textContent();
const feed = () => page.getByRole("table", { name: "Event feed" });
/** How many rows of the feed show this event. */
const rowsOf = (eventId: string) => feed().getByRole("row").filter({ hasText: eventId }).count();

async function fire(on: TestApp): Promise<string> {
  const res = await call<{ eventId: string }>(on, "POST", "/public/v1/sandbox/events", { token: tenant.token, body: { type: "store.updated" } });
  expect(res.status).toBe(201);
  return res.body.eventId;
}

/** Fires an event through REST and answers how long it took to show on the page, in ms (at most 2 s). */
async function shownWithin2s(on: TestApp): Promise<number> {
  const eventId = await fire(on);
  const fired = performance.now();
  await expect.poll(() => rowsOf(eventId), { timeout: 2000, interval: 25 }).toBe(1);
  return performance.now() - fired;
}

async function signIn(): Promise<void> {
  await page.goto(`${app.baseUrl}/portal`);
  await page.getByLabel("Client ID").fill(tenant.clientId);
  await page.getByLabel("Client secret").fill(tenant.clientSecret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
}

async function tailOn(): Promise<void> {
  await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Events", exact: true }).click();
  await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Events");
  await page.getByRole("button", { name: "Live tail" }).click();
  await expect.poll(tailStatus, { timeout: 10_000 }).toMatch(/^Live:/);
}

describe.skipIf(skipBrowser)("the portal's live tail", () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    app = await startTestApp();
    tenant = await createTenant(app, { name: "Pizzaria Live" });
    page = await browser.newPage();
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (r.method() === "GET" && path === "/public/v1/events") requests.push("feed");
      if (r.method() === "POST" && path === "/graphql") requests.push("stream");
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("shows an event fired through REST within 2 s, and reads nothing of the feed while the stream is open", async () => {
    await fire(app);
    await signIn();
    await tailOn();
    const [reads, openings] = [feedReads(), streamOpenings()];
    const started = performance.now();
    const delays = [await shownWithin2s(app), await shownWithin2s(app)];
    console.info(`live tail: events shown ${delays.map((d) => `${Math.round(d)} ms`).join(", ")} after their REST call answered`);
    // Longer than the 5 s the tail used to poll at: not one feed read, and the one stream still open.
    await page.waitForTimeout(6000 - (performance.now() - started));
    expect(feedReads()).toBe(reads);
    expect(streamOpenings()).toBe(openings);
    expect(await tailStatus()).toMatch(/^Live:/);
    await accessible(page, "Events, live");
  });

  it("reconnects after the service restarts, catches up an event fired while it was down, and is live again", async () => {
    const port = Number(new URL(app.baseUrl).port);
    const { database } = app;
    const shown = await feed().getByRole("row").count();
    await app.stop();
    await expect.poll(tailStatus, { timeout: 5000 }).toMatch(/Reconnecting in \d+ s…$/);
    await accessible(page, "Events, reconnecting");

    // While nothing listens at the page's address, another process on the same database takes an event.
    const elsewhere = await startTestApp({}, { database });
    const missed = await fire(elsewhere);
    await elsewhere.stop();

    app = await startTestApp({}, { port, database });
    await expect.poll(() => rowsOf(missed), { timeout: 40_000, interval: 100 }).toBe(1);
    await expect.poll(tailStatus, { timeout: 5000 }).toMatch(/^Live:/);
    // Nothing shown twice: the rows before, and the one missed.
    expect(await feed().getByRole("row").count()).toBe(shown + 1);
    // Connected again, the tail reads the stream only.
    const reads = feedReads();
    await shownWithin2s(app);
    expect(feedReads()).toBe(reads);
  });

  it("returns to Sign in, saying why, when the store revokes the grant, and opens no stream again", async () => {
    await revokeGrant(app.services.db, { clientId: tenant.clientId, storeId: tenant.storeId });
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe("Sign in");
    expect(await page.getByRole("alert").textContent()).toContain("revoked this Application's access");
    const openings = streamOpenings();
    await page.waitForTimeout(3000);
    expect(streamOpenings()).toBe(openings);
    await accessible(page, "Sign in, grant revoked");
  });

  it("returns to Sign in, saying why, when the token expires while the stream is open", async () => {
    // A restart with 5-second tokens, and a new grant for the Application.
    const port = Number(new URL(app.baseUrl).port);
    const { database } = app;
    await app.stop();
    app = await startTestApp({ ACCESS_TOKEN_TTL_SECONDS: "5" }, { port, database });
    tenant = await createTenant(app, { name: "Pizzaria Expiring" });
    await signIn();
    await tailOn();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe("Sign in");
    expect(await page.getByRole("alert").textContent()).toContain("expired");
  });
});
