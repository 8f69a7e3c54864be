import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

const intake = (path: "bug" | "feature-request", body: unknown) => f.ts.api(`/ops/${path}`, { key: null, headers: { "x-sdk-key": f.ts.clientKey }, body });
const item = async (ref: string | number) => (await f.ts.api(`/api/admin/ops/${ref}`)).body;
const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });
const approvals = async () => (await f.ts.store.all("SELECT id FROM outbox_events WHERE project_id = ? AND type = 'ticket.approved'", f.ts.projectId)).length;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  page = await f.context.newPage();
  // One item of each origin before the page opens: a person's, and two from the public intake.
  expect((await f.ts.api("/api/admin/ops", { body: { type: "bug", title: "Search is slow", priority: "high" } })).status).toBe(201);
  expect((await intake("feature-request", { title: "Dark mode", useCase: "I read at night" })).status).toBe(201);
  expect((await intake("bug", { title: "Spam: buy cheap watches" })).status).toBe(201);
  await signIn(f, page, "owner@example.com", "/queue");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

describe.skipIf(!chromiumAvailable)("the approval queue in the dashboard", () => {
  test("pending items first with Approve and Reject named for their item; approving fires ticket.approved once", async () => {
    await page.getByRole("heading", { level: 1, name: "Queue" }).waitFor();
    await page.getByText("2 items wait for approval.").waitFor();
    const headers = await page.getByRole("rowheader").allInnerTexts();
    expect(headers).toEqual(["#3 Spam: buy cheap watches", "#2 Dark mode", "#1 Search is slow"]);
    expect(await row("#1 Search is slow").getByRole("button").count()).toBe(0);
    await noSeriousViolations("queue");

    await page.getByRole("button", { name: "Approve #2 Dark mode" }).click();
    await page.getByRole("status").filter({ hasText: "Approved #2 Dark mode" }).waitFor();
    expect((await item(2)).status).toBe("open");
    expect(await approvals()).toBe(1);
    await row("#2 Dark mode").getByText("open", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Approve #2 Dark mode" }).count()).toBe(0);
  });

  test("reject asks first, then closes the item", async () => {
    await page.getByRole("button", { name: "Reject #3 Spam: buy cheap watches" }).click();
    const confirm = page.getByRole("dialog", { name: "Reject #3 Spam: buy cheap watches?" });
    await confirm.waitFor();
    await noSeriousViolations("queue-reject");
    await confirm.getByRole("button", { name: "Reject item" }).click();
    await page.getByRole("status").filter({ hasText: "Rejected #3" }).waitFor();
    expect((await item(3)).status).toBe("rejected");
    await page.getByText("1 item waits for approval.").waitFor({ state: "detached" });
  });

  test("filters by type and status, and search over the text fields", async () => {
    await page.getByLabel("Type").selectOption("feature_request");
    await page.getByRole("rowheader", { name: "#2 Dark mode" }).waitFor();
    await row("#1 Search is slow").waitFor({ state: "detached" });
    await page.getByLabel("Type").selectOption("");
    await page.getByLabel("Status").selectOption("rejected");
    await page.getByRole("rowheader", { name: "#3 Spam: buy cheap watches" }).waitFor();
    await row("#2 Dark mode").waitFor({ state: "detached" });
    expect(await page.getByRole("rowheader").count()).toBe(1);
    await page.getByLabel("Status").selectOption("");
    await page.getByRole("searchbox", { name: "Search the queue" }).fill("AT NIGHT");
    await page.getByRole("rowheader", { name: "#2 Dark mode" }).waitFor();
    await row("#1 Search is slow").waitFor({ state: "detached" });
    expect(await page.getByRole("rowheader").count()).toBe(1);
    await page.getByRole("searchbox", { name: "Search the queue" }).fill("nothing like it");
    await page.getByText("No item matches “nothing like it”.").waitFor();
    await page.getByRole("searchbox", { name: "Search the queue" }).fill("");
  });

  test("a new item from the dashboard: server refusals land on their field; filed open", async () => {
    await page.getByRole("button", { name: "New item" }).click();
    const dialog = page.getByRole("dialog", { name: "New item" });
    await dialog.getByLabel("Type").selectOption("bug");
    await dialog.getByLabel("Title").fill("x".repeat(201));
    await dialog.getByRole("button", { name: "File item" }).click();
    const title = dialog.getByLabel("Title");
    await dialog.getByRole("alert").filter({ hasText: "title:" }).waitFor();
    expect(await title.getAttribute("aria-invalid")).toBe("true");
    await noSeriousViolations("queue-new-invalid");
    await title.fill("Export fails for big projects");
    await dialog.getByLabel("Priority").selectOption("low");
    await dialog.getByLabel("Steps to reproduce").fill("Open a project with 10,000 items\nPress Export");
    await dialog.getByRole("button", { name: "File item" }).click();
    await page.getByRole("status").filter({ hasText: "Filed #4" }).waitFor();
    expect(await item(4)).toMatchObject({ type: "bug", status: "open", priority: "low", stepsToReproduce: "Open a project with 10,000 items\nPress Export", source: "admin" });
    expect((await item(4)).reportedBy).toBe("owner@example.com");
  });

  test("the item page: fields, the moves its status allows, and an edit dialog", async () => {
    expect((await intake("bug", { title: "Avatar upload fails", stepsToReproduce: "Upload a PNG", actualResult: "Error 413", expectedResult: "The avatar changes" })).status).toBe(201);
    await page.getByRole("link", { name: "#5 Avatar upload fails" }).click();
    await page.waitForURL((url) => url.pathname === "/queue/5");
    await page.getByRole("heading", { level: 1, name: "#5 Avatar upload fails" }).waitFor();
    const about = page.getByRole("table", { name: "About this item" });
    await about.getByRole("row", { name: /Steps to reproduce\s+Upload a PNG/ }).waitFor();
    await about.getByRole("row", { name: /Use case\s+none/ }).waitFor();
    await about.getByText("pending approval").waitFor();
    await noSeriousViolations("queue-item-pending");

    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Approved #5 Avatar upload fails" }).waitFor();
    await page.getByRole("button", { name: "Start work" }).click();
    await page.getByRole("status").filter({ hasText: "Started work on #5" }).waitFor();
    expect((await item(5)).status).toBe("in_progress");
    await page.getByRole("button", { name: "Mark done" }).click();
    await page.getByRole("status").filter({ hasText: "Marked done: #5" }).waitFor();
    await page.getByRole("button", { name: "Reopen" }).waitFor();
    expect(await page.getByRole("button", { name: "Start work" }).count()).toBe(0);
    expect((await item(5)).status).toBe("done");

    await page.getByRole("button", { name: "Edit item" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit #5" });
    await valueBecomes(dialog.getByLabel("Title"), "Avatar upload fails");
    await valueBecomes(dialog.getByLabel("Actual result"), "Error 413");
    await dialog.getByLabel("Title").fill("Avatar upload fails for PNG files");
    await dialog.getByLabel("Priority").selectOption("high");
    await dialog.getByLabel("Actual result").fill("");
    await dialog.getByLabel("Use case").fill("People want their face back");
    await noSeriousViolations("queue-item-edit");
    await dialog.getByRole("button", { name: "Save item" }).click();
    await page.getByRole("status").filter({ hasText: "Saved #5" }).waitFor();
    expect(await item(5)).toMatchObject({ title: "Avatar upload fails for PNG files", priority: "high", actualResult: null, useCase: "People want their face back", status: "done" });
    await page.getByRole("heading", { level: 1, name: "#5 Avatar upload fails for PNG files" }).waitFor();
  });

  test("the navigation, the overview card and the command palette lead here", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("link", { name: /0 items wait for approval/ }).click();
    await page.waitForURL((url) => url.pathname === "/queue");
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Queue" }).getAttribute("aria-current")).toBe("page");
    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "Go to" });
    await palette.getByRole("combobox").fill("Dark mode");
    await palette.getByRole("option", { name: /#2 Dark mode/, selected: true }).waitFor();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/queue/2");
    await page.getByRole("heading", { level: 1, name: "#2 Dark mode" }).waitFor();
  });
});
