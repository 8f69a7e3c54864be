import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts } from "./dashboard-support";

// Issue 27, items 10 and 11: the settings other pages point at, and jobs that needed the API, done from the
// dashboard (a config's schema and rollback, a gate's percentage rollout, what events arrived).
setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;
const now = Date.now();

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const schema = { type: "object", properties: { max: { type: "integer" } }, required: ["max"] };
  expect((await f.ts.api("/api/admin/configs", { body: { name: "limits", schema, value: { max: 3 } } })).status).toBe(201);
  expect((await f.ts.api("/api/admin/configs/limits", { method: "PATCH", body: { staging: { max: 7 } } })).status).toBe(200);
  expect((await f.ts.api("/api/admin/gates", { body: { name: "new-checkout", rules: [{ name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 }] } })).status).toBe(201);
  const events = Array.from({ length: 30 }, (_, i) => ({ name: "page.viewed", ts: now - (i + 1) * 60_000, unitId: `user-${i}`, properties: { path: `/p/${i}`, label: "<b>bold</b>" } }));
  expect((await f.ts.api("/api/sdk/v1/events", { key: f.ts.serverKey, body: { events: [...events, { name: "signup", ts: now - 3 * 86_400_000 }] } })).status).toBe(202);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/settings");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const project = async () => (await f.ts.api("/api/admin/projects/current")).body;

describe.skipIf(!chromiumAvailable)("settings other pages point at (item 10)", () => {
  test("analysis, auto-rollback and retention are set from Settings; a refused value is said on its field and changes nothing", async () => {
    await page.getByRole("heading", { level: 1, name: "Project settings" }).waitFor();
    await page.getByRole("heading", { name: "Experiment analysis and data" }).waitFor();
    await page.getByLabel("Analysis method").selectOption("bayesian");
    await page.getByLabel("Significance threshold").fill("0.1");
    await page.getByLabel("Minimum sample days").fill("3");
    await page.getByLabel(/Auto-rollback/).check();
    await page.getByLabel("Keep raw events (days)").fill("14");
    await page.getByLabel("Stale after (days)").fill("21");
    await noSeriousViolations("settings-analysis");
    await page.getByRole("button", { name: "Save analysis settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved the analysis and retention settings" }).waitFor();
    expect(await project()).toMatchObject({ analysis: { method: "bayesian", significanceThreshold: 0.1, autoRollback: true, minSampleDays: 3 }, eventRetentionDays: 14, staleAfterDays: 21 });

    await page.getByLabel("Significance threshold").fill("2");
    await page.getByRole("button", { name: "Save analysis settings" }).click();
    const threshold = page.getByLabel("Significance threshold");
    await page.getByRole("alert").filter({ hasText: "significanceThreshold" }).waitFor();
    expect(await threshold.getAttribute("aria-invalid")).toBe("true");
    expect((await project()).analysis.significanceThreshold).toBe(0.1);
  });

  test("the alert form says where notifications go, without a project default that does not exist", async () => {
    await page.goto(`${f.ts.url}/alerts`);
    await page.getByRole("button", { name: "New alert rule" }).click();
    const dialog = page.getByRole("dialog", { name: "New alert rule" });
    const webhook = dialog.getByLabel("Webhook URL");
    const hint = await page.locator(`[id="${(await webhook.getAttribute("aria-describedby"))!.split(" ")[0]}"]`).innerText();
    expect(hint).not.toContain("project default");
    expect(hint).toContain("alert.firing");
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });
});

