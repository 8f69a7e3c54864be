import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { lineOf, sentryClient } from "../support/sentry-client";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

const ingest = (events: unknown[]) => f.ts.api("/api/sdk/v1/events", { key: f.ts.serverKey, body: { events } });

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  expect((await f.ts.api("/api/admin/events", { body: { name: "checkout.completed", folder: "commerce", description: "An order was paid", properties: [{ name: "amount", type: "number", required: true, description: "EUR" }] } })).status).toBe(201);
  // Ingest discovers two names nobody registered: pending.
  const now = Date.now();
  expect(
    (
      await ingest([
        { name: "signup", unitId: "u1", ts: now - 3_600_000, properties: { plan: "pro" } },
        { name: "signup", unitId: "u2", ts: now, properties: { plan: "free" } },
        { name: "cart.viewed", unitId: "u1", ts: now },
        { name: "checkout.completed", unitId: "u1", ts: now, value: 40, properties: { amount: 40, country: "de" } },
        { name: "checkout.completed", unitId: "u2", ts: now - 2 * 3_600_000, value: 19.5, properties: { amount: 19.5, country: "fr" } },
      ])
    ).status,
  ).toBe(202);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/events");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const catalogEvent = async (name: string) => await f.ts.api(`/api/admin/events/${encodeURIComponent(name)}`);

