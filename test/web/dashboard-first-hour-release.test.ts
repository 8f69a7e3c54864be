import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

// Issue 27, items 13 and 14: what a killswitch's states are called, a prod sub-switch asking first, gate warnings
// shown as warnings, and explain clearing a stale result.
setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  expect((await f.ts.api("/api/admin/killswitches", { body: { name: "payments", switches: { eu: false } } })).status).toBe(201);
  const rule = { name: "germany", conditions: [{ attr: "country", op: "in", value: ["de"] }], passPercentage: 100 };
  expect((await f.ts.api("/api/admin/gates", { body: { name: "promo", rules: [rule] } })).status).toBe(201);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/killswitches");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

/** The switch's visible state word and its track's colour, with the theme's danger and ok colours to compare. */
async function switchLook(name: string) {
  const control = page.getByRole("switch", { name, exact: true });
  await control.waitFor();
  return control.evaluate((el) => {
    const probe = document.createElement("span");
    document.body.append(probe);
    probe.style.color = "var(--danger)";
    const danger = getComputedStyle(probe).color;
    probe.style.color = "var(--ok)";
    const ok = getComputedStyle(probe).color;
    probe.remove();
    return { text: (el as HTMLElement).innerText.trim(), track: getComputedStyle(el.querySelector(".switch-track")!).backgroundColor, danger, ok };
  });
}

const killswitch = async (name = "payments") => (await f.ts.api(`/api/admin/killswitches/${name}`)).body;

describe.skipIf(!chromiumAvailable)("the first hour of a release (issue 27, items 13 and 14)", () => {
  test("item 13: a killswitch reads killed or live, killed in the danger colour, in the list, the detail and the create dialog", async () => {
    expect((await f.ts.api("/api/admin/killswitches/payments/toggle", { body: { env: "prod", value: true } })).status).toBe(200);
    await page.goto(`${f.ts.url}/killswitches`);
    await page.waitForFunction(() => document.querySelector('[role="switch"][aria-label="payments on prod"]')?.getAttribute("aria-checked") === "true", undefined, { timeout: 8000 });
    const killed = await switchLook("payments on prod");
    expect(killed.text).toBe("killed");
    expect(killed.track).toBe(killed.danger);
    const live = await switchLook("payments on dev");
    expect(live.text).toBe("live");
    expect(live.track).not.toBe(live.ok);
    expect(live.track).not.toBe(live.danger);
    // A toggle says what it did in the same words.
    await page.getByRole("switch", { name: "payments on dev", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Killed payments on dev" }).waitFor();
    expect((await killswitch()).envs.dev.value).toBe(true);
    await page.getByRole("switch", { name: "payments on prod", exact: true }).click();
    const confirm = page.getByRole("dialog", { name: "Make payments on prod live?" });
    await confirm.getByRole("button", { name: "Make live in prod" }).waitFor();
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await noSeriousViolations("first-hour-killswitches");

    await page.goto(`${f.ts.url}/killswitches/payments`);
    await page.getByRole("heading", { level: 1, name: "payments" }).waitFor();
    expect((await switchLook("payments on prod")).text).toBe("killed");
    expect((await switchLook("payments/eu on prod")).text).toBe("live");
    expect((await switchLook("payments on staging")).text).toBe("live");

    await page.goto(`${f.ts.url}/killswitches`);
    await page.getByRole("button", { name: "New killswitch" }).click();
    const dialog = page.getByRole("dialog", { name: "New killswitch" });
    await dialog.getByLabel("Name").fill("killed-at-birth");
    await dialog.getByLabel("Killed at first, on every env").check();
    await dialog.getByRole("button", { name: "Create killswitch" }).click();
    await page.waitForURL((url) => url.pathname === "/killswitches/killed-at-birth");
    expect((await killswitch("killed-at-birth")).envs.prod.value).toBe(true);
    expect((await switchLook("killed-at-birth on prod")).text).toBe("killed");
  });

  test("item 14: adding a sub-switch on prod asks first, as a prod toggle does; other envs add at once", async () => {
    await page.goto(`${f.ts.url}/killswitches/payments`);
    await page.getByRole("heading", { level: 1, name: "payments" }).waitFor();
    const prod = page.getByRole("region", { name: "prod" });
    await prod.getByLabel("New sub-switch on prod").fill("us");
    await prod.getByRole("button", { name: "Add" }).click();
    const confirm = page.getByRole("dialog", { name: "Add payments/us on prod?" });
    await confirm.waitFor();
    // Nothing is published before the confirmation.
    expect((await killswitch()).envs.prod.switches).toEqual({ eu: false });
    await noSeriousViolations("first-hour-subswitch-confirm");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await killswitch()).envs.prod.switches).toEqual({ eu: false });
    await prod.getByRole("button", { name: "Add" }).click();
    await page.getByRole("dialog", { name: "Add payments/us on prod?" }).getByRole("button", { name: "Add on prod" }).click();
    await page.getByRole("status").filter({ hasText: "Added payments/us on prod (live)" }).waitFor();
    expect((await killswitch()).envs.prod.switches).toEqual({ eu: false, us: false });

    const dev = page.getByRole("region", { name: "dev" });
    await dev.getByLabel("New sub-switch on dev").fill("us");
    await dev.getByRole("button", { name: "Add" }).click();
    await page.getByRole("status").filter({ hasText: "Added payments/us on dev (live)" }).waitFor();
    expect(await page.getByRole("dialog").count()).toBe(0);
    expect((await killswitch()).envs.dev.switches).toEqual({ eu: false, us: false });
  });

  test("item 14: a gate published with warnings shows them as a warning, not as green success text", async () => {
    await page.goto(`${f.ts.url}/gates/promo`);
    await page.getByRole("heading", { level: 1, name: "promo" }).waitFor();
    await page.getByLabel("Pass percentage of rule 1").fill("50");
    await page.getByRole("button", { name: "Publish rules to dev" }).click();
    const status = page.getByRole("status").filter({ hasText: "Published 1 rule to dev: version 2" });
    await status.waitFor();
    expect(await status.innerText()).not.toContain("unknown");
    const warning = page.getByRole("alert").filter({ hasText: "attribute country is unknown" });
    await warning.waitFor();
    const colours = await warning.evaluate((el) => {
      const probe = document.createElement("span");
      document.body.append(probe);
      probe.style.color = "var(--ok)";
      const ok = getComputedStyle(probe).color;
      probe.remove();
      return { text: getComputedStyle(el).color, ok };
    });
    expect(colours.text).not.toBe(colours.ok);
    expect(await warning.innerText()).toContain("Published with warnings");
    await noSeriousViolations("first-hour-gate-warning");
  });

  test("item 14: explain clears the previous result when the context is not valid JSON", async () => {
    const context = page.getByLabel("Context (JSON)");
    await context.fill(JSON.stringify({ user_id: "user-7", country: "de" }));
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page.getByRole("heading", { name: /^Result:/ }).waitFor();
    await context.fill("{user_id");
    await page.getByRole("button", { name: "Explain", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "Not valid JSON" }).waitFor();
    expect(await page.getByRole("heading", { name: /^Result:/ }).count()).toBe(0);
    expect(await page.getByRole("status").filter({ hasText: "for this context" }).count()).toBe(0);
  });
});
