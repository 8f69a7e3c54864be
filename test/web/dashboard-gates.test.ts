import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

const STAFF = { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 };

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  expect((await f.ts.api("/api/admin/gates", { body: { name: "new-checkout", description: "The redesigned checkout", rules: [STAFF] } })).status).toBe(201);
  expect((await f.ts.api("/api/admin/gates", { body: { name: "dark-mode", description: "Theme toggle" } })).status).toBe(201);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/gates");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const gate = async (name = "new-checkout") => (await f.ts.api(`/api/admin/gates/${name}`)).body;

describe.skipIf(!chromiumAvailable)("gates in the dashboard", () => {
  test("the list shows each env's rule count and version, filters by name and description, and creates a gate", async () => {
    await page.getByRole("heading", { level: 1, name: "Gates" }).waitFor();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "new-checkout" }) });
    // allInnerTexts does not wait: under load the list may still be loading.
    await row.getByRole("cell").first().waitFor();
    expect(await cellTexts(row)).toEqual(["1 rule · v1", "1 rule · v1", "1 rule · v1", expect.any(String)]);
    await noSeriousViolations("gates");

    const search = page.getByRole("searchbox", { name: "Search gates" });
    await search.fill("THEME");
    await page.getByRole("link", { name: "dark-mode" }).waitFor();
    expect(await page.getByRole("link", { name: "new-checkout" }).count()).toBe(0);
    await search.fill("nothing like it");
    await page.getByText("No gate matches “nothing like it”.").waitFor();
    await search.fill("");

    await page.getByRole("button", { name: "New gate" }).click();
    const dialog = page.getByRole("dialog", { name: "New gate" });
    await dialog.getByLabel("Name").fill("beta-banner");
    await dialog.getByLabel("Description").fill("Banner for beta testers");
    await dialog.getByRole("button", { name: "Create gate" }).click();
    await page.waitForURL((url) => url.pathname === "/gates/beta-banner");
    await page.getByRole("heading", { level: 1, name: "beta-banner" }).waitFor();
    expect((await gate("beta-banner")).envs.prod).toMatchObject({ rules: [], version: 1 });

    // Gates are in the palette, as kind "gate".
    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "Go to" });
    await palette.getByRole("combobox").fill("new-check");
    await palette.getByRole("option", { name: /new-checkout\s+gate/, selected: true }).waitFor();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/gates/new-checkout");
    await page.getByRole("heading", { level: 1, name: "new-checkout" }).waitFor();
  });

  test("edit a rule on staging and publish it: the API has the new version and rules, other envs unchanged", async () => {
    await page.getByRole("tab", { name: /^staging/ }).click();
    expect(await page.getByRole("tab", { name: /^staging/ }).getAttribute("aria-selected")).toBe("true");
    await valueBecomes(page.getByLabel("Attribute of rule 1, condition 1"), "email");
    await noSeriousViolations("gate-detail");

    await page.getByLabel("Attribute of rule 1, condition 1").fill("country");
    await page.getByLabel("Operator of rule 1, condition 1").selectOption("in");
    await page.getByLabel("Value of rule 1, condition 1").fill("de, at");
    await page.getByLabel("Pass percentage of rule 1").fill("25");
    await page.getByRole("tab", { name: /^staging.*unpublished changes/ }).waitFor();
    await page.getByRole("button", { name: "Publish rules to staging" }).click();
    await page.getByRole("status").filter({ hasText: "Published 1 rule to staging: version 2" }).waitFor();
    const stored = await gate();
    expect(stored.envs.staging).toMatchObject({ version: 2, rules: [{ name: "staff", conditions: [{ attr: "country", op: "in", value: ["de", "at"] }], passPercentage: 25 }] });
    expect(stored.envs.prod).toMatchObject({ version: 1, rules: [STAFF] });
    expect(stored.envs.dev).toMatchObject({ version: 1, rules: [STAFF] });
    // The history of staging shows both versions; the older one can be rolled back to.
    await page.getByRole("button", { name: "Roll back staging to version 1" }).waitFor();
  });

  test("a rule the server refuses: an alert names the rule and field, the field is marked, nothing is published", async () => {
    await page.getByLabel("Operator of rule 1, condition 1").selectOption("regex");
    await page.getByLabel("Value of rule 1, condition 1").fill("(?=x)");
    await page.getByRole("button", { name: "Publish rules to staging" }).click();
    const alert = page.getByRole("alert").filter({ hasText: "rules[0].conditions[0].value" });
    await alert.waitFor();
    expect(await alert.innerText()).toContain("Nothing was published to staging");
    expect(await alert.innerText()).toContain("Rule 1, condition 1, value (rules[0].conditions[0].value): not a valid RE2 pattern");
    const value = page.getByLabel("Value of rule 1, condition 1");
    expect(await value.getAttribute("aria-invalid")).toBe("true");
    // The field's own message is tied to it, and it has the focus.
    expect(await isFocusedSoon(value)).toBe(true);
    const describedBy = (await value.getAttribute("aria-describedby"))!.split(" ");
    const texts = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).innerText()));
    expect(texts.join(" ")).toContain("not a valid RE2 pattern");
    await noSeriousViolations("gate-invalid");
    expect((await gate()).envs.staging.version).toBe(2);

    // A percentage out of range is refused by the request's schema, named the same way.
    await page.getByLabel("Operator of rule 1, condition 1").selectOption("in");
    await page.getByLabel("Value of rule 1, condition 1").fill("de");
    await page.getByLabel("Pass percentage of rule 1").fill("150");
    await page.getByRole("button", { name: "Publish rules to staging" }).click();
    await page.getByRole("alert").filter({ hasText: "Rule 1, pass percentage (rules.0.passPercentage): must be a number between 0 and 100" }).waitFor();
    expect(await page.getByLabel("Pass percentage of rule 1").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Value of rule 1, condition 1").getAttribute("aria-invalid")).toBeNull();
    expect((await gate()).envs.staging.version).toBe(2);

    await page.getByRole("button", { name: "Undo changes" }).click();
    await valueBecomes(page.getByLabel("Operator of rule 1, condition 1"), "in");
    await valueBecomes(page.getByLabel("Value of rule 1, condition 1"), "de, at");
    expect(await page.getByRole("alert").filter({ hasText: "rules[0]" }).count()).toBe(0);
  });

  test("rules are added, moved and removed; prod asks before publishing and before a rollback", async () => {
    await page.getByRole("tab", { name: /^prod/ }).click();
    await page.getByRole("button", { name: "Add rule" }).click();
    // The editor moves the focus once the new row is drawn (a task after the click): wait for it, briefly.
    const nameOfRule2 = page.getByLabel("Name of rule 2");
    expect(await isFocusedSoon(nameOfRule2)).toBe(true);
    await page.getByLabel("Name of rule 2").fill("everyone else, 10%");
    await page.getByLabel("Pass percentage of rule 2").fill("10");
    await page.getByRole("button", { name: "Add condition to rule 2" }).click();
    await page.getByLabel("Attribute of rule 2, condition 1").fill("plan");
    await page.getByLabel("Operator of rule 2, condition 1").selectOption("exists");
    expect(await page.getByLabel("Value of rule 2, condition 1").count()).toBe(0);
    await page.getByRole("button", { name: "Move rule 2 up" }).click();
    await valueBecomes(page.getByLabel("Name of rule 1"), "everyone else, 10%");
    await page.getByRole("status").filter({ hasText: "Moved rule 2 up: it is now rule 1" }).waitFor();
    await page.getByRole("button", { name: "Remove condition 1 of rule 1" }).click();
    await page.getByRole("button", { name: "Move rule 1 down" }).click();

    await page.getByRole("button", { name: "Publish rules to prod" }).click();
    const confirm = page.getByRole("dialog", { name: "Publish 2 rules of new-checkout to prod?" });
    await confirm.waitFor();
    expect(await confirm.innerText()).toContain("everyone else, 10%: everyone → 10%");
    await noSeriousViolations("gate-publish-prod");
    expect((await gate()).envs.prod.version).toBe(1);
    await confirm.getByRole("button", { name: "Publish to prod" }).click();
    await page.getByRole("status").filter({ hasText: "Published 2 rules to prod: version 2" }).waitFor();
    expect((await gate()).envs.prod).toMatchObject({ version: 2, rules: [STAFF, { name: "everyone else, 10%", conditions: [], passPercentage: 10 }] });

    await page.getByRole("button", { name: "Roll back prod to version 1" }).click();
    const rollback = page.getByRole("dialog", { name: "Roll new-checkout on prod back to version 1?" });
    await rollback.getByRole("button", { name: "Roll back" }).click();
    await page.getByRole("status").filter({ hasText: "Rolled new-checkout on prod back to version 1 (now version 3)" }).waitFor();
    expect((await gate()).envs.prod).toMatchObject({ version: 3, rules: [STAFF] });
  });

  test("explain says the value, the deciding rule and its bucket, and why earlier rules did not hold", async () => {
    await page.getByRole("tab", { name: /^staging/ }).click();
    const context = page.getByLabel("Context (JSON)");
    await context.fill(JSON.stringify({ user_id: "user-7", country: "de" }));
    await valueBecomes(page.getByLabel("Env to explain on"), "staging");
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    const expected = (await f.ts.api("/api/admin/gates/new-checkout/explain", { body: { env: "staging", context: { user_id: "user-7", country: "de" } } })).body;
    await page.getByRole("status").filter({ hasText: `new-checkout is ${expected.value ? "on" : "off"} for this context on staging (version 2)` }).waitFor();
    const decided = page.getByText(/Decided by rule 1 \(staff\): a percentage rule; this unit's bucket is/);
    expect(await decided.innerText()).toContain(expected.bucket.toFixed(4));
    await noSeriousViolations("gate-explain");

    // A context no rule holds for: each condition's outcome and why.
    await context.fill(JSON.stringify({ user_id: "user-7", country: "us" }));
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page.getByText("No rule held: off (the default).").waitFor();
    await page.getByText('condition 1, country in: fails, country is "us", not in the list').waitFor();

    // Not JSON: said on the field, no request.
    await context.fill("{user_id");
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "Not valid JSON" }).waitFor();
    expect(await context.getAttribute("aria-invalid")).toBe("true");
  });

  test("the overview counts gates; deleting a gate asks first", async () => {
    await page.goto(`${f.ts.url}/gates/beta-banner`);
    await page.getByRole("button", { name: "Delete gate" }).click();
    await page.getByRole("dialog", { name: "Delete beta-banner?" }).getByRole("button", { name: "Delete gate" }).click();
    await page.waitForURL((url) => url.pathname === "/gates");
    expect((await f.ts.api("/api/admin/gates/beta-banner")).status).toBe(404);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("link", { name: "2 gates" }).waitFor();
  });
});