describe.skipIf(!chromiumAvailable)("event catalog in the dashboard", () => {
  test("pending events are marked and approved one by one; search filters", async () => {
    await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
    const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name.replace(".", "\\.")}`) }) });
    await row("signup").waitFor();
    expect(await cellTexts(row("signup"))).toEqual(["none", "plan: string", "pending", expect.stringMatching(/now|second|never/), expect.stringContaining("Approve")]);
    expect(await row("checkout.completed").getByRole("cell").nth(2).innerText()).toBe("registered");
    await page.getByText("2 events are pending approval.").waitFor();
    await noSeriousViolations("events");

    await page.getByRole("button", { name: "Approve event signup" }).click();
    await page.getByRole("status").filter({ hasText: "Approved signup" }).waitFor();
    expect((await catalogEvent("signup")).body).toMatchObject({ pending: 0, properties: [{ name: "plan", type: "string" }] });
    expect(await row("signup").getByRole("cell").nth(2).innerText()).toBe("registered");
    expect(await page.getByRole("button", { name: "Approve event signup" }).count()).toBe(0);
    await page.getByText("1 event is pending approval.").waitFor();

    await page.getByRole("searchbox", { name: "Search events" }).fill("COMMERCE");
    await row("signup").waitFor({ state: "detached" });
    expect(await row("checkout.completed").count()).toBe(1);
    await page.getByRole("searchbox", { name: "Search events" }).fill("nothing like it");
    await page.getByText("No event matches “nothing like it”.").waitFor();
    await page.getByRole("searchbox", { name: "Search events" }).fill("");
  });

  test("register an event with properties: a bad property name is said on its row; then edit and delete it", async () => {
    await page.getByRole("button", { name: "Register event" }).click();
    const dialog = page.getByRole("dialog", { name: "Register event" });
    await dialog.getByLabel("Name", { exact: true }).fill("search.performed");
    await dialog.getByLabel("Folder").fill("discovery");
    await dialog.getByLabel("Description", { exact: true }).fill("A search ran");
    await dialog.getByRole("button", { name: "Add property" }).click();
    expect(await isFocusedSoon(dialog.getByLabel("Name of property 1"))).toBe(true);
    await dialog.getByLabel("Name of property 1").fill("query text");
    await dialog.getByRole("button", { name: "Add property" }).click();
    await dialog.getByLabel("Name of property 2").fill("results");
    await dialog.getByLabel("Type of property 2").selectOption("number");
    await dialog.getByRole("checkbox", { name: "Property 2 is required" }).check();
    await dialog.getByLabel("Description of property 2").fill("How many came back");
    await dialog.getByRole("button", { name: "Register event" }).click();
    const alert = dialog.getByRole("alert").filter({ hasText: "Property 1, name" });
    await alert.waitFor();
    const name1 = dialog.getByLabel("Name of property 1");
    expect(await name1.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(name1)).toBe(true);
    expect((await catalogEvent("search.performed")).status).toBe(404);
    await noSeriousViolations("event-register-invalid");

    await name1.fill("query");
    await dialog.getByRole("button", { name: "Register event" }).click();
    await page.getByRole("status").filter({ hasText: "Registered event search.performed" }).waitFor();
    expect((await catalogEvent("search.performed")).body).toMatchObject({
      folder: "discovery",
      description: "A search ran",
      pending: 0,
      properties: [
        { name: "query", type: "string", required: false, description: "" },
        { name: "results", type: "number", required: true, description: "How many came back" },
      ],
    });

    await page.getByRole("button", { name: "Edit event search.performed" }).click();
    const edit = page.getByRole("dialog", { name: "Edit event search.performed" });
    expect(await edit.getByLabel("Name", { exact: true }).count()).toBe(0);
    await valueBecomes(edit.getByLabel("Name of property 2"), "results");
    await edit.getByRole("button", { name: "Remove property 1 (query)" }).click();
    await valueBecomes(edit.getByLabel("Name of property 1"), "results");
    await edit.getByLabel("Description", { exact: true }).fill("A search ran, results counted");
    await noSeriousViolations("event-edit");
    await edit.getByRole("button", { name: "Save event" }).click();
    await page.getByRole("status").filter({ hasText: "Saved event search.performed" }).waitFor();
    expect((await catalogEvent("search.performed")).body).toMatchObject({ description: "A search ran, results counted", properties: [{ name: "results", type: "number", required: true }] });

    await page.getByRole("button", { name: "Delete event search.performed" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete search.performed?" });
    await confirm.waitFor();
    await noSeriousViolations("event-delete");
    await confirm.getByRole("button", { name: "Delete event" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted event search.performed" }).waitFor();
    expect((await catalogEvent("search.performed")).status).toBe(404);
  });
});

const metric = async (name: string) => await f.ts.api(`/api/admin/metrics/${encodeURIComponent(name)}`);

describe.skipIf(!chromiumAvailable)("metrics in the dashboard", () => {
  test("define a sum with a filter: a refused filter value is said on its control; the new metric opens on its chart", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Metrics" }).click();
    await page.getByRole("heading", { level: 1, name: "Metrics" }).waitFor();
    await page.getByText("No metrics yet.").waitFor();
    await page.getByRole("button", { name: "New metric" }).click();
    const dialog = page.getByRole("dialog", { name: "New metric" });
    await dialog.getByLabel("Name", { exact: true }).fill("revenue-de");
    await dialog.getByLabel("Description").fill("Paid in Germany");
    await dialog.getByLabel("Kind", { exact: true }).selectOption("sum");
    await dialog.getByLabel("Event", { exact: true }).selectOption("checkout.completed");
    await dialog.getByLabel("Summed property").selectOption("amount");
    await dialog.getByRole("button", { name: "Add filter" }).click();
    await dialog.getByLabel("Property of filter 1").selectOption("country");
    await dialog.getByLabel("Operator of filter 1").selectOption("gt");
    await dialog.getByLabel("Value of filter 1").fill("de");
    await dialog.getByRole("button", { name: "Create metric" }).click();
    await dialog.getByRole("alert").filter({ hasText: "Filter 1, value" }).waitFor();
    const value = dialog.getByLabel("Value of filter 1");
    expect(await value.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(value)).toBe(true);
    expect((await metric("revenue-de")).status).toBe(404);
    await noSeriousViolations("metric-new-invalid");

    await dialog.getByLabel("Operator of filter 1").selectOption("eq");
    await dialog.getByRole("button", { name: "Create metric" }).click();
    await page.waitForURL((url) => url.pathname === "/metrics/revenue-de");
    await page.getByRole("heading", { level: 1, name: "revenue-de" }).waitFor();
    expect((await metric("revenue-de")).body).toMatchObject({ kind: "sum", event: "checkout.completed", property: "amount", filters: [{ property: "country", op: "eq", value: "de" }], description: "Paid in Germany" });

    // 24 hours, hourly: 24 bars; the image's name sums them up, and a table holds every bucket.
    const chart = page.getByRole("img", { name: /^revenue-de, 24 h, hourly: 24 buckets/ });
    await chart.waitFor();
    expect(await chart.getAttribute("aria-label")).toContain("Total 40, highest 40");
    expect(await page.locator("svg rect.chart-bar").count()).toBe(24);
    expect(await page.getByRole("table", { name: "revenue-de, 24 h, hourly, one row per bucket" }).getByRole("row").count()).toBe(25);
    expect(await page.getByRole("button", { name: "24 h, hourly" }).getAttribute("aria-pressed")).toBe("true");
    await page.getByText("SQL that ran").click();
    expect(await page.locator("details pre").innerText()).toMatch(/SELECT/i);
    await noSeriousViolations("metric-detail");

    // 7 days, hourly: a line with 168 points; 30 days, daily: 30 bars.
    await page.getByRole("button", { name: "7 d, hourly" }).click();
    await page.getByRole("img", { name: /^revenue-de, 7 d, hourly: 168 buckets/ }).waitFor();
    expect(await page.locator("svg path.chart-line").count()).toBe(1);
    expect(await page.locator("svg circle.chart-point").count()).toBe(168);
    await noSeriousViolations("metric-detail-7d");
    await page.getByRole("button", { name: "30 d, daily" }).click();
    await page.getByRole("img", { name: /^revenue-de, 30 d, daily: 30 buckets.*Total 40/ }).waitFor();
    expect(await page.locator("svg rect.chart-bar").count()).toBe(30);
  });

  test("a ratio of two unique counts; edit it from its page", async () => {
    await page.getByRole("link", { name: "Metrics" }).first().click();
    await page.getByRole("heading", { level: 1, name: "Metrics" }).waitFor();
    await page.getByRole("button", { name: "New metric" }).click();
    const dialog = page.getByRole("dialog", { name: "New metric" });
    await dialog.getByLabel("Name", { exact: true }).fill("buyers-per-signup");
    await dialog.getByLabel("Kind", { exact: true }).selectOption("ratio");
    await dialog.getByLabel("Kind of the numerator").selectOption("unique");
    await dialog.getByLabel("Event of the numerator").selectOption("checkout.completed");
    await dialog.getByLabel("Kind of the denominator").selectOption("unique");
    await dialog.getByLabel("Event of the denominator").selectOption("signup");
    await noSeriousViolations("metric-new-ratio");
    await dialog.getByRole("button", { name: "Create metric" }).click();
    await page.waitForURL((url) => url.pathname === "/metrics/buyers-per-signup");
    expect((await metric("buyers-per-signup")).body).toMatchObject({ kind: "ratio", event: null, numerator: { kind: "unique", event: "checkout.completed" }, denominator: { kind: "unique", event: "signup" } });
    await page.getByRole("img", { name: /^buyers-per-signup, 24 h, hourly: 24 buckets/ }).waitFor();
    // Not summable: no total in the summary.
    expect(await page.getByRole("img", { name: /buyers-per-signup/ }).getAttribute("aria-label")).not.toContain("Total");

    await page.getByRole("button", { name: "Edit metric" }).click();
    const edit = page.getByRole("dialog", { name: "Edit metric buyers-per-signup" });
    await valueBecomes(edit.getByLabel("Event of the denominator"), "signup");
    await edit.getByLabel("Kind of the numerator").selectOption("count");
    await edit.getByRole("button", { name: "Save metric" }).click();
    await page.getByRole("status").filter({ hasText: "Saved metric buyers-per-signup" }).waitFor();
    expect((await metric("buyers-per-signup")).body.numerator).toMatchObject({ kind: "count", event: "checkout.completed" });
  });

  test("a metric whose event left the catalog says so (422) with a way to edit it; fixed, it charts again; delete asks first", async () => {
    expect((await f.ts.api("/api/admin/events", { body: { name: "cart.viewed" } })).status).toBe(200);
    expect((await f.ts.api("/api/admin/metrics", { body: { name: "carts", kind: "count", event: "cart.viewed" } })).status).toBe(201);
    expect((await f.ts.api("/api/admin/events/cart.viewed", { method: "DELETE" })).status).toBe(204);
    await page.goto(`${f.ts.url}/metrics/carts`);
    const alert = page.getByRole("alert").filter({ hasText: "This metric no longer computes" });
    await alert.waitFor();
    expect(await alert.innerText()).toContain("cart.viewed is not in the event catalog");
    expect(await page.getByRole("img", { name: /carts/ }).count()).toBe(0);
    await noSeriousViolations("metric-broken");

    await page.getByRole("button", { name: "Edit carts" }).click();
    const edit = page.getByRole("dialog", { name: "Edit metric carts" });
    await valueBecomes(edit.getByLabel("Event", { exact: true }), "cart.viewed");
    await edit.getByLabel("Event", { exact: true }).selectOption("signup");
    await edit.getByRole("button", { name: "Save metric" }).click();
    await page.getByRole("img", { name: /^carts, 24 h, hourly: 24 buckets.*Total 2/ }).waitFor();
    expect(await page.getByRole("alert").filter({ hasText: "no longer computes" }).count()).toBe(0);

    await page.getByRole("button", { name: "Delete metric" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete carts?" });
    await noSeriousViolations("metric-delete");
    await confirm.getByRole("button", { name: "Delete metric" }).click();
    await page.waitForURL((url) => url.pathname === "/metrics");
    expect((await metric("carts")).status).toBe(404);
    await page.getByRole("link", { name: "revenue-de" }).waitFor();
    await noSeriousViolations("metrics");
  });
});

const STACK = "TypeError: Cannot read properties of undefined (reading 'total')\n    at chargeCard (/srv/app/lib/checkout.js:42:17)\n    at async handleCheckout (/srv/app/routes/checkout.js:18:5)";
const reportErrors = (errors: unknown[]) => f.ts.api("/api/sdk/v1/errors", { key: f.ts.serverKey, body: { errors } });

describe.skipIf(!chromiumAvailable)("errors in the dashboard", () => {
  test("the list: counts, affected units, status badges; status filter and search", async () => {
    const typeError = { type: "TypeError", message: "Cannot read properties of undefined (reading 'total')", stack: STACK };
    expect(
      (
        await reportErrors([
          { ...typeError, unitId: "u1" },
          { ...typeError, unitId: "u2" },
          { ...typeError, unitId: "u1" },
          { type: "TimeoutError", message: "Payment provider timed out after 30000 ms", fingerprint: "payment-timeout" },
        ])
      ).status,
    ).toBe(202);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Errors" }).click();
    await page.getByRole("heading", { level: 1, name: "Errors" }).waitFor();
    const row = (text: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(text) }) });
    await row("TypeError").waitFor();
    expect(await cellTexts(row("TypeError"))).toEqual(["3", "2", expect.stringMatching(/now|second/), "unresolved"]);
    expect(await cellTexts(row("TimeoutError"))).toEqual(["1", "0", expect.any(String), "unresolved"]);
    await noSeriousViolations("errors");

    await page.getByRole("searchbox", { name: "Search errors" }).fill("payment");
    await row("TypeError").waitFor({ state: "detached" });
    expect(await row("TimeoutError").count()).toBe(1);
    await page.getByRole("searchbox", { name: "Search errors" }).fill("");
    await page.getByRole("combobox", { name: "Status" }).selectOption("resolved");
    await page.getByText("No resolved errors.").waitFor();
    await page.getByRole("combobox", { name: "Status" }).selectOption("unresolved");
    await row("TypeError").waitFor();
  });

  test("the detail page: first and last seen, culprit, occurrences chart; resolve it, and it regresses when it happens again", async () => {
    await page.getByRole("link", { name: /TypeError/ }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/errors/err_"));
    await page.getByRole("heading", { level: 1, name: "TypeError" }).waitFor();
    const facts = async (name: string) => await page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) }).getByRole("cell").innerText();
    expect(await facts("Culprit")).toContain("chargeCard");
    expect(await facts("First seen")).toMatch(/now|second/);
    expect(await facts("Last seen")).toMatch(/now|second/);
    expect(await facts("Affected units")).toBe("2");
    await page.getByRole("img", { name: /^Occurrences of TypeError, 24 h, hourly: 24 buckets.*Total 3/ }).waitFor();
    expect(await page.locator("svg rect.chart-bar").count()).toBe(24);
    await noSeriousViolations("error-detail");

    await page.getByRole("button", { name: "Resolve error" }).click();
    await page.getByRole("status").filter({ hasText: "Resolved TypeError" }).waitFor();
    const id = new URL(page.url()).pathname.split("/").pop()!;
    expect((await f.ts.api(`/api/admin/errors/${id}`)).body.status).toBe("resolved");
    expect(await facts("Status")).toContain("resolved");
    await page.getByRole("button", { name: "Reopen error" }).waitFor();

    expect((await reportErrors([{ type: "TypeError", message: "Cannot read properties of undefined (reading 'total')", stack: STACK, unitId: "u3" }])).status).toBe(202);
    expect((await f.ts.api(`/api/admin/errors/${id}`)).body.status).toBe("regressed");
    await page.getByRole("link", { name: "Errors" }).first().click();
    await page.getByRole("combobox", { name: "Status" }).selectOption("regressed");
    const regressed = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /TypeError/ }) });
    await regressed.waitFor();
    expect(await cellTexts(regressed)).toEqual(["4", "3", expect.any(String), "regressed"]);
    await noSeriousViolations("errors-regressed");
  });

  test("the detail page shows where it broke (issue 27, item 2): @sentry/node's in-app frame with its source lines, library frames folded, tags, release, environment and unit", async () => {
    const sentry = sentryClient(`http://${f.ts.serverKey}@127.0.0.1:${new URL(f.ts.url).port}/1`, { release: "shop@3.1.0", environment: "production" });
    try {
      // Through Array.prototype.map: a runtime frame (not in-app) between the test and the function that throws.
      [1].map(() => declineTheCard({ id: 9 }));
    } catch (err) {
      sentry.capture(err, { user: { id: "acct-9" }, tags: { route: "/pay" } });
    }
    expect(await sentry.flush()).toBe(true);
    const error = ((await f.ts.api("/api/admin/errors")).body as any[]).find((e) => e.type === "RangeError");
    await page.goto(`${f.ts.url}/errors/${error.id}`);
    const latest = page.getByRole("region", { name: "Latest occurrence" });
    await latest.waitFor();
    const fact = async (name: string) => await latest.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) }).getByRole("cell").innerText();
    expect(await fact("Unit")).toBe("acct-9");
    expect(await fact("Release")).toBe("shop@3.1.0");
    expect(await fact("Environment")).toBe("production");
    expect(await fact("Tags")).toContain("route: /pay");
    // In-app frames first and open: the function, this file and the line that threw, with the source around it.
    const line = lineOf(import.meta.path, "THROWS-HERE-" + "dashboard");
    const top = latest.getByRole("list", { name: "In-app frames" }).getByRole("listitem").first();
    expect(await top.innerText()).toContain("declineTheCard");
    expect(await top.innerText()).toContain(`${import.meta.path}:${line}`);
    const source = top.getByRole("group", { name: `Source around line ${line}` });
    expect(await source.innerText()).toContain("throw new RangeError(`Card declined for order ${order.id}`);");
    // The runtime's frames are folded until asked for.
    const folded = latest.locator("details").filter({ has: page.getByText(/^1 other frame/) });
    expect(await folded.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    await folded.getByText(/^1 other frame/).click();
    expect(await folded.getByRole("list", { name: "Other frames" }).innerText()).toContain("native");
    await noSeriousViolations("error-stack");
    // Resolved, so that the overview's counts below stay those of the two errors above.
    expect((await f.ts.api(`/api/admin/errors/${error.id}`, { method: "PATCH", body: { status: "resolved" } })).status).toBe(200);
  });
});

