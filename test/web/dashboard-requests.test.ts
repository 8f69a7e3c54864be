import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture } from "./dashboard-support";

// The Change requests page (issue 30): a request opened by another person approved and applied from the list, the
// author's own refused with the server's words; axe-clean in light and dark at desktop size and at 390 px.

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;
let ana: string;
let owner: string;

const ok = (res: { status: number; body: unknown }, status = 201) => expect(res.status, JSON.stringify(res.body)).toBe(status);

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  await f.ts.addMember("ana@example.com", "editor");
  ana = await f.ts.accessTokenFor("ana@example.com");
  owner = await f.ts.accessTokenFor("owner@example.com");
  ok(await f.ts.api("/api/admin/configs", { body: { name: "web-limits", schema: true, value: { max: 10 } } }));
  ok(await f.ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } }), 200);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/requests");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("change requests in the dashboard", () => {
  test("approve and apply another person's request; your own cannot be approved", async () => {
    await page.getByRole("heading", { level: 1, name: "Change requests" }).waitFor();
    await noSeriousViolations("requests-empty");
    const change = { kind: "config.publish", name: "web-limits", env: "prod", value: { max: 50 } };
    const theirs = await f.ts.api("/api/admin/requests", { key: ana, body: { title: "Raise web limits", reason: "More traffic", changes: [change] } });
    ok(theirs);
    const mine = await f.ts.api("/api/admin/requests", { key: owner, body: { title: "My own change", changes: [{ ...change, value: { max: 5 } }] } });
    ok(mine);
    await page.reload();
    const row = page.getByRole("row").filter({ hasText: theirs.body.id });
    await row.getByText("(against version 1)").waitFor();
    await noSeriousViolations("requests-list");

    await page.getByRole("button", { name: `Approve ${mine.body.id}` }).click();
    await page.getByText("The author cannot approve their own change request").waitFor();
    expect((await f.ts.api(`/api/admin/requests/${mine.body.id}`)).body.state).toBe("open");

    await page.getByRole("button", { name: `Approve ${theirs.body.id}` }).click();
    await page.getByText(`Approved ${theirs.body.id}: now approved.`).waitFor();
    await page.getByRole("button", { name: `Apply ${theirs.body.id}` }).click();
    await page.getByText(`Applied ${theirs.body.id}: now applied.`).waitFor();
    expect((await f.ts.api("/api/admin/configs/web-limits")).body.envs.prod).toMatchObject({ value: { max: 50 }, version: 2 });
    expect((await f.ts.api(`/api/admin/requests/${theirs.body.id}`)).body).toMatchObject({ state: "applied", approvals: [{ by: "owner@example.com" }] });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Menu" }).waitFor();
    await noSeriousViolations("requests-list-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });
});
