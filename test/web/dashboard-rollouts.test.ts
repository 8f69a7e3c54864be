import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;
let rolloutId = "";

const ok = (res: { status: number; body: unknown }, status = 201) => expect(res.status, JSON.stringify(res.body)).toBe(status);
const everyone = [{ name: "everyone", conditions: [], passPercentage: 100 }];

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  ok(await f.ts.api("/api/admin/events", { body: { name: "purchase" } }));
  ok(await f.ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } }));
  ok(await f.ts.api("/api/admin/gates", { body: { name: "new-checkout" } }));
  const schema = { type: "object", properties: { perMinute: { type: "integer" } }, required: ["perMinute"] };
  ok(await f.ts.api("/api/admin/configs", { body: { name: "limits", schema, value: { perMinute: 60 } } }));
  ok(await f.ts.api("/api/admin/configs/limits/drafts", { method: "PUT", body: { env: "prod", value: { perMinute: 120 } }, headers: { "x-project-id": f.ts.projectId } }), 200);
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/rollouts");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const rollout = async (ref: string) => (await f.ts.api(`/api/admin/rollouts/${encodeURIComponent(ref)}`)).body;

/** The page's formatting, restated: 3 significant digits, a real minus sign, "+" on positive differences. */
const num = (v: number | null) => (v === null ? "n/a" : Number(v.toPrecision(3)).toLocaleString("en", { maximumFractionDigits: 6 }).replace(/^-/, "−"));
const signed = (v: number | null) => (v === null ? "n/a" : v === 0 ? "0" : `${v > 0 ? "+" : ""}${num(v)}`);
const interval = (ci: number[] | null) => (ci ? `[${signed(ci[0]!)}, ${signed(ci[1]!)}]` : "n/a");

/** Stage 0's two groups through the ingest (`from`..`to` units per group): the new group buys more; errors alike in both. */
async function traffic(id: string, from: number, to: number, options: { stage?: number; broken?: boolean } = {}): Promise<void> {
  const exposures: unknown[] = [];
  const purchases: unknown[] = [];
  const errors: unknown[] = [];
  for (let i = from; i < to; i++) {
    for (const arm of ["old", "new"] as const) {
      const unitId = `${id}-${arm}-${i}`;
      exposures.push({ name: `$exposure:${id}_${options.stage ?? 0}`, unitId, properties: { variant: arm } });
      const bought = (i % 3) + (arm === "new" && i % 2 === 0 ? 1 : 0);
      for (let k = 0; k < bought; k++) purchases.push({ name: "purchase", unitId });
      // A broken change: half of the units with it hit an error, one in twenty without.
      const failed = options.broken ? (arm === "new" ? i % 2 === 0 : i % 20 === 0) : i % 9 === (arm === "new" ? 1 : 0);
      if (failed) errors.push({ message: "checkout failed", fingerprint: "checkout-failed", unitId });
    }
  }
  for (let i = 0; i < exposures.length; i += 1000) ok(await f.ts.api("/api/sdk/v1/events", { body: { events: exposures.slice(i, i + 1000) }, key: f.ts.serverKey }), 202);
  await Bun.sleep(5);
  for (let i = 0; i < purchases.length; i += 1000) ok(await f.ts.api("/api/sdk/v1/events", { body: { events: purchases.slice(i, i + 1000) }, key: f.ts.serverKey }), 202);
  ok(await f.ts.api("/api/sdk/v1/errors", { body: { errors }, key: f.ts.serverKey }), 202);
}

