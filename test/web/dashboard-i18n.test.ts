import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/i18n");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const profile = async (ref: string) => await f.ts.api(`/api/admin/i18n/profiles/${encodeURIComponent(ref)}`);
const keysOf = async (ref: string) => (await f.ts.api(`/api/admin/i18n/keys?profile_id=${encodeURIComponent(ref)}`)).body as { key: string; value: string }[];
const translations = async () => (await f.ts.api("/api/sdk/v1/snapshot?env=prod", { key: f.ts.serverKey })).body.translations;
const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });

describe.skipIf(!chromiumAvailable)("translations in the dashboard", () => {
  test("create a profile: a locale that is no tag, and a locale taken, are refused on the locale field; the row shows it", async () => {
    await page.getByRole("heading", { level: 1, name: "Translations" }).waitFor();
    await page.getByText("No translation profiles yet.").waitFor();
    await page.getByRole("button", { name: "New profile" }).click();
    const dialog = page.getByRole("dialog", { name: "New translation profile" });
    await dialog.getByLabel("Name").fill("web-de");
    await dialog.getByLabel("Locale").fill("de_DE");
    await dialog.getByRole("button", { name: "Create profile" }).click();
    const locale = dialog.getByLabel("Locale");
    await dialog.getByRole("alert").filter({ hasText: "separated by '-', not '_'" }).waitFor();
    expect(await locale.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(locale)).toBe(true);
    await noSeriousViolations("i18n-profile-invalid");

    await locale.fill("de");
    await dialog.getByRole("button", { name: "Create profile" }).click();
    await page.getByRole("status").filter({ hasText: "Created profile web-de (de)" }).waitFor();
    expect((await profile("web-de")).body).toMatchObject({ locale: "de", keyCount: 0 });
    expect(await row("web-de").getByRole("cell").nth(0).innerText()).toBe("de");
    expect(await row("web-de").getByRole("cell").nth(1).innerText()).toBe("0");

    await page.getByRole("button", { name: "New profile" }).click();
    await dialog.getByLabel("Name").fill("german");
    await dialog.getByLabel("Locale").fill("DE");
    await dialog.getByRole("button", { name: "Create profile" }).click();
    await dialog.getByRole("alert").filter({ hasText: "belongs to profile web-de" }).waitFor();
    expect(await dialog.getByLabel("Locale").getAttribute("aria-invalid")).toBe("true");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    await noSeriousViolations("i18n-profiles");
  });

  test("a profile's keys: add (a bad key refused on its field, a key already there refused), published to SDKs", async () => {
    await row("web-de").getByRole("link", { name: "web-de" }).click();
    await page.waitForURL((url) => url.pathname === "/i18n/web-de");
    await page.getByRole("heading", { level: 1, name: /web-de/ }).waitFor();
    await page.getByText("No keys yet.").waitFor();
    await page.getByRole("button", { name: "Add key" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a key to web-de" });
    await dialog.getByLabel("Key").fill("bad key");
    await dialog.getByLabel("Value").fill("x");
    await dialog.getByRole("button", { name: "Add key" }).click();
    await dialog.getByRole("alert").filter({ hasText: "has U+0020" }).waitFor();
    expect(await dialog.getByLabel("Key").getAttribute("aria-invalid")).toBe("true");
    await noSeriousViolations("i18n-key-invalid");

    await dialog.getByLabel("Key").fill("checkout.pay");
    await dialog.getByLabel("Value").fill("Jetzt bezahlen");
    await dialog.getByRole("button", { name: "Add key" }).click();
    await page.getByRole("status").filter({ hasText: "Added key checkout.pay" }).waitFor();
    await page.getByRole("button", { name: "Add key" }).click();
    await dialog.getByLabel("Key").fill("checkout.greeting");
    await dialog.getByLabel("Value").fill("Hallo {name}!\nZweite Zeile");
    await dialog.getByRole("button", { name: "Add key" }).click();
    await page.getByRole("status").filter({ hasText: "Added key checkout.greeting" }).waitFor();
    expect(await row("checkout.greeting").getByRole("cell").nth(0).innerText()).toBe("Hallo {name}!\nZweite Zeile");

    // Adding never changes a key: one already there is refused on the key field.
    await page.getByRole("button", { name: "Add key" }).click();
    await dialog.getByLabel("Key").fill("checkout.pay");
    await dialog.getByLabel("Value").fill("CHANGED");
    await dialog.getByRole("button", { name: "Add key" }).click();
    await dialog.getByRole("alert").filter({ hasText: "checkout.pay is already in web-de" }).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect((await translations()).de).toEqual({ "checkout.greeting": "Hallo {name}!\nZweite Zeile", "checkout.pay": "Jetzt bezahlen" });
    await noSeriousViolations("i18n-keys");
  });

  test("edit a key's value, search over keys and values, delete a key after asking", async () => {
    await page.getByRole("button", { name: "Edit key checkout.pay" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit key checkout.pay" });
    await valueBecomes(dialog.getByLabel("Value"), "Jetzt bezahlen");
    expect(await dialog.getByLabel("Key").count()).toBe(0);
    await dialog.getByLabel("Value").fill("Bezahlen");
    await noSeriousViolations("i18n-key-edit");
    await dialog.getByRole("button", { name: "Save key" }).click();
    await page.getByRole("status").filter({ hasText: "Saved key checkout.pay" }).waitFor();
    expect((await keysOf("web-de")).find((k) => k.key === "checkout.pay")!.value).toBe("Bezahlen");
    expect((await translations()).de["checkout.pay"]).toBe("Bezahlen");

    const search = page.getByRole("searchbox", { name: "Search keys" });
    await search.fill("ZWEITE");
    await row("checkout.greeting").waitFor();
    await row("checkout.pay").waitFor({ state: "detached" });
    await search.fill("nothing");
    await page.getByText("No key matches “nothing”.").waitFor();
    await search.fill("pay");
    await row("checkout.pay").waitFor();
    await search.fill("");

    await page.getByRole("button", { name: "Delete key checkout.greeting" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete key checkout.greeting?" });
    await confirm.waitFor();
    await noSeriousViolations("i18n-key-delete");
    await confirm.getByRole("button", { name: "Delete key" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted key checkout.greeting" }).waitFor();
    await row("checkout.greeting").waitFor({ state: "detached" });
    expect((await keysOf("web-de")).map((k) => k.key)).toEqual(["checkout.pay"]);
  });

  test("when the project does not publish translations, the page says so", async () => {
    expect((await f.ts.api("/api/admin/projects/current", { method: "PATCH", body: { moduleTranslations: false } })).status).toBe(200);
    try {
      await page.reload();
      await page.getByRole("note").filter({ hasText: "Translations are not published" }).waitFor();
      await noSeriousViolations("i18n-not-published");
    } finally {
      expect((await f.ts.api("/api/admin/projects/current", { method: "PATCH", body: { moduleTranslations: true } })).status).toBe(200);
    }
    await page.reload();
    await page.getByRole("heading", { level: 1, name: /web-de/ }).waitFor();
    expect(await page.getByRole("note").filter({ hasText: "Translations are not published" }).count()).toBe(0);
  });

  test("rename the profile from its page (the address follows), then delete it from the list with its keys", async () => {
    await page.getByRole("button", { name: "Edit profile" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit profile web-de" });
    await dialog.getByLabel("Name").fill("web-german");
    await dialog.getByRole("button", { name: "Save profile" }).click();
    await page.waitForURL((url) => url.pathname === "/i18n/web-german");
    await page.getByRole("heading", { level: 1, name: /web-german/ }).waitFor();
    await page.getByRole("link", { name: "Translations" }).first().click();
    await page.waitForURL((url) => url.pathname === "/i18n");

    await page.getByRole("searchbox", { name: "Search profiles" }).fill("nothing");
    await page.getByText("No profile matches “nothing”.").waitFor();
    await page.getByRole("searchbox", { name: "Search profiles" }).fill("DE");
    await row("web-german").waitFor();
    await page.getByRole("searchbox", { name: "Search profiles" }).fill("");

    await page.getByRole("button", { name: "Delete profile web-german" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete web-german?" });
    await confirm.getByText("Its 1 key goes with it").waitFor();
    await confirm.getByRole("button", { name: "Delete profile" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted profile web-german" }).waitFor();
    expect((await profile("web-german")).status).toBe(404);
    expect(await translations()).toEqual({});
  });

  test("the navigation and the overview card lead here", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("link", { name: /0 translation profiles$/ }).click();
    await page.waitForURL((url) => url.pathname === "/i18n");
    await page.getByRole("heading", { level: 1, name: "Translations" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Translations" }).getAttribute("aria-current")).toBe("page");
  });
});
