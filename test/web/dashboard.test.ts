import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;
/** axe-core's serious/critical findings per page and theme, printed at the end (the closing note quotes them). */
const axeReport: Record<string, number> = {};

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  for (const name of ["checkout", "search"]) expect((await f.ts.api("/api/admin/killswitches", { body: { name, switches: { eu: false } } })).status).toBe(201);
  page = await f.context.newPage();
});
afterAll(async () => {
  if (Object.keys(axeReport).length) console.log("axe-core serious+critical violations per page:", JSON.stringify(axeReport));
  await f?.close();
});

async function checkPage(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  axeReport[`${name} (light)`] = light.length;
  axeReport[`${name} (dark)`] = dark.length;
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

async function snapshotValue(name: string): Promise<boolean | undefined> {
  const res = await fetch(`${f.ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": f.ts.serverKey } });
  return (await res.json()).killswitches?.[name]?.value;
}

describe.skipIf(!chromiumAvailable)("the dashboard in a real browser", () => {
  test("the sign-in pages pass axe-core too: the form, 'check your mail', the link's confirmation", async () => {
    await page.goto(`${f.ts.url}/signin`);
    await checkPage("signin");
    const before = f.mails.sent.length;
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByRole("button", { name: "Send sign-in link" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await checkPage("signin-check-mail");
    const mail = f.mails.sent.slice(before).find((m) => m.to === "owner@example.com")!;
    await page.goto(mail.url);
    await checkPage("signin-confirm");
  });

  test("/ sends a stranger to sign in; the magic link brings them back to the overview", async () => {
    await signIn(f, page);
    await expect(page.getByRole("heading", { level: 1 })).toBeTruthy();
    await page.getByRole("heading", { level: 1, name: "Main project" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link").allInnerTexts()).toContain("Killswitches");
    await checkPage("overview");
  });

  test("the command palette finds a killswitch; its prod switch asks first, and an SDK sees the change within a second", async () => {
    expect(await snapshotValue("checkout")).toBe(false);
    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "Go to" });
    await palette.getByRole("combobox").fill("check");
    await palette.getByRole("option", { name: /checkout/, selected: true }).waitFor();
    expect(await palette.getByRole("option").first().innerText()).toContain("checkout");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/killswitches/checkout");
    await page.getByRole("heading", { level: 1, name: "checkout" }).waitFor();
    await checkPage("killswitch-detail");

    const prod = page.getByRole("switch", { name: "checkout on prod" });
    expect(await prod.getAttribute("aria-checked")).toBe("false");
    await prod.click();
    const confirm = page.getByRole("dialog", { name: "Kill checkout on prod?" });
    await confirm.waitFor();
    // Nothing is published before the confirmation.
    expect(await snapshotValue("checkout")).toBe(false);
    await checkPage("killswitch-confirm");
    await confirm.getByRole("button", { name: "Kill in prod" }).click();
    const clicked = Date.now();
    let seen: boolean | undefined;
    while (Date.now() - clicked < 1000 && seen !== true) seen = await snapshotValue("checkout");
    expect(seen).toBe(true);
    await page.getByRole("status").filter({ hasText: "Killed checkout on prod" }).waitFor();
    // Announced only once the page shows it.
    expect(await prod.getAttribute("aria-checked")).toBe("true");
    const stored = (await f.ts.api("/api/admin/killswitches/checkout")).body;
    expect(stored.envs.prod).toMatchObject({ value: true, version: 2, updatedBy: "owner@example.com" });
  });

  test("cancelling the prod confirmation changes nothing; other envs toggle at once", async () => {
    await page.goto(`${f.ts.url}/killswitches`);
    await page.getByRole("heading", { level: 1, name: "Killswitches" }).waitFor();
    await checkPage("killswitches");
    await page.getByRole("switch", { name: "search on prod" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    expect((await f.ts.api("/api/admin/killswitches/search")).body.envs.prod.version).toBe(1);
    await page.getByRole("switch", { name: "search on staging" }).click();
    await page.getByRole("status").filter({ hasText: "Killed search on staging" }).waitFor();
    expect((await f.ts.api("/api/admin/killswitches/search")).body.envs.staging).toMatchObject({ value: true, version: 2 });
  });

  test("a toggle made elsewhere shows up without a reload", async () => {
    expect((await f.ts.api("/api/admin/killswitches/search/toggle", { body: { env: "dev", value: true } })).status).toBe(200);
    await page.waitForFunction(() => document.querySelector('[role="switch"][aria-label="search on dev"]')?.getAttribute("aria-checked") === "true", undefined, { timeout: 8000 });
  });

  test("the project switcher changes every page to the chosen project; the theme button says what pressing it does", async () => {
    const other = await f.ts.newProject("Second project");
    expect((await f.ts.api("/api/admin/killswitches", { body: { name: "only-in-second" }, key: other.adminKey })).status).toBe(201);
    await page.goto(`${f.ts.url}/killswitches`);
    const switcher = page.getByRole("combobox", { name: "Project" });
    await switcher.selectOption(other.projectId);
    await page.getByRole("link", { name: "only-in-second" }).waitFor();
    expect(await page.getByRole("link", { name: "checkout" }).count()).toBe(0);
    await page.getByRole("combobox", { name: "Project" }).selectOption(f.ts.projectId);
    await page.getByRole("link", { name: "checkout" }).waitFor();

    // The theme button says what pressing it does (issue 27, item 8: it read "Dark theme" in both states).
    const before = await page.evaluate(() => document.documentElement.dataset.theme);
    const otherTheme = before === "dark" ? "light" : "dark";
    await page.getByRole("button", { name: `Switch to ${otherTheme} theme` }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(otherTheme);
    await page.getByRole("button", { name: `Switch to ${before} theme` }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(before);
  });

  test("new killswitch: a bad name is said on the field and creates nothing; a good one opens its page", async () => {
    await page.getByRole("button", { name: "New killswitch" }).click();
    const dialog = page.getByRole("dialog", { name: "New killswitch" });
    await dialog.getByLabel("Name").fill("eu/checkout");
    await dialog.getByRole("button", { name: "Create killswitch" }).click();
    await dialog.getByRole("alert").waitFor();
    expect(await dialog.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    await checkPage("killswitch-create-error");
    expect((await f.ts.api("/api/admin/killswitches")).body.map((k: any) => k.name).sort()).toEqual(["checkout", "search"]);
    await dialog.getByLabel("Name").fill("new-banner");
    await dialog.getByRole("button", { name: "Create killswitch" }).click();
    await page.waitForURL((url) => url.pathname === "/killswitches/new-banner");
    expect((await f.ts.api("/api/admin/killswitches/new-banner")).status).toBe(200);
  });
});
