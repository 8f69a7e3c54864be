import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

// The Change requests page (issue 30): a request opened by another person approved and applied from the list, the
// author's own refused with the server's words; a request opened through the dialog (a gate's rules prefilled with
// what prod publishes, a refusal on the rules field), its page showing "Published now" beside "Proposed" with the line
// diff, approved and applied by a second person; axe-clean in light and dark at desktop size and at 390 px.

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
  ok(await f.ts.api("/api/admin/gates", { body: { name: "web-checkout" } }));
  ok(await f.ts.api("/api/admin/gates/web-checkout/rules", { method: "PUT", body: { env: "prod", rules: [{ conditions: [], passPercentage: 10 }] } }), 200);
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

  test("open a request through the dialog, read its diff, and a second person approves and applies it, and rejects another with a note", async () => {
    await page.goto(`${f.ts.url}/requests`);
    await page.getByRole("button", { name: "Open change request" }).click();
    const dialog = page.getByRole("dialog", { name: "Open change request" });
    const rules = dialog.getByLabel("Rules (JSON)");
    await valueBecomes(dialog.getByLabel("Kind of change"), "gate.rules");
    await dialog.getByLabel("Gate").selectOption("web-checkout");
    await valueBecomes(dialog.getByLabel("Env"), "prod");
    // What prod publishes now is the copy the person edits.
    await valueBecomes(rules, JSON.stringify([{ conditions: [], passPercentage: 10 }], null, 2));
    await dialog.getByLabel("Title").fill("Half of prod on the new checkout");
    await dialog.getByLabel("Reason").fill("The 10 % looked fine for a week");
    await noSeriousViolations("requests-open-dialog");
    await page.setViewportSize({ width: 390, height: 844 });
    await noSeriousViolations("requests-open-dialog-phone");
    await page.setViewportSize({ width: 1280, height: 860 });

    // A refusal lands on the rules field.
    await rules.fill(JSON.stringify([{ conditions: [], passPercentage: 150 }], null, 2));
    await dialog.getByRole("button", { name: "Open request" }).click();
    await expectInvalid(rules);
    expect(await dialog.locator(".field").filter({ has: page.getByLabel("Rules (JSON)") }).locator(".error").innerText()).toContain("passPercentage");
    expect((await f.ts.api("/api/admin/requests?q=Half%20of%20prod")).body).toEqual([]);

    await rules.fill(JSON.stringify([{ conditions: [], passPercentage: 50 }], null, 2));
    await dialog.getByRole("button", { name: "Open request" }).click();
    await page.waitForURL((url) => /^\/requests\/cr_/.test(url.pathname));
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    await page.getByRole("heading", { level: 1, name: /Half of prod on the new checkout/ }).waitFor();
    const change = page.getByRole("region", { name: /Change 1:/ });
    await change.getByText("Published now", { exact: true }).waitFor();
    expect(await change.locator("figure", { hasText: "Published now" }).locator("pre").innerText()).toContain('"passPercentage": 10');
    expect(await change.locator("figure", { hasText: "Proposed" }).first().locator("pre").innerText()).toContain('"passPercentage": 50');
    const diff = change.locator("figure", { hasText: "line by line" });
    expect(await diff.locator(".diff-removed").innerText()).toContain('"passPercentage": 10');
    expect(await diff.locator(".diff-added").innerText()).toContain('"passPercentage": 50');
    // The author cannot approve their own: no Approve button, a Withdraw one.
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await page.getByRole("button", { name: "Withdraw" }).waitFor();
    await noSeriousViolations("request-detail");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Menu" }).waitFor();
    await noSeriousViolations("request-detail-phone");
    await page.setViewportSize({ width: 1280, height: 860 });

    // A second person signs in, approves and applies it.
    await f.context.clearCookies();
    await signIn(f, page, "ana@example.com", `/requests/${id}`);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Approved.").waitFor();
    await page.getByRole("region", { name: "Approvals (1 of 1)" }).getByText("ana@example.com").waitFor();
    await noSeriousViolations("request-detail-approved");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Applied: the changes are published.").waitFor();
    expect((await f.ts.api("/api/admin/gates/web-checkout")).body.envs.prod).toMatchObject({ rules: [{ conditions: [], passPercentage: 50 }], version: 3 });
    expect((await f.ts.api(`/api/admin/requests/${id}`)).body).toMatchObject({ state: "applied", author: "owner@example.com", approvals: [{ by: "ana@example.com" }], decidedBy: "ana@example.com" });
    await page.getByText(/What the changes replaced is in the audit trail/).waitFor();

    // Reject with a note, from the request's page.
    const other = await f.ts.api("/api/admin/requests", { key: owner, body: { title: "All of prod at once", changes: [{ kind: "gate.rules", name: "web-checkout", env: "prod", rules: [{ conditions: [], passPercentage: 100 }] }] } });
    ok(other);
    await page.goto(`${f.ts.url}/requests/${other.body.id}`);
    await page.getByRole("button", { name: "Reject…" }).click();
    const reject = page.getByRole("dialog", { name: "Reject All of prod at once?" });
    await reject.getByLabel("Note").fill("Wait for the 50 % week");
    await reject.getByRole("button", { name: "Reject request" }).click();
    await page.getByText("Rejected.", { exact: true }).waitFor();
    expect((await f.ts.api(`/api/admin/requests/${other.body.id}`)).body).toMatchObject({ state: "rejected", decidedBy: "ana@example.com", note: "Wait for the 50 % week" });
    await page.getByText("Wait for the 50 % week").waitFor();

    // Stale: another request moved the gate first; its author rebases it from its page.
    const gateRules = (passPercentage: number) => [{ kind: "gate.rules", name: "web-checkout", env: "prod", rules: [{ conditions: [], passPercentage }] }];
    const mine = await f.ts.api("/api/admin/requests", { key: ana, body: { title: "Sixty percent", changes: gateRules(60) } });
    ok(mine);
    const first = await f.ts.api("/api/admin/requests", { key: owner, body: { title: "Seventy percent", changes: gateRules(70) } });
    ok(first);
    ok(await f.ts.api(`/api/admin/requests/${first.body.id}/approve`, { method: "POST", key: ana }), 200);
    ok(await f.ts.api(`/api/admin/requests/${first.body.id}/apply`, { method: "POST", key: owner }), 200);
    ok(await f.ts.api(`/api/admin/requests/${mine.body.id}/approve`, { method: "POST", key: owner }), 200);
    ok(await f.ts.api(`/api/admin/requests/${mine.body.id}/apply`, { method: "POST", key: ana }), 409);
    await page.goto(`${f.ts.url}/requests/${mine.body.id}`);
    await page.getByRole("button", { name: "Rebase" }).click();
    await page.getByText(/Rebased onto what is published now/).waitFor();
    expect((await f.ts.api(`/api/admin/requests/${mine.body.id}`)).body).toMatchObject({ state: "open", approvals: [], changes: [{ fingerprint: "version 4" }] });
  });
});

async function expectInvalid(control: import("playwright-core").Locator): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await control.getAttribute("aria-invalid")) !== "true") {
    if (Date.now() > deadline) throw new Error("the control was never marked invalid");
    await Bun.sleep(25);
  }
}
