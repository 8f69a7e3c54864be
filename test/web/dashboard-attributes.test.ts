import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  // A gate for OFREP to evaluate: its contexts' attributes are recorded (auto).
  expect((await f.ts.api("/api/admin/gates", { body: { name: "pro-only", rules: [{ conditions: [{ attr: "plan", op: "eq", value: "pro" }], passPercentage: 100 }] } })).status).toBe(201);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/attributes");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const attribute = async (name: string) => (await f.ts.api(`/api/admin/attributes/${encodeURIComponent(name)}`)).body;
const template = (name: string) => f.ts.api(`/api/admin/gates/templates/${encodeURIComponent(name)}`);

describe.skipIf(!chromiumAvailable)("attributes in the dashboard", () => {
  test("declare an enum attribute: the values field shows for enum only; server errors land on their fields", async () => {
    await page.getByRole("heading", { level: 1, name: "Attributes" }).waitFor();
    await page.getByText("No attributes yet").waitFor();
    await page.getByRole("button", { name: "Declare attribute" }).click();
    const dialog = page.getByRole("dialog", { name: "Declare attribute" });
    expect(await dialog.getByLabel("Enum values").count()).toBe(0);
    await dialog.getByLabel("Name").fill("plan");
    await dialog.getByLabel("Type").selectOption("enum");
    // An enum without values: the server's refusal is said on the values field, which takes the focus.
    await dialog.getByRole("button", { name: "Declare attribute" }).click();
    const values = dialog.getByLabel("Enum values");
    await dialog.getByRole("alert").filter({ hasText: "enumValues" }).waitFor();
    expect(await values.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(values)).toBe(true);
    await noSeriousViolations("attribute-declare-invalid");

    await values.fill("free, pro");
    await dialog.getByRole("checkbox", { name: /Required/ }).check();
    await dialog.getByLabel("Description").fill("Billing plan");
    await dialog.getByLabel("SDK path").fill("account.plan");
    await dialog.getByRole("button", { name: "Declare attribute" }).click();
    await page.getByRole("status").filter({ hasText: "Declared attribute plan" }).waitFor();
    expect(await attribute("plan")).toMatchObject({ name: "plan", type: "enum", enumValues: ["free", "pro"], required: 1, description: "Billing plan", sdkPath: "account.plan", source: "manual", deprecated: 0 });
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /plan/ }) });
    expect(await cellTexts(row)).toEqual(["enum", "free, pro", "manual", "never", "no", expect.any(String)]);

    // Declared twice: the name field says so.
    await page.getByRole("button", { name: "Declare attribute" }).click();
    await dialog.getByLabel("Name").fill("plan");
    await dialog.getByRole("button", { name: "Declare attribute" }).click();
    await dialog.getByRole("alert").filter({ hasText: "already exists" }).waitFor();
    expect(await dialog.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
  });

  test("edit it (every field but the name), deprecate it (asks first) and restore it", async () => {
    await page.getByRole("button", { name: "Edit attribute plan" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit attribute plan" });
    expect(await dialog.getByLabel("Name").count()).toBe(0);
    await valueBecomes(dialog.getByLabel("Enum values"), "free, pro");
    await dialog.getByLabel("Enum values").fill("free, pro, enterprise");
    await dialog.getByLabel("Description").fill("Billing plan of the account");
    await dialog.getByRole("checkbox", { name: /Required/ }).uncheck();
    await dialog.getByRole("button", { name: "Save attribute" }).click();
    await page.getByRole("status").filter({ hasText: "Saved attribute plan" }).waitFor();
    expect(await attribute("plan")).toMatchObject({ type: "enum", enumValues: ["free", "pro", "enterprise"], required: 0, description: "Billing plan of the account", sdkPath: "account.plan" });

    await page.getByRole("button", { name: "Deprecate attribute plan" }).click();
    const confirm = page.getByRole("dialog", { name: "Deprecate plan?" });
    await confirm.waitFor();
    await noSeriousViolations("attribute-deprecate");
    await confirm.getByRole("button", { name: "Deprecate attribute" }).click();
    await page.getByRole("status").filter({ hasText: "Deprecated plan" }).waitFor();
    expect((await attribute("plan")).deprecated).toBe(1);
    await page.getByRole("button", { name: "Restore attribute plan" }).click();
    await page.getByRole("status").filter({ hasText: "Restored plan" }).waitFor();
    expect((await attribute("plan")).deprecated).toBe(0);
  });

  test("an attribute seen in an OFREP context shows up as auto, with when it was last seen; search filters", async () => {
    const ofrep = await fetch(`${f.ts.url}/ofrep/v1/evaluate/flags/pro-only`, {
      method: "POST",
      headers: { "x-sdk-key": f.ts.serverKey, "content-type": "application/json" },
      body: JSON.stringify({ context: { targetingKey: "user-1", plan: "pro", country: "de" } }),
    });
    expect(ofrep.status).toBe(200);
    await f.ts.server.ctx.services.attributes.flush();
    await page.reload();
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "country" }) });
    await row.waitFor();
    const cells = await cellTexts(row);
    expect(cells.slice(0, 5)).toEqual(["string", "none", "auto", expect.stringMatching(/now|second/), "no"]);
    expect((await attribute("country")).source).toBe("auto");
    await noSeriousViolations("attributes");

    await page.getByRole("searchbox", { name: "Search attributes" }).fill("billing");
    await page.getByRole("rowheader", { name: "country" }).waitFor({ state: "detached" });
    expect(await page.getByRole("rowheader", { name: /plan/ }).count()).toBe(1);
    await page.getByRole("searchbox", { name: "Search attributes" }).fill("");
  });
});

