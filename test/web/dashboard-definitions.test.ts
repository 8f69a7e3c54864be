import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

// The Flags as code page (issue 31): export shows the project's killswitch as YAML; an edited document pasted back
// plans the change (field, before → after) and applies it; an Unleash export converts with its unmapped parts
// listed. axe-clean in light and dark, at desktop size and at 390 px.

setDefaultTimeout(120_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const made = await f.ts.api("/api/admin/killswitches", { body: { name: "payments", description: "Card payments" } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/definitions");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("flags as code in the dashboard", () => {
  test("export, edit, plan and apply; import an Unleash export with what it could not map", async () => {
    await page.getByRole("heading", { level: 1, name: "Flags as code" }).waitFor();
    await page.getByRole("navigation").getByRole("link", { name: "Flags as code" }).waitFor();

    // Export: YAML of the chosen sections.
    await page.getByRole("checkbox", { name: "experiments" }).uncheck();
    await page.getByRole("button", { name: "Export", exact: true }).click();
    const exported = page.getByRole("textbox", { name: "Exported document" });
    await exported.waitFor();
    const yaml = await exported.inputValue();
    expect(yaml).toContain("# svc definitions");
    expect(yaml).toContain("name: payments");
    expect(yaml).not.toContain("experiments:");
    await page.getByRole("button", { name: "Copy the exported document" }).waitFor();
    await page.getByRole("button", { name: "Download svc.yaml" }).waitFor();
    await noSeriousViolations("definitions-export");

    // Plan and apply an edited copy.
    const doc = page.getByRole("textbox", { name: "Document (YAML or JSON)" });
    await doc.fill(yaml.replace("Card payments", "Card payments, edited"));
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    const planned = page.getByRole("list", { name: "Planned changes" });
    await planned.getByText("killswitches/payments").waitFor();
    expect(await planned.innerText()).toContain('description: "Card payments" → "Card payments, edited"');
    await page.getByText("Plan: 0 created, 1 changed, 0 deleted").waitFor();
    await noSeriousViolations("definitions-plan");
    await page.getByRole("button", { name: "Apply", exact: true }).click();
    await page.getByRole("dialog", { name: "Apply these changes?" }).getByRole("button", { name: "Apply" }).click();
    await page.getByText("Applied: 0 created, 1 changed, 0 deleted.").waitFor();
    expect((await f.ts.api("/api/admin/killswitches/payments")).body.description).toBe("Card payments, edited");

    // A refusal lands on the document box.
    await doc.fill("version: 1\nkillswitches:\n  - name: payments\n    description: 3\n");
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await doc.and(page.locator('[aria-invalid="true"]')).waitFor();

    // On an env requiring approval, apply opens a change request instead, and links to it.
    expect((await f.ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } })).status).toBe(200);
    const onProd = { version: 1, killswitches: [{ name: "payments", description: "Card payments, edited", envs: { prod: { value: true, switches: {} } } }] };
    await doc.fill(JSON.stringify(onProd, null, 2));
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await planned.getByText("killswitches/payments").waitFor();
    await page.getByRole("button", { name: "Apply", exact: true }).click();
    await page.getByRole("dialog", { name: "Apply these changes?" }).getByRole("button", { name: "Apply" }).click();
    await page.getByText(/Opened change request cr_\w+ \(needs 1 approval\)/).waitFor();
    expect((await f.ts.api("/api/admin/killswitches/payments")).body.envs.prod.value).toBe(false);
    await page.getByRole("link", { name: /See change request cr_/ }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/requests/cr_"));
    await page.getByRole("heading", { level: 1, name: /svc apply/ }).waitFor();
    expect((await f.ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: {} } })).status).toBe(200);
    await page.goto(`${f.ts.url}/definitions`);
    await page.getByRole("heading", { level: 1, name: "Flags as code" }).waitFor();

    // Import: Unleash's export converted, what it left out listed, the document ready to plan.
    await page.getByRole("combobox", { name: "Tool" }).selectOption("unleash");
    await page.getByLabel("Export file (JSON)").setInputFiles(join(import.meta.dir, "..", "fixtures", "imports", "unleash.json"));
    const unmapped = page.getByRole("list", { name: "Not mapped" });
    await unmapped.waitFor();
    expect(await unmapped.getByRole("listitem").count()).toBe(4);
    await page.getByRole("list", { name: "Re-bucketed" }).getByText("new-checkout").waitFor();
    expect(JSON.parse(await doc.inputValue()).gates.map((g: { name: string }) => g.name)).toContain("new-checkout");
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await planned.getByText("gates/new-checkout").waitFor();
    await noSeriousViolations("definitions-import");
    expect((await f.ts.api("/api/admin/gates/new-checkout")).status).toBe(404);

    await page.setViewportSize({ width: 390, height: 844 });
    await noSeriousViolations("definitions-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
  });
});
