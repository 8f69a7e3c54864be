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
  await signIn(f, page, "owner@example.com", "/universes");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const universe = async (name: string) => await f.ts.api(`/api/admin/universes/${encodeURIComponent(name)}`);
const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });
const setPlan = (plan: string) => f.ts.store.run("UPDATE projects SET plan = ? WHERE id = ?", plan, f.ts.projectId);

describe.skipIf(!chromiumAvailable)("universes in the dashboard", () => {
  test("create: the holdout previews on the segment bar; server refusals land on their field; the row draws the holdout", async () => {
    await page.getByRole("heading", { level: 1, name: "Universes" }).waitFor();
    await page.getByText("No universes yet.").waitFor();
    await page.getByRole("button", { name: "New universe" }).click();
    const dialog = page.getByRole("dialog", { name: "New universe" });
    await dialog.getByLabel("Name").fill("web-users");
    await valueBecomes(dialog.getByLabel("Unit type"), "user_id");
    // No holdout yet: the bar says so.
    await dialog.getByRole("img", { name: "Preview: 10,000 segments, no holdout" }).waitFor();
    await dialog.getByRole("checkbox", { name: /Hold out a range of segments/ }).check();
    await dialog.getByRole("img", { name: "Preview: 10,000 segments, holdout segments 0–499 (5 % of units)" }).waitFor();
    await dialog.getByLabel("First held-out segment").fill("600");
    // start 600 ≥ end 500: no preview, and the server names the field.
    await dialog.getByText("The preview shows once the range is whole segments").waitFor();
    await dialog.getByRole("button", { name: "Create universe" }).click();
    const start = dialog.getByLabel("First held-out segment");
    await dialog.getByRole("alert").filter({ hasText: "start 600 is not below end 500" }).waitFor();
    expect(await start.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(start)).toBe(true);
    await noSeriousViolations("universe-create-invalid");

    await start.fill("0");
    await dialog.getByLabel("End of the holdout (excluded)").fill("250");
    await dialog.getByRole("img", { name: "Preview: 10,000 segments, holdout segments 0–249 (2.5 % of units)" }).waitFor();
    await dialog.getByRole("button", { name: "Create universe" }).click();
    await page.getByRole("status").filter({ hasText: "Created universe web-users" }).waitFor();
    const stored = (await universe("web-users")).body;
    expect(stored).toMatchObject({ name: "web-users", unit_type: "user_id", holdout_range: [0, 250] });
    expect(await row("web-users").getByRole("cell").nth(0).innerText()).toBe("user_id");
    expect(await row("web-users").getByRole("cell").nth(1).innerText()).toContain("segments 0–249 (2.5 % of units)");
    await row("web-users").getByRole("img", { name: "Segments of web-users: 10,000 segments, holdout segments 0–249 (2.5 % of units)" }).waitFor();

    // An account-level universe without a holdout; then a name taken.
    await page.getByRole("button", { name: "New universe" }).click();
    await dialog.getByLabel("Name").fill("accounts");
    await dialog.getByLabel("Unit type").selectOption("account_id");
    await dialog.getByRole("button", { name: "Create universe" }).click();
    await page.getByRole("status").filter({ hasText: "Created universe accounts" }).waitFor();
    expect((await universe("accounts")).body).toMatchObject({ unit_type: "account_id", holdout_range: null });
    await row("accounts").getByRole("img", { name: "Segments of accounts: 10,000 segments, no holdout" }).waitFor();
    await noSeriousViolations("universes");

    await page.getByRole("button", { name: "New universe" }).click();
    await dialog.getByLabel("Name").fill("accounts");
    await dialog.getByRole("button", { name: "Create universe" }).click();
    await dialog.getByRole("alert").filter({ hasText: "already exists" }).waitFor();
    expect(await dialog.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
  });

  test("edit: the holdout moves, the unit type is shown as fixed; below plan pro a holdout is refused on its field", async () => {
    // Looks at every task: the dialog shows only with its fields already set from the universe, never with fields that
    // an effect then overwrites (what was typed into them meanwhile would be lost).
    await page.evaluate(() => {
      const w = window as unknown as { nameWhenOpened?: string | null };
      w.nameWhenOpened = undefined;
      const look = () => {
        const open = document.querySelector("dialog[open]");
        if (!open) return void setTimeout(look, 0);
        const name = Array.from(open.querySelectorAll("input")).find((input) => input.labels?.[0]?.textContent?.trim() === "Name");
        w.nameWhenOpened = name?.value ?? null;
      };
      look();
    });
    await page.getByRole("button", { name: "Edit universe web-users" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit universe web-users" });
    await dialog.waitFor();
    expect(await page.evaluate(() => (window as unknown as { nameWhenOpened?: string | null }).nameWhenOpened)).toBe("web-users");
    expect(await dialog.getByLabel("Unit type").count()).toBe(0);
    await dialog.getByText("Unit type: user_id").waitFor();
    await dialog.getByText(`Salt ${(await universe("web-users")).body.salt}`).waitFor();
    await valueBecomes(dialog.getByLabel("First held-out segment"), "0");
    await dialog.getByLabel("First held-out segment").fill("9500");
    await dialog.getByLabel("End of the holdout (excluded)").fill("10000");
    await noSeriousViolations("universe-edit");
    await dialog.getByRole("button", { name: "Save universe" }).click();
    await page.getByRole("status").filter({ hasText: "Saved universe web-users" }).waitFor();
    expect((await universe("web-users")).body.holdout_range).toEqual([9500, 10_000]);
    await row("web-users").getByRole("img", { name: /holdout segments 9,500–9,999 \(5 % of units\)/ }).waitFor();

    // The plan goes below pro: renaming still works (the holdout it has is not sent again), setting one is refused.
    await setPlan("free");
    try {
      await page.getByRole("button", { name: "Edit universe web-users" }).click();
      await dialog.getByLabel("Name").fill("web-people");
      await page.getByRole("dialog", { name: "Edit universe web-users" }).getByRole("button", { name: "Save universe" }).click();
      await page.getByRole("status").filter({ hasText: "Saved universe web-people" }).waitFor();
      expect((await universe("web-people")).body).toMatchObject({ holdout_range: [9500, 10_000] });

      await page.getByRole("button", { name: "Edit universe accounts" }).click();
      const accounts = page.getByRole("dialog", { name: "Edit universe accounts" });
      await accounts.getByRole("checkbox", { name: /Hold out a range of segments/ }).check();
      await accounts.getByRole("button", { name: "Save universe" }).click();
      await accounts.getByRole("alert").filter({ hasText: "needs plan pro" }).waitFor();
      expect(await accounts.getByLabel("First held-out segment").getAttribute("aria-invalid")).toBe("true");
      await noSeriousViolations("universe-plan-refused");
      await accounts.getByRole("button", { name: "Cancel" }).click();
      expect((await universe("accounts")).body.holdout_range).toBeNull();
    } finally {
      await setPlan("pro");
    }
  });

  test("delete asks first; a universe with a running experiment is refused in the dialog; search filters", async () => {
    const { universes } = f.ts.server.ctx.services;
    universes.setInUseCheck(async (_q, _p, id) => (id === (await universe("accounts")).body.id ? [{ name: "checkout-test", allocation: [0, 5000] }] : []));
    try {
      await page.getByRole("button", { name: "Delete universe accounts" }).click();
      const confirm = page.getByRole("dialog", { name: "Delete accounts?" });
      await confirm.waitFor();
      await noSeriousViolations("universe-delete");
      await confirm.getByRole("button", { name: "Delete universe" }).click();
      await confirm.getByRole("alert").filter({ hasText: "checkout-test" }).waitFor();
      await confirm.getByRole("button", { name: "Cancel" }).click();
      expect((await universe("accounts")).status).toBe(200);
    } finally {
      universes.setInUseCheck(async () => []);
    }
    await page.getByRole("button", { name: "Delete universe accounts" }).click();
    // Looks at every task (as a person or a test acts between tasks): the status says "Deleted" only once the dialog,
    // which makes the rest of the page inert, is closed. Once it said so while the dialog was open, and the search
    // typed next went nowhere.
    await page.evaluate(() => {
      const w = window as unknown as { seenOpenWithStatus?: boolean };
      w.seenOpenWithStatus = false;
      const look = () => {
        const said = Array.from(document.querySelectorAll('[role="status"]')).some((el) => el.textContent?.includes("Deleted universe accounts"));
        if (said && document.querySelector("dialog[open]")) w.seenOpenWithStatus = true;
        if (!said) setTimeout(look, 0);
      };
      look();
    });
    await page.getByRole("dialog", { name: "Delete accounts?" }).getByRole("button", { name: "Delete universe" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted universe accounts" }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { seenOpenWithStatus?: boolean }).seenOpenWithStatus)).toBe(false);
    expect((await universe("accounts")).status).toBe(404);
    await row("accounts").waitFor({ state: "detached" });

    await page.getByRole("searchbox", { name: "Search universes" }).fill("nothing");
    await page.getByText("No universe matches “nothing”.").waitFor();
    await page.getByRole("searchbox", { name: "Search universes" }).fill("PEOPLE");
    await row("web-people").waitFor();
    await page.getByRole("searchbox", { name: "Search universes" }).fill("");
  });

  test("the navigation, the overview card and the command palette lead here", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("link", { name: /1 universe$/ }).click();
    await page.waitForURL((url) => url.pathname === "/universes");
    await page.getByRole("heading", { level: 1, name: "Universes" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Universes" }).getAttribute("aria-current")).toBe("page");
  });
});