describe.skipIf(!chromiumAvailable)("gate templates in the dashboard", () => {
  test("built-ins are listed and marked, with no delete; a template is created (JSON and server errors on the field)", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Gate templates" }).click();
    await page.waitForURL((url) => url.pathname === "/gates/templates");
    await page.getByRole("heading", { level: 1, name: "Gate templates" }).waitFor();
    const builtIn = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /Country list/ }) });
    expect(await builtIn.getByRole("rowheader").innerText()).toContain("built-in");
    expect(await builtIn.getByRole("cell").nth(1).innerText()).toBe('country in ["us","ca"]');
    for (const name of ["Internal users", "Percentage rollout", "Country list", "App version at least", "Beta opt-in"]) {
      await page.getByRole("button", { name: `New gate from template ${name}` }).waitFor();
      expect(await page.getByRole("button", { name: `Delete template ${name}` }).count()).toBe(0);
    }
    await noSeriousViolations("gate-templates");

    await page.getByRole("button", { name: "New template" }).click();
    const dialog = page.getByRole("dialog", { name: "New template" });
    await dialog.getByLabel("Name").fill("Acme staff");
    await dialog.getByLabel("Description").fill("People at acme.com");
    const conditions = dialog.getByLabel("Conditions (JSON)");
    await conditions.fill("[{attr");
    await dialog.getByRole("button", { name: "Create template" }).click();
    await dialog.getByRole("alert").filter({ hasText: "Not valid JSON" }).waitFor();
    expect(await conditions.getAttribute("aria-invalid")).toBe("true");

    await conditions.fill(JSON.stringify([{ attr: "email", op: "like", value: "%acme%" }]));
    await dialog.getByRole("button", { name: "Create template" }).click();
    await dialog.getByRole("alert").filter({ hasText: "rules[0].op" }).waitFor();
    expect(await conditions.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(conditions)).toBe(true);
    await noSeriousViolations("gate-template-invalid");
    expect((await template("Acme staff")).status).toBe(404);

    await conditions.fill(JSON.stringify([{ attr: "email", op: "ends_with", value: "@acme.com" }]));
    await dialog.getByRole("button", { name: "Create template" }).click();
    await page.getByRole("status").filter({ hasText: "Created template Acme staff" }).waitFor();
    expect((await template("Acme staff")).body).toMatchObject({ name: "Acme staff", description: "People at acme.com", category: "condition", builtIn: false, rules: [{ attr: "email", op: "ends_with", value: "@acme.com" }] });
    const own = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Acme staff" }) });
    expect(await own.getByRole("cell").nth(1).innerText()).toBe('email ends_with "@acme.com"');
  });

  test("a gate is made from a template at a pass percentage; the template is deleted (asks first), the gate keeps its rule", async () => {
    await page.getByRole("button", { name: "New gate from template Acme staff" }).click();
    const dialog = page.getByRole("dialog", { name: "New gate from Acme staff" });
    await dialog.getByLabel("Gate name").fill("staff-preview");
    await dialog.getByLabel("Pass percentage").fill("25");
    await noSeriousViolations("gate-from-template");
    await dialog.getByRole("button", { name: "Create gate" }).click();
    await page.waitForURL((url) => url.pathname === "/gates/staff-preview");
    await page.getByRole("heading", { level: 1, name: "staff-preview" }).waitFor();
    const rule = { name: "Acme staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 25 };
    expect((await f.ts.api("/api/admin/gates/staff-preview")).body.envs.prod.rules).toEqual([rule]);

    await page.goto(`${f.ts.url}/gates/templates`);
    await page.getByRole("button", { name: "Delete template Acme staff" }).click();
    await page.getByRole("dialog", { name: "Delete template Acme staff?" }).getByRole("button", { name: "Delete template" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted template Acme staff" }).waitFor();
    expect((await template("Acme staff")).status).toBe(404);
    expect(await page.getByRole("rowheader", { name: "Acme staff" }).count()).toBe(0);
    expect((await f.ts.api("/api/admin/gates/staff-preview")).body.envs.prod.rules).toEqual([rule]);
  });

  test("the New gate dialog can start from a template", async () => {
    await page.goto(`${f.ts.url}/gates`);
    await page.getByRole("button", { name: "New gate" }).click();
    const dialog = page.getByRole("dialog", { name: "New gate" });
    await dialog.getByLabel("Name").fill("beta-search");
    await dialog.getByLabel("Start from template").selectOption({ label: "Beta opt-in (built-in)" });
    await dialog.getByText('It starts with one rule on every env: beta_opt_in eq true → 100%.').waitFor();
    await dialog.getByRole("button", { name: "Create gate" }).click();
    await page.waitForURL((url) => url.pathname === "/gates/beta-search");
    expect((await f.ts.api("/api/admin/gates/beta-search")).body.envs.dev.rules).toEqual([{ name: "Beta opt-in", conditions: [{ attr: "beta_opt_in", op: "eq", value: true }], passPercentage: 100 }]);
  });
});
