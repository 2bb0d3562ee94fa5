import { existsSync } from "node:fs";
import axe from "axe-core";
import { expect } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";

/**
 * What the portal's browser tests share: Debian's Chromium through playwright-core, and axe-core run in the page.
 * Without a Chromium the tests fail saying how to get one, unless ALLOW_NO_BROWSER=1 skips them.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const browserMissing = !existsSync(CHROMIUM);
export const skipBrowser = browserMissing && process.env.ALLOW_NO_BROWSER === "1";
if (skipBrowser) console.warn(`\n*** portal browser test SKIPPED: no Chromium at ${CHROMIUM} (ALLOW_NO_BROWSER=1) ***\n`);

export function launchBrowser(): Promise<Browser> {
  if (browserMissing) {
    throw new Error(`No Chromium at ${CHROMIUM}: install it (apt-get install -y chromium), point CHROMIUM_PATH at one, or set ALLOW_NO_BROWSER=1.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in the page (evaluated over the DevTools protocol: the page's CSP allows no injected script tag). */
export async function accessible(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(axe.source);
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) })))`,
  );
  expect(
    violations.filter((v) => v.impact === "serious" || v.impact === "critical"),
    `${what}: serious or critical axe-core violations`,
  ).toEqual([]);
}
