import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { MailCapture } from "../browser";
import { CHROMIUM_PATH, chromiumAvailable, sharedBrowser } from "./shared-browser";
import { ROOT } from "../cli/process";
import { type TestServer, startTestServer } from "../helpers";

export const CHROMIUM = CHROMIUM_PATH;
export { chromiumAvailable };

/** Where the test run leaves its screenshots (every page, light and dark). */
export const SCREENSHOT_DIR = join(ROOT, "test-results", "dashboard");

export type DashboardFixture = { ts: TestServer; mails: MailCapture; context: BrowserContext; close(): Promise<void> };

/** A fresh context (its own cookies, storage and cache) of the run's one headless Chromium. */
export async function newBrowserContext(options: Parameters<Browser["newContext"]>[0] = {}): Promise<BrowserContext> {
  return (await sharedBrowser()).newContext(options);
}

/** A real server and a headless Chromium context; axe-core is injected into pages, so the page's CSP is bypassed for that only. */
export async function startDashboardFixture(): Promise<DashboardFixture> {
  const mails = new MailCapture();
  const ts = await startTestServer({ signIn: { mailer: mails, rateLimits: { magicLinkPerIp: { limit: 1000, windowMs: 60_000 } } } });
  const context = await newBrowserContext({ bypassCSP: true, viewport: { width: 1280, height: 860 } });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    ts,
    mails,
    context,
    async close() {
      await context.close();
      await ts.stop();
    },
  };
}

/** Signs in through the real pages: `/` → sign-in form → the mailed link → its confirmation → back on `/`. */
export async function signIn(f: DashboardFixture, page: Page, email = "owner@example.com", path = "/"): Promise<void> {
  await page.goto(f.ts.url + path);
  await page.waitForURL((url) => url.pathname === "/signin");
  const before = f.mails.sent.length;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: /sign-in link|send/i }).click();
  await page.waitForLoadState();
  const mail = f.mails.sent.slice(before).find((m) => m.to === email);
  if (!mail) throw new Error(`no sign-in mail to ${email}`);
  await page.goto(mail.url);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((url) => url.pathname === path);
}

/**
 * Waits until a form control holds `value`: controls filled from data the page loads after it opens (a dialog's
 * selects and prefilled JSON) get their value a render later, so reading it at once races the load.
 */
export async function valueBecomes(control: Locator, value: string, timeout = 30_000): Promise<void> {
  const deadline = Date.now() + timeout;
  let now = await control.inputValue({ timeout });
  while (now !== value) {
    if (Date.now() > deadline) throw new Error(`the control's value stayed ${JSON.stringify(now)}, not ${JSON.stringify(value)}`);
    await Bun.sleep(25);
    now = await control.inputValue({ timeout });
  }
}

/**
 * Whether `control` holds the focus within `timeout`: a page moves the focus in the render after a click (a row
 * added, a dialog opened), so reading `document.activeElement` at once races that render on a loaded machine.
 */
export async function isFocusedSoon(control: Locator, timeout = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await control.evaluate((el) => el === document.activeElement)) return true;
    if (Date.now() > deadline) return false;
    await Bun.sleep(25);
  }
}

/**
 * A table row's cell texts once the row is there: `allInnerTexts` does not wait, and a list that is still loading
 * (a loaded machine) reads as no cells at all.
 */
export async function cellTexts(row: Locator, timeout = 30_000): Promise<string[]> {
  await row.waitFor({ timeout });
  return row.getByRole("cell").allInnerTexts();
}

const AXE_SOURCE = join(ROOT, "node_modules", "axe-core", "axe.min.js");

export type AxeViolation = { id: string; impact: string; help: string; nodes: { target: string[] }[] };

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE_SOURCE });
  const violations = (await page.evaluate(async () => {
    // biome-ignore lint: axe is injected above
    const result = await (window as any).axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => ({ target: n.target })) }));
  })) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Screenshots of the page in the light and the dark theme, with axe's verdict on each. */
export async function capture(page: Page, name: string): Promise<{ light: AxeViolation[]; dark: AxeViolation[] }> {
  const results: Record<"light" | "dark", AxeViolation[]> = { light: [], dark: [] };
  for (const theme of ["light", "dark"] as const) {
    await page.evaluate((t) => {
      document.documentElement.dataset.theme = t;
    }, theme);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${theme}.png`), fullPage: true });
    results[theme] = await seriousViolations(page);
  }
  await page.evaluate(() => {
    document.documentElement.dataset.theme = localStorage.getItem("svc.theme") ?? "light";
  });
  return results;
}