describe.skipIf(!chromiumAvailable)("jobs that needed the API (item 11)", () => {
  test("a config's JSON Schema is edited on its page; one a value breaks is refused and nothing changes", async () => {
    await page.goto(`${f.ts.url}/configs/limits`);
    await page.getByRole("heading", { level: 1, name: "limits" }).waitFor();
    await page.getByText("JSON Schema", { exact: true }).click();
    const editor = page.getByRole("textbox", { name: "JSON Schema of limits" });
    await editor.fill(JSON.stringify({ type: "object", properties: { max: { type: "integer", minimum: 5 } }, required: ["max"] }));
    await page.getByRole("button", { name: "Save schema" }).click();
    await page.getByRole("alert").filter({ hasText: "must be >= 5" }).waitFor();
    expect((await f.ts.api("/api/admin/configs/limits")).body.schema.properties.max).toEqual({ type: "integer" });
    const widened = { type: "object", properties: { max: { type: "integer", minimum: 1 } }, required: ["max"] };
    await editor.fill(JSON.stringify(widened));
    await noSeriousViolations("config-schema-edit");
    await page.getByRole("button", { name: "Save schema" }).click();
    await page.getByRole("status").filter({ hasText: "Saved the JSON Schema" }).waitFor();
    expect((await f.ts.api("/api/admin/configs/limits")).body.schema).toEqual(widened);
  });

  test("a config rolls back from its history: the earlier value becomes the env's next version", async () => {
    await page.getByRole("tab", { name: /^staging/ }).click();
    await page.getByRole("heading", { name: "History on staging" }).waitFor();
    await page.getByRole("button", { name: "Roll back staging to version 1" }).click();
    const confirm = page.getByRole("dialog", { name: "Roll limits on staging back to version 1?" });
    await noSeriousViolations("config-rollback");
    await confirm.getByRole("button", { name: "Roll back staging" }).click();
    await page.getByRole("status").filter({ hasText: "Rolled limits on staging back to version 1 (now version 3)" }).waitFor();
    expect((await f.ts.api("/api/admin/configs/limits")).body.envs.staging).toMatchObject({ version: 3, value: { max: 3 } });
  });

  test("a gate's percentage rollout is set with the rule editor's control and published", async () => {
    await page.goto(`${f.ts.url}/gates/new-checkout`);
    await page.getByRole("heading", { level: 1, name: "new-checkout" }).waitFor();
    await page.getByRole("tab", { name: /^staging/ }).click();
    await page.getByRole("spinbutton", { name: "Percentage rollout on staging" }).fill("30");
    await page.getByRole("tab", { name: /^staging.*unpublished changes/ }).waitFor();
    await valueBecomes(page.getByLabel("Pass percentage of rule 2"), "30");
    await noSeriousViolations("gate-percentage-rollout");
    await page.getByRole("button", { name: "Publish rules to staging" }).click();
    await page.getByRole("status").filter({ hasText: "Published 2 rules to staging" }).waitFor();
    const stored = (await f.ts.api("/api/admin/gates/new-checkout")).body.envs;
    expect(stored.staging.rules.at(-1)).toEqual({ name: "everyone", conditions: [], passPercentage: 30 });
    expect(stored.prod.rules).toHaveLength(1);
    // The slider moves the same rule, not another one.
    await page.getByRole("slider", { name: "Percentage rollout on staging (slider)" }).fill("60");
    await valueBecomes(page.getByLabel("Pass percentage of rule 2"), "60");
  });

  test("the events page counts arrivals per name and shows a name's raw events, paged, as text", async () => {
    await page.goto(`${f.ts.url}/events`);
    await page.getByRole("heading", { name: "Arrivals" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "page.viewed" }).filter({ has: page.getByRole("button", { name: "Show raw events of page.viewed" }) });
    expect((await cellTexts(row)).slice(1, 3)).toEqual(["30", "30"]);
    const signup = page.getByRole("row").filter({ has: page.getByRole("button", { name: "Show raw events of signup" }) });
    expect((await cellTexts(signup)).slice(1, 3)).toEqual(["0", "1"]);
    await page.getByRole("button", { name: "Show raw events of page.viewed" }).click();
    const raw = page.getByRole("table", { name: /Raw events of page\.viewed/ });
    await raw.getByRole("cell", { name: "user-0", exact: true }).waitFor();
    expect(await raw.getByRole("row").count()).toBe(26);
    // Sent text stays text.
    expect(await raw.locator("b").count()).toBe(0);
    await noSeriousViolations("events-raw");
    await page.getByRole("button", { name: "Older events" }).click();
    await raw.getByRole("cell", { name: "user-29", exact: true }).waitFor();
    expect(await raw.getByRole("row").count()).toBe(31);
    expect(await page.getByRole("button", { name: "Older events" }).count()).toBe(0);
  });
});
