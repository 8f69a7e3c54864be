import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

// Stale flags (issue 30): the Stale flags page lists each with why, and a flag's page shows its usage as a
// sparkline with a text alternative; desktop and 390 px, light and dark, axe-clean.

const DAY = 86_400_000;
let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const { ts } = f;
  expect((await ts.api("/api/admin/killswitches", { body: { name: "old-banner" } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", value: true } })).status).toBe(201);
  // old-banner was made and last published 60 days ago (rows written with old times, as the clock would have).
  const old = new Date(Date.now() - 60 * DAY).toISOString();
  await ts.store.run("UPDATE killswitches SET created_at = ?, updated_at = ? WHERE name = 'old-banner'", old, old);
  await ts.store.run("UPDATE killswitch_envs SET updated_at = ? WHERE killswitch_id = (SELECT id FROM killswitches WHERE name = 'old-banner')", old);
  // checkout is evaluated: today by OFREP, and 40 evaluations three days ago.
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  await ts.store.run("INSERT INTO flag_evaluations (project_id, flag, env, day, count, last_at) VALUES (?, 'checkout', 'prod', ?, 40, ?)", ts.projectId, day(Date.now() - 3 * DAY), new Date(Date.now() - 3 * DAY).toISOString());
  expect((await ts.api("/ofrep/v1/evaluate/flags/checkout", { body: { context: {} }, key: ts.serverKey })).status).toBe(200);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/stale-flags");
});
afterAll(async () => {
  await f?.close();
});

async function axeClean(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("stale flags in the dashboard", () => {
  test("the Stale flags page lists each stale flag per env with its reason, filters by env, at desktop and phone width", async () => {
    await page.getByRole("heading", { level: 1, name: "Stale flags" }).waitFor();
    const table = page.getByRole("table", { name: "Stale flags and why" });
    await table.waitFor();
    const rows = table.getByRole("row").filter({ hasText: "old-banner" });
    expect(await rows.count()).toBe(3);
    expect(await rows.first().innerText()).toContain("One value for everyone; Not evaluated");
    expect(await table.getByRole("row").filter({ hasText: "checkout" }).count()).toBe(0);
    await page.getByLabel("Env").selectOption("prod");
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
    await expect(table.getByRole("link", { name: "old-banner" }).getAttribute("href")).resolves.toBe("/killswitches/old-banner");
    await axeClean("stale-flags");
    await page.setViewportSize({ width: 390, height: 844 });
    await axeClean("stale-flags-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test("a flag's page shows last evaluated per env and a 30-day sparkline with its text alternative", async () => {
    await page.goto(`${f.ts.url}/killswitches/checkout`);
    const usage = page.getByRole("region", { name: "Usage" });
    await usage.waitFor();
    const line = usage.getByRole("img");
    await line.waitFor();
    const label = await line.getAttribute("aria-label");
    expect(label).toContain("41 evaluations in the last 30 days");
    expect(label).toContain("(40)");
    expect(await usage.innerText()).toContain("Last evaluated on prod");
    expect(await usage.innerText()).toMatch(/Last evaluated on dev\s*never/);
    // Beside it, the flag's code references (src/modules/refs).
    await page.getByRole("heading", { name: "Code references" }).waitFor();
    await axeClean("flag-usage");
    await page.setViewportSize({ width: 390, height: 844 });
    await axeClean("flag-usage-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
