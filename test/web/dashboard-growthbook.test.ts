import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, cellTexts, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

setDefaultTimeout(120_000);

// GrowthBook's finished surfaces (page): /growthbook shows, per env, what GrowthBook's SDKs load, what does not
// map with what is served instead (or that everything maps), and where they connect; desktop and 390 px,
// light and dark, axe-clean.

let f: DashboardFixture;
let page: Page;

const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const { ts } = f;
  expect((await ts.api("/api/admin/gates", { body: { name: "new-nav", rules: [{ conditions: [{ attr: "country", op: "in", value: ["DE"] }], passPercentage: 25 }] } })).status).toBe(201);
  // An RE2-only regex GrowthBook's SDKs cannot run (served off) everywhere but on dev, where the rule is plain.
  expect((await ts.api("/api/admin/gates", { body: { name: "letters", rules: [{ conditions: [{ attr: "name", op: "regex", value: "^\\pL+$" }], passPercentage: 100 }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates/letters/rules", { method: "PUT", body: { env: "dev", rules: [{ conditions: [{ attr: "name", op: "regex", value: "^[a-z]+$" }], passPercentage: 100 }] } })).status).toBe(200);
  page = await f.context.newPage();
  await page.setViewportSize(DESKTOP);
  await signIn(f, page, "owner@example.com", "/growthbook");
});
afterAll(async () => {
  await f?.close();
});

async function axeClean(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

/** How far the page sticks out past the viewport's right edge (0 when it fits). */
const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

describe.skipIf(!chromiumAvailable)("GrowthBook SDKs in the dashboard", () => {
  test("the counts, what does not map (or that everything maps) per env, and where SDKs connect with a server key", async () => {
    await page.getByRole("heading", { level: 1, name: "GrowthBook SDKs" }).waitFor();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "GrowthBook SDKs" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "What they load on prod" }).waitFor();
    const facts = page.getByRole("table", { name: "The GrowthBook payload on prod" });
    expect(await cellTexts(facts.getByRole("row", { name: /^Features/ }))).toEqual(["2"]);
    expect(await cellTexts(facts.getByRole("row", { name: /^Saved groups/ }))).toEqual(["0"]);
    const unmapped = page.getByRole("table", { name: "Constructs GrowthBook's SDKs cannot evaluate as svc does on prod" });
    const letters = unmapped.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "letters" }) });
    expect(await cellTexts(letters)).toEqual(["regex /^\\pL+$/ uses RE2-only syntax", "false to every unit (the gate is off)"]);
    expect(await unmapped.getByRole("rowheader", { name: "new-nav" }).count()).toBe(0);
    const connect = page.getByRole("region", { name: "Connect" });
    await connect.getByText("use a server SDK key").waitFor();
    expect(await connect.getByRole("link", { name: "SDK keys" }).getAttribute("href")).toBe("/keys");
    expect(await cellTexts(connect.getByRole("row", { name: /^Feature endpoint/ }))).toEqual(["/api/features/{key}"]);
    await connect.getByRole("button", { name: "Copy the feature endpoint" }).waitFor();
    await axeClean("growthbook");
    await page.setViewportSize(PHONE);
    await axeClean("growthbook-phone");
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.setViewportSize(DESKTOP);

    // dev: the plain rule maps; the empty state says so.
    const env = page.getByLabel("Env");
    await env.selectOption("dev");
    await valueBecomes(env, "dev");
    await page.getByRole("heading", { level: 2, name: "What they load on dev" }).waitFor();
    await page.getByText("Everything maps: GrowthBook's SDKs evaluate every flag on dev as svc does.").waitFor();
    expect(await page.getByRole("table", { name: /^Constructs GrowthBook/ }).count()).toBe(0);
    await axeClean("growthbook-everything-maps");
    await page.setViewportSize(PHONE);
    await axeClean("growthbook-everything-maps-phone");
    await page.setViewportSize(DESKTOP);
  });
});
