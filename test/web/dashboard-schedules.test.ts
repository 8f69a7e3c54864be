import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

// The Schedules page (issue 30): a gate percentage ramp and a killswitch toggle made in the form, a refusal shown
// in the dialog, a late run's note, cancel; axe-clean in light and dark at desktop size and at 390 px.

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

const ok = (res: { status: number; body: unknown }, status = 201) => expect(res.status, JSON.stringify(res.body)).toBe(status);
const HOUR = 3_600_000;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  ok(await f.ts.api("/api/admin/gates", { body: { name: "web-ramp" } }));
  ok(await f.ts.api("/api/admin/killswitches", { body: { name: "web-switch" } }));
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/schedules");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const schedules = async () => (await f.ts.api("/api/admin/schedules")).body as { id: string; state: string; steps: { state: string; runAt: string; late: boolean; change: any }[] }[];

describe.skipIf(!chromiumAvailable)("schedules in the dashboard", () => {
  test("a ramp and a toggle made in the form, a refusal in the dialog, a late run's note, cancel", async () => {
    await page.getByRole("heading", { level: 1, name: "Schedules" }).waitFor();
    await page.getByText("No schedules yet.").waitFor();
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Schedules" }).getAttribute("aria-current")).toBe("page");
    await noSeriousViolations("schedules-empty");

    // A gate ramp: 5 %, 25 %, 100 %, a day apart.
    await page.getByRole("button", { name: "New schedule" }).click();
    const dialog = page.getByRole("dialog", { name: "New schedule" });
    await valueBecomes(dialog.getByLabel("What"), "ramp");
    await dialog.getByLabel("Gate", { exact: true }).fill("no-such-gate");
    await dialog.getByRole("button", { name: "Schedule" }).click();
    await dialog.getByText(/no-such-gate/).first().waitFor();
    expect(await schedules()).toEqual([]);
    await dialog.getByLabel("Gate", { exact: true }).fill("web-ramp");
    await valueBecomes(dialog.getByLabel("Percentages"), "5, 25, 100");
    await dialog.getByLabel("Hours between steps").fill("24");
    await noSeriousViolations("schedules-new-ramp");
    await dialog.getByRole("button", { name: "Schedule" }).click();
    await page.getByText(/^Scheduled sch_/).waitFor();
    const [ramp] = await schedules();
    expect(ramp!.steps.map((s) => s.change.rules[0].passPercentage)).toEqual([5, 25, 100]);
    expect(Date.parse(ramp!.steps[1]!.runAt) - Date.parse(ramp!.steps[0]!.runAt)).toBe(24 * HOUR);
    const row = page.getByRole("row").filter({ hasText: ramp!.id });
    await row.getByText("web-ramp on prod: 1 rule: 25 %").waitFor();

    // Cancel it: every step was still pending.
    await page.getByRole("button", { name: `Cancel schedule ${ramp!.id}` }).click();
    await page.getByRole("dialog", { name: "Cancel schedule" }).getByRole("button", { name: "Cancel pending steps" }).click();
    await page.getByText(`Cancelled the pending steps of ${ramp!.id}.`).waitFor();
    expect((await schedules()).find((s) => s.id === ramp!.id)!.steps.map((s) => s.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(await page.getByRole("button", { name: `Cancel schedule ${ramp!.id}` }).count()).toBe(0);

    // A toggle, then run as if the servers had been down past its time: the row says it ran late.
    await page.getByRole("button", { name: "New schedule" }).click();
    await dialog.getByLabel("What").selectOption("toggle");
    await dialog.getByLabel("Killswitch", { exact: true }).fill("web-switch");
    await dialog.getByLabel("Set it to").selectOption("on");
    await dialog.getByRole("button", { name: "Schedule" }).click();
    await page.getByText(/^Scheduled sch_/).waitFor();
    const toggle = (await schedules()).find((s) => s.id !== ramp!.id)!;
    expect(toggle.steps[0]!.change).toEqual({ kind: "killswitch.set", name: "web-switch", env: "prod", value: true });
    const outcomes = await f.ts.server.ctx.services.schedules.runDue(Date.parse(toggle.steps[0]!.runAt) + 2 * HOUR);
    expect(outcomes.map((o) => o.outcome)).toEqual(["done"]);
    await page.getByRole("row").filter({ hasText: toggle.id }).getByText("ran 2 h late: no server was running at its time").waitFor();
    expect((await f.ts.api("/api/admin/killswitches/web-switch")).body.envs.prod.value).toBe(true);
    await noSeriousViolations("schedules-list");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Menu" }).waitFor();
    await noSeriousViolations("schedules-list-phone");
    await page.getByRole("button", { name: "New schedule" }).click();
    await dialog.getByLabel("Gate", { exact: true }).waitFor();
    await noSeriousViolations("schedules-new-phone");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.setViewportSize({ width: 1280, height: 860 });
  });
});
