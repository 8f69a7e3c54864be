/**
 * The browser key in the dashboard (issue 28, item 1): minted on the SDK keys page for one env, it is shown
 * once with ready-to-paste snippets (OpenFeature web SDK, svc's browser SDK, a Sentry DSN) naming the key and
 * this server's origin; the list shows each key's type and env; Settings takes the allowed browser origins.
 * Desktop and phone width, light and dark, axe-clean.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, cellTexts } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/keys");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("browser keys in the dashboard", () => {
  test("mint a browser key for staging: the snippets name the key and this server's origin, each with its copy button", async () => {
    await page.getByRole("heading", { level: 1, name: "SDK keys" }).waitFor();
    await page.getByRole("button", { name: "New SDK key" }).click();
    const dialog = page.getByRole("dialog", { name: "New SDK key" });
    // The env is asked for browser keys only.
    expect(await dialog.getByLabel("Env", { exact: true }).count()).toBe(0);
    await dialog.getByLabel("Type").selectOption("browser");
    await dialog.getByLabel("Env", { exact: true }).selectOption("staging");
    await dialog.getByLabel("Name").fill("web app");
    await noSeriousViolations("browser-key-new");
    await dialog.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("dialog", { name: "Your new SDK key" });
    await shown.waitFor();
    const secret = await shown.getByLabel("The new SDK key", { exact: true }).inputValue();
    expect(secret).toMatch(/^sdk_browser_[A-Za-z0-9]+$/);
    const origin = f.ts.url;
    const host = new URL(origin).host;

    const openfeature = await shown.getByLabel("OpenFeature web SDK", { exact: true }).innerText();
    expect(openfeature).toContain(`new OFREPWebProvider({ baseUrl: "${origin}", headers: [["X-SDK-Key", "${secret}"]]`);
    expect(openfeature).toContain('from "@openfeature/ofrep-web-provider"');
    const svc = await shown.getByLabel("svc's SDK, browser mode", { exact: true }).innerText();
    expect(svc).toContain(`import { createBrowserClient } from "${origin}/sdk/svc-browser.js";`);
    expect(svc).toContain(`const svc = createBrowserClient({ baseUrl: "${origin}", key: "${secret}", context: { targetingKey: "user-123" } });`);
    expect(svc).toContain('svc.isEnabled("new-checkout")');
    const dsn = await shown.getByLabel("Sentry DSN for @sentry/browser", { exact: true }).innerText();
    expect(dsn.trim()).toBe(`http://${secret}@${host}/1`);
    for (const title of ["OpenFeature web SDK", "svc's SDK, browser mode", "Sentry DSN for @sentry/browser"]) {
      await shown.getByRole("button", { name: `Copy the ${title} snippet` }).waitFor();
    }
    await noSeriousViolations("browser-key-snippets");

    // What the snippet says works: the key evaluates staging over OFREP, and the DSN files an error.
    const ofrep = await fetch(`${origin}/ofrep/v1/evaluate/flags`, { method: "POST", headers: { "x-sdk-key": secret, "content-type": "application/json" }, body: JSON.stringify({ context: {} }) });
    expect(ofrep.status).toBe(200);
    const sentry = await fetch(`${origin}/api/1/store/?sentry_key=${secret}`, { method: "POST", body: JSON.stringify({ exception: { values: [{ type: "SnippetError", value: "from the snippet" }] } }) });
    expect(sentry.status).toBe(200);

    // At a phone's width, in both themes.
    await page.setViewportSize({ width: 390, height: 844 });
    await noSeriousViolations("browser-key-snippets-phone");
    const overflow = await shown.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.setViewportSize({ width: 1280, height: 860 });

    await shown.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(secret);
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /web app/ }) });
    await row.waitFor();
    const cells = await cellTexts(row);
    expect(cells.slice(0, 2)).toEqual(["browser", "staging"]);
    // Another type shows no snippets.
    await page.getByRole("button", { name: "New SDK key" }).click();
    await dialog.getByLabel("Type").selectOption("server");
    await dialog.getByRole("button", { name: "Create key" }).click();
    await shown.waitFor();
    expect(await shown.getByText("Use it in your app").count()).toBe(0);
    await shown.getByRole("button", { name: "Done" }).click();
  });

  test("Settings: the allowed browser origins are saved and admitted", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { level: 1, name: "Project settings" }).waitFor();
    await page.getByLabel("Domain").fill("https://shop.example.com");
    await page.getByLabel("Allowed browser origins").fill("https://staging.shop.example.com\nhttp://localhost:5173");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved the project settings" }).waitFor();
    const project = (await f.ts.api(`/api/admin/projects/${f.ts.projectId}`)).body;
    expect(project.allowedOrigins).toEqual(["https://staging.shop.example.com", "http://localhost:5173"]);
    await noSeriousViolations("settings-allowed-origins");
    // A bad origin: the refusal is shown, nothing changes.
    await page.getByLabel("Allowed browser origins").fill("localhost:5173");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").filter({ hasText: "allowedOrigins" }).waitFor();
    expect((await f.ts.api(`/api/admin/projects/${f.ts.projectId}`)).body.allowedOrigins).toEqual(["https://staging.shop.example.com", "http://localhost:5173"]);
  });
});