describe.skipIf(!chromiumAvailable)("rollouts in the dashboard", () => {
  test("create: a gate's rules as JSON, the default plan prefilled, a watched metric; refusals land on their field", async () => {
    await page.getByRole("heading", { level: 1, name: "Rollouts" }).waitFor();
    await page.getByText("No rollouts yet.").waitFor();
    // Linked from the navigation like the other pages.
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Rollouts" }).getAttribute("aria-current")).toBe("page");
    await page.getByRole("button", { name: "New rollout" }).click();
    const dialog = page.getByRole("dialog", { name: "New rollout" });
    expect(await dialog.getByLabel("A gate's new rules").isChecked()).toBe(true);
    // The gates and configs load once the dialog opens; the first gate is then chosen and its rules prefilled.
    await valueBecomes(dialog.getByLabel("Gate", { exact: true }), "new-checkout");
    await valueBecomes(dialog.getByLabel("Env", { exact: true }), "prod");
    // The rules start as what prod publishes (none); the default plan is there.
    const rules = dialog.getByLabel("New rules (JSON)");
    await valueBecomes(rules, "[]");
    const stage = (n: number) => dialog.getByRole("group", { name: `Stage ${n}`, exact: true });
    const plan = [];
    for (let n = 1; n <= 5; n++) plan.push([await stage(n).getByLabel("Percent of units").inputValue(), await stage(n).getByLabel("Minimum minutes").inputValue()]);
    expect(plan).toEqual([["1", "60"], ["5", "120"], ["25", "240"], ["50", "480"], ["100", "0"]]);
    await stage(3).getByText("4 h").waitFor();

    // Three stages: 10 % for an hour, 50 % for two, then everyone.
    await dialog.getByRole("button", { name: "Remove stage 4" }).click();
    await dialog.getByRole("button", { name: "Remove stage 3" }).click();
    await stage(4).waitFor({ state: "detached" });
    await stage(1).getByLabel("Percent of units").fill("10");
    await stage(2).getByLabel("Percent of units").fill("5");
    await dialog.getByRole("button", { name: "Add metric" }).click();
    const metric = dialog.getByRole("group", { name: "Metric 1", exact: true });
    await metric.getByLabel("Metric", { exact: true }).selectOption({ label: "purchases (count)" });
    await metric.getByLabel("Better when it is").selectOption("higher");
    await metric.getByLabel("Tolerated regression (%)").fill("5");
    await dialog.getByLabel("Error rate: tolerated rise (%)").fill("10");
    await dialog.getByLabel("On regression").selectOption("pause");
    await dialog.getByLabel("Description").fill("New checkout for everyone");

    // Rules that are not JSON are said on their field before anything is sent.
    await rules.fill("[{");
    await dialog.getByRole("button", { name: "Create rollout" }).click();
    await dialog.getByRole("alert").filter({ hasText: "Not JSON" }).waitFor();
    expect(await rules.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(rules)).toBe(true);
    await rules.fill(JSON.stringify(everyone, null, 2));
    // A plan that shrinks (10 % then 5 %): the server names stages[1].percent, and it lands on stage 2's Percent.
    await dialog.getByRole("button", { name: "Create rollout" }).click();
    const percent2 = stage(2).getByLabel("Percent of units");
    await stage(2).getByRole("alert").filter({ hasText: "above 10" }).waitFor();
    expect(await percent2.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(percent2)).toBe(true);
    expect(await stage(1).getByLabel("Percent of units").getAttribute("aria-invalid")).toBeNull();
    await noSeriousViolations("rollout-create-invalid");

    await percent2.fill("50");
    await dialog.getByRole("button", { name: "Create rollout" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/rollouts/rol_"));
    rolloutId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    const metrics = (await f.ts.api("/api/admin/metrics")).body as { id: string; name: string }[];
    expect(await rollout(rolloutId)).toMatchObject({
      kind: "gate",
      subject: "new-checkout",
      env: "prod",
      status: "running",
      stage: 0,
      percent: 10,
      description: "New checkout for everyone",
      change: { rules: everyone },
      previous: { rules: [], version: 1 },
      stages: [
        { percent: 10, minutes: 60 },
        { percent: 50, minutes: 120 },
        { percent: 100, minutes: 0 },
      ],
      watch: [
        { metric: "errors", metricId: null, direction: "lower", tolerance: 0.1 },
        { metric: "purchases", metricId: metrics.find((m) => m.name === "purchases")!.id, direction: "higher", tolerance: 0.05 },
      ],
      onRegression: "pause",
      notify: true,
    });
  });

  test("detail: the stage bar, the change, then each watched metric's difference and interval from the checks, and the ingest lag", async () => {
    await page.getByRole("heading", { level: 1, name: /new-checkout\s+\(gate, prod\)\s+running/ }).waitFor();
    const bar = page.getByRole("list", { name: "Stages of new-checkout: stage 1 of 3 (10 %)" });
    await bar.waitFor();
    const items = bar.getByRole("listitem");
    expect(await items.count()).toBe(3);
    expect(await items.nth(0).getAttribute("aria-current")).toBe("step");
    expect(await items.nth(0).innerText()).toMatch(/10 %\s+1 h/);
    expect(await items.nth(0).textContent()).toContain("stage 1: current");
    expect(await items.nth(1).textContent()).toContain("stage 2: to come");
    expect(await items.nth(2).innerText()).toMatch(/100 %\s+no minimum/);
    await page.getByText("Not checked yet").waitFor();
    await page.getByRole("figure").filter({ hasText: "Rules on prod: published (version 1) against the rollout's" }).getByText("added:").first().waitFor({ state: "attached" });

    // Traffic in three rounds, a check of the monitor after each.
    const { monitor } = f.ts.server.ctx.services.rollouts;
    for (const [from, to] of [[0, 150], [150, 250], [250, 400]] as const) {
      await traffic(rolloutId, from, to);
      const [round] = (await monitor.checkAll(Date.now())).filter((o) => o.rolloutId === rolloutId);
      expect(round!.error).toBeUndefined();
    }
    const r = await rollout(rolloutId);
    const check = r.lastCheck;
    expect(check).toMatchObject({ stage: 0, percent: 10, decision: "none", stale: false });
    const checks = (await f.ts.api(`/api/admin/rollouts/${rolloutId}/checks`)).body as any[];
    expect(checks.length).toBeGreaterThanOrEqual(3);

    await page.reload();
    await page.getByRole("heading", { level: 2, name: "Last check" }).waitFor();
    await page.getByText(`Ingest lag of the last check: ${Math.round(check.ingestLagMs / 1000)} s`).waitFor();
    await page.getByText("stage 1 (10 %): nothing to do: the stage's time is not up.").waitFor();
    const table = page.getByRole("table", { name: /^Each watched metric at the last check/ });
    for (const m of check.metrics) {
      const name = m.metric === "errors" ? "error rate (tracked errors per unit)" : m.metric;
      const cells = await cellTexts(table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name.replace(/[()]/g, "\\$&")}`) }) }));
      expect(cells[0]).toBe("400 / 400");
      expect(cells[1]).toBe(`${num(m.old.mean)} / ${num(m.new.mean)}`);
      expect(cells[2]).toStartWith(signed(m.estimate));
      expect(cells[3]).toBe(interval(m.interval));
      expect(cells[4]).toBe("no regression");
    }
    // The chart of each watched metric names its latest difference and interval.
    const purchases = check.metrics.find((m: any) => m.metric === "purchases");
    const chart = page.getByRole("img", { name: /^Difference of purchases \(with the change minus without\), higher is better, 5 % worse tolerated/ });
    const words = await chart.evaluate((svg) => svg.querySelector("title")?.textContent ?? "");
    expect(words).toContain(`Latest ${signed(purchases.estimate)}, interval ${interval(purchases.interval)} at stage 1 (10 %)`);
    expect(words).toContain("No regression seen.");
    // One point per check with a difference, left to right in time (the checks' times keep their milliseconds).
    const xs = await chart.locator("circle").evaluateAll((circles) => circles.map((c) => Number(c.getAttribute("cx"))));
    expect(xs.length).toBeGreaterThanOrEqual(2);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(xs.length);
    await page.getByRole("img", { name: /^Difference of error rate \(tracked errors per unit\)/ }).waitFor();
    await noSeriousViolations("rollout-detail");
  });

  test("pause with a reason, resume, roll back through the buttons: the stored state follows", async () => {
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    const pause = page.getByRole("dialog", { name: "Pause new-checkout?" });
    await pause.getByLabel("Reason (optional)").fill("checking the logs");
    await noSeriousViolations("rollout-pause");
    await pause.getByRole("button", { name: "Pause rollout" }).click();
    await page.getByRole("status").filter({ hasText: "Paused new-checkout at stage 1 (10 %)" }).waitFor();
    expect(await rollout(rolloutId)).toMatchObject({ status: "paused", outcome: { kind: "paused", reason: "checking the logs", by: "owner@example.com", auto: false } });
    await page.getByRole("list", { name: "Stages of new-checkout: stage 1 of 3 (10 %), paused" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "Paused" }).waitFor();
    expect(await page.getByRole("button", { name: "Pause", exact: true }).count()).toBe(0);

    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("status").filter({ hasText: "Resumed new-checkout" }).waitFor();
    expect(await rollout(rolloutId)).toMatchObject({ status: "running", outcome: null });
    await page.getByRole("button", { name: "Pause", exact: true }).waitFor();

    await page.getByRole("button", { name: "Roll back" }).click();
    const confirm = page.getByRole("dialog", { name: "Roll back new-checkout?" });
    await confirm.getByText("gets the old rules again at once").waitFor();
    // Cancel changes nothing.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await rollout(rolloutId)).status).toBe("running");
    await page.getByRole("button", { name: "Roll back" }).click();
    await confirm.getByLabel("Reason (optional)").fill("support tickets");
    await confirm.getByRole("button", { name: "Roll back" }).click();
    await page.getByRole("status").filter({ hasText: "Rolled back new-checkout" }).waitFor();
    expect(await rollout(rolloutId)).toMatchObject({ status: "rolled_back", percent: 0, outcome: { kind: "rolled_back", reason: "support tickets", by: "owner@example.com", auto: false } });
    const snapshot = (await f.ts.api("/api/sdk/v1/snapshot?env=prod", { key: f.ts.serverKey })).body;
    expect(snapshot.rollouts?.[rolloutId]).toBeUndefined();
    await page.getByRole("heading", { level: 2, name: "Rolled back" }).waitFor();
    await page.getByText("Reason: support tickets").waitFor();
    await page.getByRole("heading", { level: 1, name: /new-checkout.*rolled back/ }).waitFor();
    for (const name of ["Pause", "Resume", "Advance now", "Roll back"]) expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);
    await page.getByRole("button", { name: "Delete rollout" }).waitFor();
    await noSeriousViolations("rollout-rolled-back");
  });

  test("a config's rollout from the env's draft; advance now; the list filters by status and text", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Rollouts" }).click();
    await page.waitForURL((url) => url.pathname === "/rollouts");
    await page.getByRole("button", { name: "New rollout" }).click();
    const dialog = page.getByRole("dialog", { name: "New rollout" });
    await dialog.getByLabel("A config's new value").check();
    await valueBecomes(dialog.getByLabel("Config", { exact: true }), "limits");
    // prod has a draft: it is the default, shown as it will be sent.
    const draft = dialog.getByRole("figure", { name: "The draft on prod" });
    await draft.waitFor();
    expect(await dialog.getByLabel("Use the env's draft").isChecked()).toBe(true);
    expect(JSON.parse(await draft.locator("pre").innerText())).toEqual({ perMinute: 120 });
    // On dev there is none: the value starts as what dev publishes.
    await dialog.getByLabel("Env", { exact: true }).selectOption("dev");
    await dialog.getByText("no draft on dev").waitFor();
    await dialog.getByLabel("Value (JSON)").waitFor();
    expect(await dialog.getByLabel("This value").isChecked()).toBe(true);
    await valueBecomes(dialog.getByLabel("Value (JSON)"), JSON.stringify({ perMinute: 60 }, null, 2));
    await dialog.getByLabel("Env", { exact: true }).selectOption("prod");
    await dialog.getByLabel("Use the env's draft").check();
    await dialog.getByRole("button", { name: "Create rollout" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/rollouts/rol_"));
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    expect(await rollout(id)).toMatchObject({ kind: "config", subject: "limits", status: "running", stage: 0, percent: 1, change: { value: { perMinute: 120 } }, previous: { value: { perMinute: 60 } } });

    await page.getByRole("button", { name: "Advance now" }).click();
    const advance = page.getByRole("dialog", { name: "Advance limits now?" });
    await advance.getByText("Stage 2: 5 % of units get the change (now 1 %)").waitFor();
    await advance.getByRole("button", { name: "Advance now" }).click();
    await page.getByRole("status").filter({ hasText: "Advanced limits to stage 2 (5 %)" }).waitFor();
    expect(await rollout(id)).toMatchObject({ stage: 1, percent: 5 });
    const bar = page.getByRole("list", { name: "Stages of limits: stage 2 of 5 (5 %)" });
    expect(await bar.getByRole("listitem").nth(0).textContent()).toContain("stage 1: done");

    await page.getByRole("link", { name: "Rollouts", exact: true }).first().click();
    await page.waitForURL((url) => url.pathname === "/rollouts");
    const rows = page.getByRole("table", { name: /^Rollouts with/ }).getByRole("row");
    const row = (name: string) => rows.filter({ has: page.getByRole("link", { name, exact: true }) });
    await row("limits").waitFor();
    expect(await row("limits").innerText()).toMatch(/limits\s+config\s+prod\s+running/);
    expect(await row("limits").getByRole("list", { name: "Stages of limits: stage 2 of 5 (5 %)" }).count()).toBe(1);
    expect(await row("new-checkout").innerText()).toMatch(/new-checkout\s+gate\s+New checkout for everyone\s+prod\s+rolled back/);
    await noSeriousViolations("rollouts-list");

    await page.getByLabel("Status").selectOption("rolled_back");
    await row("limits").waitFor({ state: "detached" });
    expect(await row("new-checkout").count()).toBe(1);
    await page.getByLabel("Status").selectOption("running");
    await row("new-checkout").waitFor({ state: "detached" });
    await page.getByLabel("Search rollouts").fill("checkout");
    await page.getByText("No rollout matches these filters.").waitFor();
    await page.getByLabel("Status").selectOption("");
    await row("new-checkout").waitFor();
    expect(await row("limits").count()).toBe(0);
  });

  test("a regression rolls the config back by itself: the outcome says so loudly, with the metric, its estimate and interval", async () => {
    const r = (await f.ts.api("/api/admin/rollouts?q=limits&status=running")).body[0];
    expect(r).toMatchObject({ stage: 1, percent: 5 });
    await traffic(r.id, 0, 250, { stage: 1, broken: true });
    await f.ts.server.ctx.services.rollouts.monitor.checkAll(Date.now());
    const after = await rollout(r.id);
    expect(after).toMatchObject({ status: "rolled_back", outcome: { kind: "rolled_back", auto: true, metric: "errors" } });
    await page.goto(`${f.ts.url}/rollouts/${r.id}`);
    await page.getByRole("heading", { level: 2, name: "Rolled back automatically on a regression" }).waitFor();
    await page.getByRole("heading", { level: 1, name: /limits.*rolled back automatically/ }).waitFor();
    const outcome = page.getByRole("region", { name: "Rolled back automatically on a regression" });
    await outcome.getByText(`Reason: ${after.outcome.reason}`).waitFor();
    const terms = await outcome.locator("dt").allInnerTexts();
    const values = await outcome.locator("dd").allInnerTexts();
    expect(Object.fromEntries(terms.map((t, i) => [t, values[i]]))).toEqual({
      "Regression metric": "error rate (tracked errors per unit)",
      "Estimate (with the change minus without, per unit)": signed(after.outcome.estimate),
      Interval: interval(after.outcome.interval),
    });
    // The last check shows the regression on its metric.
    const table = page.getByRole("table", { name: /^Each watched metric at the last check/ });
    expect(await table.getByRole("row").filter({ hasText: "error rate" }).getByRole("cell").last().innerText()).toBe("regression");
    expect((await f.ts.api("/api/admin/configs/limits")).body.envs.prod.value).toEqual({ perMinute: 60 });
    await noSeriousViolations("rollout-auto-rollback");
  });
});