/** Throws where the error page must point: this file, at the marked line. */
function declineTheCard(order: { id: number }): never {
  throw new RangeError(`Card declined for order ${order.id}`); // THROWS-HERE-dashboard
}

const rule = async (name: string) => await f.ts.api(`/api/admin/alert-rules/${encodeURIComponent(name)}`);

describe.skipIf(!chromiumAvailable)("alert rules in the dashboard", () => {
  test("create a rule (a refused threshold is said on its field); it fires; edit, disable and enable it; delete asks first", async () => {
    expect((await f.ts.api("/api/admin/metrics", { body: { name: "signups", kind: "count", event: "signup" } })).status).toBe(201);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Alert rules" }).click();
    await page.getByRole("heading", { level: 1, name: "Alert rules" }).waitFor();
    await page.getByText("No alert rules yet.").waitFor();
    await page.getByRole("button", { name: "New alert rule" }).click();
    const dialog = page.getByRole("dialog", { name: "New alert rule" });
    await dialog.getByLabel("Name").fill("signups-high");
    await dialog.getByLabel("Metric").selectOption({ label: "signups" });
    await dialog.getByLabel("Comparator").selectOption("gte");
    await dialog.getByLabel("Window (hours)").fill("24");
    await dialog.getByRole("button", { name: "Create alert rule" }).click();
    await dialog.getByRole("alert").filter({ hasText: "threshold" }).waitFor();
    expect(await dialog.getByLabel("Threshold").getAttribute("aria-invalid")).toBe("true");
    expect((await rule("signups-high")).status).toBe(404);
    await noSeriousViolations("alert-new-invalid");

    await dialog.getByLabel("Threshold").fill("2");
    await dialog.getByRole("button", { name: "Create alert rule" }).click();
    await page.getByRole("status").filter({ hasText: "Created alert rule signups-high" }).waitFor();
    const signupsId = (await metric("signups")).body.id;
    expect((await rule("signups-high")).body).toMatchObject({ metricId: signupsId, comparator: "gte", threshold: 2, windowHours: 24, enabled: true, notify: null, state: "ok" });

    // Two signups in the last 24 hours: the evaluator's next round fires it, and the list shows that without a reload.
    await f.ts.server.ctx.services.alerts.evaluateDue(Date.now());
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /signups-high/ }) });
    await row.getByText("firing").waitFor();
    expect(await row.getByRole("cell").first().innerText()).toBe("signups over 24 h ≥ 2");
    await page.getByText("1 rule firing").waitFor();
    await noSeriousViolations("alerts");

    await page.getByRole("button", { name: "Edit alert rule signups-high" }).click();
    const edit = page.getByRole("dialog", { name: "Edit alert rule signups-high" });
    expect(await edit.getByLabel("Metric").count()).toBe(0);
    expect(await edit.innerText()).toContain("Watches metric signups");
    await edit.getByLabel("Threshold").fill("100");
    await edit.getByLabel("Webhook URL").fill("https://hooks.example.com/alerts");
    await noSeriousViolations("alert-edit");
    await edit.getByRole("button", { name: "Save alert rule" }).click();
    await page.getByRole("status").filter({ hasText: "Saved alert rule signups-high" }).waitFor();
    expect((await rule("signups-high")).body).toMatchObject({ threshold: 100, comparator: "gte", windowHours: 24, notify: { webhookUrl: "https://hooks.example.com/alerts" } });

    const toggle = page.getByRole("switch", { name: "Alert rule signups-high enabled" });
    expect(await toggle.getAttribute("aria-checked")).toBe("true");
    await toggle.click();
    await page.getByRole("status").filter({ hasText: "Disabled signups-high" }).waitFor();
    expect((await rule("signups-high")).body).toMatchObject({ enabled: false, state: "ok" });
    expect(await toggle.getAttribute("aria-checked")).toBe("false");
    await row.getByText("disabled").waitFor();
    await toggle.click();
    await page.getByRole("status").filter({ hasText: "Enabled signups-high" }).waitFor();
    expect((await rule("signups-high")).body.enabled).toBe(true);

    // Keys cannot delete a rule; the signed-in browser can, after confirming.
    expect((await f.ts.api("/api/admin/alert-rules/signups-high", { method: "DELETE" })).status).toBe(403);
    await page.getByRole("button", { name: "Delete alert rule signups-high" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete signups-high?" });
    await noSeriousViolations("alert-delete");
    await confirm.getByRole("button", { name: "Delete alert rule" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted alert rule signups-high" }).waitFor();
    expect((await rule("signups-high")).status).toBe(404);
    await page.getByText("No alert rules yet.").waitFor();
  });

  test("the overview has a card per section: firing alert rules, unresolved errors, events pending, metrics", async () => {
    expect((await f.ts.api("/api/admin/alert-rules", { body: { name: "any-signup", metricId: "signups", threshold: 0, comparator: "gt", windowHours: 24 } })).status).toBe(201);
    await f.ts.server.ctx.services.alerts.evaluateDue(Date.now());
    await page.getByRole("link", { name: "Overview" }).click();
    const cards = page.getByRole("main").getByRole("listitem");
    await cards.filter({ hasText: "firing" }).waitFor();
    expect(await cards.filter({ hasText: "firing" }).innerText()).toBe("1 alert rule firing · 1 rule");
    expect(await cards.filter({ hasText: "unresolved errors" }).innerText()).toBe("2 unresolved errors · 1 regressed");
    expect(await cards.filter({ hasText: "pending approval" }).innerText()).toMatch(/^\d+ events? · \d+ pending approval$/);
    expect(await cards.filter({ hasText: "of them ratios" }).innerText()).toBe("3 metrics · 1 of them ratios");
    await noSeriousViolations("overview-observability");
  });
});
