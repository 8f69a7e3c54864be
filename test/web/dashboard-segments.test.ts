import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

// Issue 29 (segments UI, item 4): the segments pages, with the editor's CSV import sent in parts under the body limit.

setDefaultTimeout(120_000);

let f: DashboardFixture;
let page: Page;

const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/segments");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

/** How far the page sticks out past the viewport's right edge (0 when it fits). */
const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

const segment = async (name: string) => await f.ts.api(`/api/admin/segments/${encodeURIComponent(name)}`);
const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name}`) }) });
const csv = (name: string, lines: string[]) => ({ name, mimeType: "text/csv", buffer: Buffer.from(`${lines.join("\n")}\n`) });
/** 36-character ids, as UUIDs are: 30,000 of them are about 1.2 MB of JSON, more than one body. */
const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

describe.skipIf(!chromiumAvailable)("segments in the dashboard", () => {
  test("create by CSV import: the count shows once the file is read, a bad conditions list is refused on its field, 30,000 ids arrive in parts", async () => {
    await page.getByRole("heading", { level: 1, name: "Segments" }).waitFor();
    await page.getByText("svc segments create beta-testers --ids-file beta.csv").waitFor();
    await page.getByRole("button", { name: "New segment" }).click();
    const dialog = page.getByRole("dialog", { name: "New segment" });
    await dialog.getByLabel("Name").fill("beta-testers");
    await dialog.getByLabel("Description").fill("Beta programme");
    await valueBecomes(dialog.getByLabel("Attribute"), "user_id");
    const ids = Array.from({ length: 30_000 }, (_, i) => uuid(i));
    await dialog.getByLabel("Import ids from a CSV file").setInputFiles(csv("beta.csv", ["user_id,email", ...ids.map((id, i) => `${id},u${i}@example.com`), `${ids[0]},dup@example.com`]));
    await dialog.getByText("30,000 ids in beta.csv (header user_id skipped)").waitFor();

    await dialog.getByLabel("Conditions (JSON)").fill('{"attr": "email"}');
    await dialog.getByRole("button", { name: "Create segment" }).click();
    const conditions = dialog.getByLabel("Conditions (JSON)");
    await dialog.getByRole("alert").filter({ hasText: "The conditions are a JSON list" }).waitFor();
    expect(await conditions.getAttribute("aria-invalid")).toBe("true");
    // The server's own refusal lands on the field too, naming the condition.
    await conditions.fill('[{"attr": "x", "op": "passes_gate", "value": "g"}]');
    await dialog.getByRole("button", { name: "Create segment" }).click();
    await dialog.getByRole("alert").filter({ hasText: "conditions[0].op" }).waitFor();
    expect((await segment("beta-testers")).status).toBe(404);
    await noSeriousViolations("segment-create-invalid");

    await conditions.fill("[]");
    await dialog.getByRole("button", { name: "Create segment" }).click();
    await page.waitForURL((url) => url.pathname === "/segments/beta-testers");
    await page.getByRole("heading", { level: 1, name: "beta-testers" }).waitFor();
    await page.getByText("30,000 ids on user_id").waitFor();
    await page.getByText("and 29,980 ids more").waitFor();
    const stored = (await segment("beta-testers")).body;
    expect(stored).toMatchObject({ name: "beta-testers", description: "Beta programme", attribute: "user_id", conditions: [], idCount: 30_000 });
    expect(stored.ids).toEqual(ids);
    await noSeriousViolations("segment-detail");
  });

  test("edit: a second file adds ids (or replaces the list), the count follows; conditions change", async () => {
    await page.getByRole("button", { name: "Edit segment" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit segment beta-testers" });
    await dialog.getByText("The list holds 30,000 ids.").waitFor();
    expect(await dialog.getByLabel("What the file's ids do").count()).toBe(0);
    await dialog.getByLabel("Import ids from a CSV file").setInputFiles(csv("wave2.csv", ["user_id", "w-1", "w-2", uuid(0)]));
    await dialog.getByText("3 ids in wave2.csv (header user_id skipped)").waitFor();
    await valueBecomes(dialog.getByLabel("What the file's ids do"), "add");
    await dialog.getByLabel("Conditions (JSON)").fill('[{"attr": "email", "op": "ends_with", "value": "@acme.com"}]');
    await noSeriousViolations("segment-edit");
    await dialog.getByRole("button", { name: "Save segment" }).click();
    await page.getByRole("status").filter({ hasText: "Saved segment beta-testers" }).waitFor();
    await page.getByText("30,002 ids on user_id").waitFor();
    const stored = (await segment("beta-testers")).body;
    expect(stored.idCount).toBe(30_002);
    expect(stored.ids.slice(-2)).toEqual(["w-1", "w-2"]);
    expect(stored.conditions).toEqual([{ attr: "email", op: "ends_with", value: "@acme.com" }]);

    await page.getByRole("button", { name: "Edit segment" }).click();
    await dialog.getByLabel("Import ids from a CSV file").setInputFiles(csv("small.csv", ["a-1", "a-2"]));
    await dialog.getByText("2 ids in small.csv").waitFor();
    await dialog.getByLabel("What the file's ids do").selectOption("replace");
    await dialog.getByRole("button", { name: "Save segment" }).click();
    // (Not "2 ids on user_id" alone: "30,002 ids on user_id" holds it.)
    await page.locator("p", { hasText: /^Ids: 2 ids on user_id$/ }).waitFor();
    expect((await segment("beta-testers")).body.ids).toEqual(["a-1", "a-2"]);
  });

  test("list: search, the row's count; delete is refused while a gate names the segment, then done", async () => {
    expect((await f.ts.api("/api/admin/segments", { body: { name: "acme-staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] } })).status).toBe(201);
    await page.getByRole("link", { name: "Segments", exact: true }).first().click();
    await page.getByRole("heading", { level: 1, name: "Segments" }).waitFor();
    await row("beta-testers").waitFor();
    expect(await row("beta-testers").getByRole("cell").nth(0).innerText()).toBe("2 ids");
    expect(await row("acme-staff").getByRole("cell").nth(2).innerText()).toBe('email ends_with "@acme.com"');
    await page.getByRole("searchbox", { name: "Search segments" }).fill("programme");
    await page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /^acme-staff/ }) }).waitFor({ state: "detached" });
    await noSeriousViolations("segments");
    await page.getByRole("searchbox", { name: "Search segments" }).fill("");

    expect((await f.ts.api("/api/admin/gates", { body: { name: "beta-gate", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], passPercentage: 100 }] } })).status).toBe(201);
    await row("beta-testers").getByRole("link", { name: "beta-testers" }).click();
    await page.getByRole("button", { name: "Delete segment" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete beta-testers?" });
    await confirm.getByRole("button", { name: "Delete segment" }).click();
    await confirm.getByRole("alert").filter({ hasText: "beta-gate" }).waitFor();
    expect((await segment("beta-testers")).status).toBe(200);
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await f.ts.api("/api/admin/gates/beta-gate", { method: "DELETE" })).status).toBe(204);
    await page.getByRole("button", { name: "Delete segment" }).click();
    await confirm.getByRole("button", { name: "Delete segment" }).click();
    await page.waitForURL((url) => url.pathname === "/segments");
    await row("acme-staff").waitFor();
    expect((await segment("beta-testers")).status).toBe(404);
  });

  test("at a 390 px phone's width the list, a segment's page and its editor fit and are axe-clean, light and dark", async () => {
    await page.setViewportSize(PHONE);
    try {
      await page.getByRole("heading", { level: 1, name: "Segments" }).waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      await noSeriousViolations("segments-phone");
      await page.goto(`${f.ts.url}/segments/acme-staff`);
      await page.getByRole("heading", { level: 1, name: "acme-staff" }).waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      await noSeriousViolations("segment-detail-phone");
      await page.getByRole("button", { name: "Edit segment" }).click();
      const dialog = page.getByRole("dialog", { name: "Edit segment acme-staff" });
      await dialog.getByLabel("Import ids from a CSV file").setInputFiles(csv("one.csv", ["u-1"]));
      await dialog.getByText("1 id in one.csv").waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      await noSeriousViolations("segment-edit-phone");
      await dialog.getByRole("button", { name: "Cancel" }).click();
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });
});
