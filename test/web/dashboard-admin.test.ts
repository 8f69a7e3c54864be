import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/keys");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const snapshotStatus = async (key: string) => (await fetch(`${f.ts.url}/api/sdk/v1/snapshot?env=prod`, { headers: { "x-sdk-key": key } })).status;

describe.skipIf(!chromiumAvailable)("keys, tokens, members and settings in the dashboard", () => {
  test("a new server key's secret is shown once, works at once, and is gone from the page after; revoking it locks SDKs out", async () => {
    await page.getByRole("heading", { level: 1, name: "SDK keys" }).waitFor();
    await noSeriousViolations("keys");
    await page.getByRole("button", { name: "New SDK key" }).click();
    const dialog = page.getByRole("dialog", { name: "New SDK key" });
    await dialog.getByLabel("Type").selectOption("server");
    await dialog.getByLabel("Name").fill("checkout-api");
    await dialog.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("dialog", { name: "Your new SDK key" });
    await shown.waitFor();
    const secret = await shown.getByLabel("The new SDK key", { exact: true }).inputValue();
    expect(secret).toMatch(/^sdk_server_[A-Za-z0-9]+$/);
    await noSeriousViolations("key-secret-once");
    expect(await snapshotStatus(secret)).toBe(200);
    await shown.getByRole("button", { name: "Done" }).click();
    // Once closed, the page holds only the masked form.
    expect(await page.content()).not.toContain(secret);
    await page.getByRole("row", { name: /checkout-api/ }).getByText(secret.slice(-4)).waitFor();

    await page.getByRole("button", { name: "Revoke server key checkout-api" }).click();
    await page.getByRole("dialog", { name: "Revoke checkout-api?" }).getByRole("button", { name: "Revoke key" }).click();
    await page.getByRole("status").filter({ hasText: "Revoked checkout-api" }).waitFor();
    expect(await snapshotStatus(secret)).toBe(401);
  });

  test("an API token is shown once and carries the access chosen", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "API tokens" }).click();
    await page.getByRole("heading", { level: 1, name: "API tokens" }).waitFor();
    await noSeriousViolations("tokens");
    await page.getByRole("button", { name: "New API token" }).click();
    const dialog = page.getByRole("dialog", { name: "New API token" });
    await dialog.getByLabel("Name").fill("ci-reader");
    await dialog.getByRole("button", { name: "Create token" }).click();
    const token = await page.getByRole("dialog", { name: "Your new API token" }).getByLabel("The new API token", { exact: true }).inputValue();
    const read = await fetch(`${f.ts.url}/api/admin/killswitches`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    const write = await fetch(`${f.ts.url}/api/admin/killswitches`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "x" }) });
    expect(write.status).toBe(403);
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("row", { name: /ci-reader/ }).waitFor();
  });

  test("members: invite someone, change their role, remove them", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
    await page.getByLabel("Email").fill("new.person@example.com");
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByRole("status").filter({ hasText: "Invited new.person@example.com" }).waitFor();
    expect(f.mails.lastTo("new.person@example.com")).toBeDefined();
    await noSeriousViolations("members");
    await page.getByLabel("Role of new.person@example.com").selectOption("editor");
    await page.getByRole("status").filter({ hasText: "new.person@example.com is now editor" }).waitFor();
    const members = (await f.ts.api("/api/admin/members")).body;
    expect(members.find((m: any) => m.email === "new.person@example.com")?.role).toBe("editor");
    // Issue 25: a pending invitation until they accept it, shown as such, and withdrawn rather than removed.
    expect(await page.getByRole("row", { name: /new\.person@example\.com/ }).innerText()).toContain("Invited, not accepted yet");
    expect(members.find((m: any) => m.email === "new.person@example.com")).toMatchObject({ status: "invited", joinedAt: null });
    await page.getByRole("button", { name: "Withdraw the invitation of new.person@example.com" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Withdraw invitation" }).click();
    await page.getByRole("status").filter({ hasText: "Withdrew the invitation of new.person@example.com" }).waitFor();
    expect((await f.ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("new.person@example.com");
    // An accepted member is removed.
    await f.ts.addMember("joined@example.com", "viewer");
    await page.reload();
    await page.getByRole("button", { name: "Remove joined@example.com" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove member" }).click();
    await page.getByRole("status").filter({ hasText: "Removed joined@example.com" }).waitFor();
    expect((await f.ts.api("/api/admin/members")).body.map((m: any) => m.email)).not.toContain("joined@example.com");
  });

  test("settings: a bad domain is refused with its reason; a good one is saved", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { level: 1, name: "Project settings" }).waitFor();
    await noSeriousViolations("settings");
    await page.getByLabel("Domain").fill("not a domain/");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").waitFor();
    expect((await f.ts.api("/api/admin/projects/current")).body.domain).toBe("");
    await page.getByLabel("Domain").fill("https://shop.example.com");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved the project settings" }).waitFor();
    expect((await f.ts.api("/api/admin/projects/current")).body.domain).toBe("https://shop.example.com");
  });

  test("the audit trail lists those changes with who made them, and filters by action", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Audit trail" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit trail" }).waitFor();
    await page.getByRole("cell", { name: "key.revoke" }).waitFor();
    await noSeriousViolations("audit");
    await page.getByLabel("Action").fill("member.");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByRole("cell", { name: "key.revoke" }).waitFor({ state: "detached" });
    await page.getByRole("cell", { name: "member.remove" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "member.role" });
    expect(await row.innerText()).toContain("owner@example.com");
  });

  test("account page", async () => {
    await page.getByRole("link", { name: "Account: owner@example.com" }).click();
    await page.getByRole("heading", { level: 1, name: "Account" }).waitFor();
    await noSeriousViolations("account");
  });
});
