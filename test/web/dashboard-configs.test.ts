import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const schema = { type: "object", properties: { max: { type: "integer", minimum: 1 } }, required: ["max"], additionalProperties: false };
  expect((await f.ts.api("/api/admin/configs", { body: { name: "limits", schema, value: { max: 3 }, description: "Rate limits" } })).status).toBe(201);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/configs");
});
afterAll(async () => {
  await f?.close();
});

/** Replaces the editor's text as a person would: select all, delete, type. */
async function typeInEditor(label: string, text: string): Promise<void> {
  await page.getByRole("textbox", { name: label }).click();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type(text);
}

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("configs in the dashboard", () => {
  test("the list shows each config's versions; its page opens from it", async () => {
    await page.getByRole("heading", { level: 1, name: "Configs" }).waitFor();
    await noSeriousViolations("configs");
    await page.getByRole("link", { name: "limits" }).click();
    await page.waitForURL((url) => url.pathname === "/configs/limits");
    await page.getByRole("heading", { level: 1, name: "limits" }).waitFor();
  });

  test("the activity names the key that acted, its raw actor on hover (issue 27, item 15)", async () => {
    const minted = await f.ts.api("/api/admin/keys", { body: { type: "admin", name: "deploy-bot" } });
    expect(minted.status).toBe(201);
    expect((await f.ts.api("/api/admin/configs/limits", { method: "PATCH", key: minted.body.key, body: { description: "Rate limits per minute" } })).status).toBe(200);
    await page.reload();
    const row = page.getByRole("row").filter({ hasText: "deploy-bot" });
    await row.waitFor();
    expect(await row.getByText("deploy-bot", { exact: true }).getAttribute("title")).toBe(`admin-key:${minted.body.id}@keys.local`);
    expect(await page.getByRole("table", { name: /Recent activity on limits/ }).innerText()).not.toContain("@keys.local");
  });

  test("a value that breaks the schema is shown inline as you type, and can be neither saved nor published", async () => {
    await page.getByRole("tab", { name: /staging/ }).click();
    await typeInEditor("Value of limits on staging (JSON)", '{"max": 0}');
    // While typing, the half-typed text is "not valid JSON"; the finished value gets the schema's own words.
    const alert = page.getByRole("alert").filter({ hasText: "must be >= 1" });
    await alert.waitFor();
    expect(await alert.innerText()).toContain("does not match the schema");
    expect(await page.getByRole("textbox", { name: /limits on staging/ }).getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByRole("button", { name: "Save draft" }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Publish draft to staging" }).isDisabled()).toBe(true);
    await noSeriousViolations("config-invalid");
    // Nothing was stored.
    expect((await f.ts.api("/api/admin/configs/limits")).body.drafts).toEqual({});
    // Broken JSON is refused the same way, before any request.
    await typeInEditor("Value of limits on staging (JSON)", '{"max": ');
    await page.getByRole("alert").filter({ hasText: "Not valid JSON" }).waitFor();
  });

  test("a valid value: save the draft, see the diff, publish with a confirmation", async () => {
    await typeInEditor("Value of limits on staging (JSON)", '{"max": 5}');
    await page.getByText("Matches the schema.").waitFor();
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByRole("status").filter({ hasText: "Saved the staging draft" }).waitFor();
    expect((await f.ts.api("/api/admin/configs/limits")).body.drafts.staging).toMatchObject({ value: { max: 5 }, baseVersion: 1 });
    expect((await f.ts.api("/api/admin/configs/limits")).body.envs.staging).toMatchObject({ value: { max: 3 }, version: 1 });
    await page.getByRole("figure").filter({ hasText: "added:" }).first().waitFor();
    await noSeriousViolations("config-draft");

    const publish = page.getByRole("button", { name: "Publish draft to staging" });
    await publish.click();
    const dialog = page.getByRole("dialog", { name: "Publish limits on staging?" });
    await dialog.waitFor();
    await noSeriousViolations("config-publish-confirm");
    await dialog.getByRole("button", { name: "Publish to staging" }).click();
    await page.getByRole("status").filter({ hasText: "Published limits on staging: version 2" }).waitFor();
    const stored = (await f.ts.api("/api/admin/configs/limits")).body;
    expect(stored.envs.staging).toMatchObject({ value: { max: 5 }, version: 2 });
    expect(stored.drafts).toEqual({});
    const snapshot = await (await fetch(`${f.ts.url}/api/sdk/v1/snapshot?env=staging`, { headers: { "x-sdk-key": f.ts.serverKey } })).json();
    expect(snapshot.configs.limits).toMatchObject({ value: { max: 5 } });
  });
});
