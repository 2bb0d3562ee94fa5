import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, createTenant, type Tenant } from "../helpers/tenants.js";

// Debian's chromium package; CHROMIUM_PATH points elsewhere. Without a browser this file fails, saying so,
// unless ALLOW_NO_BROWSER=1 lets it skip (with a warning) on a machine that cannot install one.
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const browserMissing = !existsSync(CHROMIUM);
const skip = browserMissing && process.env.ALLOW_NO_BROWSER === "1";
if (skip) console.warn(`\n*** GraphiQL browser test SKIPPED: no Chromium at ${CHROMIUM} (ALLOW_NO_BROWSER=1) ***\n`);

let app: TestApp;
let tenant: Tenant;
let browser: Browser;

describe.skipIf(skip)("GraphiQL in a real browser", () => {
  beforeAll(async () => {
    if (browserMissing) {
      throw new Error(
        `No Chromium at ${CHROMIUM}: install it (apt-get install -y chromium), point CHROMIUM_PATH at one, or set ALLOW_NO_BROWSER=1 to skip this test.`,
      );
    }
    app = await startTestApp();
    tenant = await createTenant(app);
    // Root in a container has no user namespaces for Chromium's sandbox.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("loads with no request outside the service, runs a query with the admin key typed into the headers editor", async () => {
    const context = await browser.newContext();
    const requests: string[] = [];
    // The context sees the page's requests and its workers'.
    context.on("request", (request) => requests.push(request.url()));
    const page = await context.newPage();
    const response = await page.goto(`${app.baseUrl}/graphql`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe("Partner platform GraphQL");
    // Every request stays on the service; data: and blob: URLs (the inlined favicon and editor workers) never
    // leave the page. Checked once loaded, then again after the query ran.
    const origin = new URL(app.baseUrl).origin;
    const outside = () => requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin);
    expect(outside()).toEqual([]);

    const queryEditor = page.locator(".graphiql-query-editor .monaco-editor").first();
    await queryEditor.waitFor({ timeout: 60_000 });

    // The headers tab, then its editor: the placeholder header is replaced by the admin key.
    await page.getByRole("button", { name: "Headers" }).click();
    const headersEditor = page.locator(".graphiql-editor-tool .monaco-editor").last();
    await headersEditor.waitFor();
    await replaceEditorText(page, headersEditor, JSON.stringify({ Authorization: `Bearer ${ADMIN_KEY}` }));

    await replaceEditorText(page, queryEditor, "{ stores { data { id code } } }");
    await page.locator(".graphiql-execute-button").click();

    const result = page.locator(".result-window");
    await expect.poll(async () => compact(await result.innerText()), { timeout: 30_000 }).toContain(tenant.storeId);
    const shown = compact(await result.innerText());
    expect(shown).toContain(`"code":"${tenant.storeCode}"`);
    expect(shown).not.toContain("errors");

    expect(outside()).toEqual([]);
    expect(requests.filter((url) => url === `${app.baseUrl}/graphql`).length).toBeGreaterThan(1);
    await context.close();
  });

  it("opens without an error, and loads the schema as soon as a key is set in the headers editor", async () => {
    const context = await browser.newContext();
    const answers: number[] = [];
    context.on("response", (response) => {
      if (response.url() === `${app.baseUrl}/graphql` && response.request().method() === "POST") answers.push(response.status());
    });
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/graphql`);
    const queryEditor = page.locator(".graphiql-query-editor .monaco-editor").first();
    await queryEditor.waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: /Show Documentation Explorer/i }).click();
    // Without a credential nothing is asked for the schema, so nothing fails.
    await page.waitForTimeout(1500);
    expect(answers).toEqual([]);
    expect(await page.locator("body").innerText()).not.toMatch(/Error fetching schema|Unauthorized|Authentication required/i);

    await page.getByRole("button", { name: "Headers" }).click();
    const headersEditor = page.locator(".graphiql-editor-tool .monaco-editor").last();
    await headersEditor.waitFor();
    await replaceEditorText(page, headersEditor, JSON.stringify({ Authorization: `Bearer ${ADMIN_KEY}` }));
    // The schema arrives without a manual refetch: the documentation explorer lists the root types.
    await expect.poll(() => answers, { timeout: 30_000 }).toContain(200);
    await page.locator(".graphiql-doc-explorer").getByText("Query", { exact: true }).first().waitFor({ timeout: 30_000 });
    expect(answers.filter((s) => s !== 200)).toEqual([]);
    await context.close();
  });

  it("the API reference at /docs renders and requests nothing outside the service", async () => {
    const context = await browser.newContext();
    const requests: string[] = [];
    context.on("request", (request) => requests.push(request.url()));
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/docs`);
    await page.getByText("API docs by Redocly").waitFor({ timeout: 60_000 });
    const origin = new URL(app.baseUrl).origin;
    expect(requests.filter((url) => !url.startsWith("data:") && !url.startsWith("blob:") && new URL(url).origin !== origin)).toEqual([]);
    await context.close();
  });

  it("serves the page to a browser without credentials, and only the page", async () => {
    const query = encodeURIComponent("{ stores { data { id } } }");
    const res = await fetch(`${app.baseUrl}/graphql?query=${query}`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("YogaGraphiQL.renderYogaGraphiQL");
    expect(html).not.toContain(tenant.storeId);
    // No external script or stylesheet: the page's assets are inline.
    expect(html).not.toMatch(/<(script|link)\b[^>]*\b(src|href)=["']?https?:/);
    const api = await fetch(`${app.baseUrl}/graphql?query=${query}`, { headers: { accept: "application/json" } });
    expect(api.status).toBe(401);
  });
});

/** Monaco renders spaces as non-breaking ones and wraps lines; the comparison ignores whitespace altogether. */
function compact(text: string): string {
  return text.replace(/[\s\u00a0]+/g, "");
}

/**
 * Focuses a Monaco editor, selects everything and inserts the text; the editor's auto-closing brackets and quotes
 * add characters of their own after the cursor, which go.
 */
async function replaceEditorText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.insertText(text);
  await page.keyboard.press("ControlOrMeta+Shift+End");
  await page.keyboard.press("Delete");
  await expect.poll(async () => compact(await editor.locator(".view-lines").innerText())).toBe(compact(text));
}
