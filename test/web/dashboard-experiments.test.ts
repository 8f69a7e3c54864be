import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type DashboardFixture, capture, chromiumAvailable, signIn, startDashboardFixture, valueBecomes, cellTexts, isFocusedSoon } from "./dashboard-support";

setDefaultTimeout(90_000);

let f: DashboardFixture;
let page: Page;

const ok = (res: { status: number; body: unknown }, status = 201) => expect(res.status, JSON.stringify(res.body)).toBe(status);

beforeAll(async () => {
  if (!chromiumAvailable) return;
  f = await startDashboardFixture();
  const scoped = { "x-project-id": f.ts.projectId };
  // Read the fixed-horizon test at once (no minimum days), and let the guardrail check roll back.
  ok(await f.ts.api("/api/admin/projects/current", { method: "PATCH", body: { analysis: { minSampleDays: 0, autoRollback: true } } }), 200);
  ok(await f.ts.api("/api/admin/universes", { body: { name: "web", holdout_range: [9000, 10_000] }, headers: scoped }));
  ok(await f.ts.api("/api/admin/events", { body: { name: "purchase" } }));
  ok(await f.ts.api("/api/admin/events", { body: { name: "checkout.error" } }));
  ok(await f.ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "unique", event: "purchase" } }));
  ok(await f.ts.api("/api/admin/metrics", { body: { name: "checkout-errors", kind: "count", event: "checkout.error" } }));
  ok(await f.ts.api("/api/admin/gates", { body: { name: "beta" } }));
  page = await f.context.newPage();
  await signIn(f, page, "owner@example.com", "/experiments");
});
afterAll(async () => {
  await f?.close();
});

async function noSeriousViolations(name: string): Promise<void> {
  const { light, dark } = await capture(page, name);
  expect({ page: name, light, dark }).toEqual({ page: name, light: [], dark: [] });
}

const experiment = async (ref: string) => await f.ts.api(`/api/admin/experiments/${encodeURIComponent(ref)}`);
const results = async (ref: string) => (await f.ts.api(`/api/admin/experiments/${encodeURIComponent(ref)}/results`)).body;
const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });
/** A list row: its name is a link to the experiment (a description may follow it). */
const listRow = (name: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
const open = async (path: string) => {
  await page.goto(f.ts.url + path);
};

/** The page's formatting, restated: "+66.7 %", "−2.0 %", "0.0 %". */
function percent(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined) return "n/a";
  const text = (Math.abs(x) * 100).toFixed(digits);
  if (Number(text) === 0) return `0.${"0".repeat(digits)} %`;
  return `${x < 0 ? "−" : "+"}${text} %`;
}
function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined) return "n/a";
  if (p < 0.0001) return "< 0.0001";
  return p < 0.001 ? p.toPrecision(2) : p.toFixed(p < 0.01 ? 4 : 3);
}
const share = (x: number) => `${Number((x * 100).toFixed(1))} %`;

type Ev = { name: string; unitId: string; ts: number; properties?: Record<string, string> };

/** Exposures and outcome events through the SDK ingest, 1,000 a call. */
async function ingest(events: Ev[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await f.ts.api("/api/sdk/v1/events", { body: { events: events.slice(i, i + 1000) }, key: f.ts.serverKey });
    expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
  }
}

/**
 * `n` units per variant exposed just after the start; `purchases[v]` of them
 * buy once, and `errors[v]` checkout errors spread over the first units.
 */
function traffic(e: { id: string; startedAt: string }, plan: Record<string, { n: number; buyers: number; errors: number }>): Ev[] {
  const t0 = Date.parse(e.startedAt);
  const out: Ev[] = [];
  for (const [variant, p] of Object.entries(plan)) {
    for (let i = 0; i < p.n; i++) {
      const unitId = `${e.id}-${variant}-${i}`;
      out.push({ name: `$exposure:${e.id}`, unitId, ts: t0 + 1, properties: { variant } });
      if (i < p.buyers) out.push({ name: "purchase", unitId, ts: t0 + 2 });
    }
    for (let k = 0; k < p.errors; k++) out.push({ name: "checkout.error", unitId: `${e.id}-${variant}-${k % p.n}`, ts: t0 + 2 });
  }
  return out;
}

describe.skipIf(!chromiumAvailable)("experiments in the dashboard", () => {
  test("create: variants, JSON values, the allocation drawn live over the holdout; refusals land on their field", async () => {
    await page.getByRole("heading", { level: 1, name: "Experiments" }).waitFor();
    await page.getByText("No experiments yet.").waitFor();
    await page.getByRole("button", { name: "New experiment" }).click();
    const dialog = page.getByRole("dialog", { name: "New experiment" });
    await dialog.getByLabel("Name", { exact: true }).fill("checkout-button");
    await dialog.getByLabel("Description").fill("Does a green button sell more?");
    // The first universe is chosen (once the list has loaded: under load it may not have); its holdout is drawn with this draft's default allocation.
    await dialog.getByLabel("Universe").locator("option:checked", { hasText: "web (user_id)" }).waitFor({ state: "attached" });
    expect(await dialog.getByLabel("Universe").locator("option:checked").innerText()).toBe("web (user_id)");
    await dialog.getByRole("img", { name: /^Allocation preview: 10,000 segments, holdout segments 9,000–9,999 \(10 % of units\); checkout-button segments 0–999 \(10 % of units\)$/ }).waitFor();

    const control = dialog.getByRole("group", { name: "Variant 1 (control)" });
    const green = dialog.getByRole("group", { name: "Variant 2" });
    await control.getByLabel("Value (JSON)").fill('"blue"');
    await green.getByLabel("Key", { exact: true }).fill("green");
    await green.getByLabel("Display name").fill("Green button");
    await green.getByLabel("Value (JSON)").fill("green");
    await green.getByLabel("Override").selectOption("gate");
    await green.getByLabel("Gate it overrides").selectOption("beta");
    await green.getByLabel("Gate answers").selectOption("true");
    // A third variant, then removed again.
    await dialog.getByRole("button", { name: "Add variant" }).click();
    await dialog.getByRole("group", { name: "Variant 3" }).waitFor();
    expect(await green.getByText("33.3 % of the allocation").count()).toBe(1);
    await dialog.getByRole("button", { name: "Remove variant 3 (treatment-2)" }).click();
    await dialog.getByRole("group", { name: "Variant 3" }).waitFor({ state: "detached" });

    // Into the holdout: the drawing says so as it is typed, and the server refuses it on the field.
    await dialog.getByLabel("End segment (excluded)").fill("9500");
    await dialog.getByText("It overlaps the holdout, segments 9,000–9,999 (10 % of units): those units go to no experiment.").waitFor();
    await dialog.getByRole("img", { name: /overlap at segments 9,000–9,499/ }).waitFor();
    await dialog.getByLabel("Primary metric").selectOption({ label: "purchases (unique)" });
    await dialog.getByRole("button", { name: "Add guardrail" }).click();
    await dialog.getByLabel("Metric of guardrail 1").selectOption({ label: "checkout-errors (count)" });
    await dialog.getByLabel("Guardrail 1 is worse when the metric").selectOption("increase");

    // A value that is not JSON is said on its field before anything is sent.
    await dialog.getByRole("button", { name: "Create experiment" }).click();
    const value = green.getByLabel("Value (JSON)");
    await green.getByRole("alert").filter({ hasText: "Not JSON" }).waitFor();
    expect(await value.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(value)).toBe(true);
    await value.fill('"green"');
    // A weight of 0: the server's refusal names variants.1.weight, and it lands on that variant's Weight.
    const weight = green.getByLabel("Weight");
    await weight.fill("0");
    await dialog.getByRole("button", { name: "Create experiment" }).click();
    await green.getByRole("alert").filter({ hasText: "Request failed validation" }).waitFor();
    expect(await weight.getAttribute("aria-invalid")).toBe("true");
    expect(await isFocusedSoon(weight)).toBe(true);
    expect(await control.getByLabel("Weight").getAttribute("aria-invalid")).toBeNull();
    await weight.fill("50");
    await dialog.getByRole("button", { name: "Create experiment" }).click();
    const start = dialog.getByLabel("First segment");
    await dialog.getByRole("alert").filter({ hasText: "overlaps the holdout [9000, 10000)" }).waitFor();
    expect(await start.getAttribute("aria-invalid")).toBe("true");
    expect(await dialog.getByLabel("End segment (excluded)").getAttribute("aria-invalid")).toBe("true");
    await noSeriousViolations("experiment-create-invalid");

    await dialog.getByLabel("End segment (excluded)").fill("3000");
    await dialog.getByRole("img", { name: /checkout-button segments 0–2,999 \(30 % of units\)$/ }).waitFor();
    await dialog.getByRole("button", { name: "Create experiment" }).click();
    await page.waitForURL((url) => url.pathname === "/experiments/checkout-button");
    await page.getByRole("heading", { level: 1, name: /checkout-button/ }).waitFor();
    const stored = (await experiment("checkout-button")).body;
    const metrics = (await f.ts.api("/api/admin/metrics")).body as { id: string; name: string }[];
    const metricId = (name: string) => metrics.find((m) => m.name === name)!.id;
    expect(stored).toMatchObject({
      name: "checkout-button",
      description: "Does a green button sell more?",
      universe: "web",
      env: "prod",
      status: "draft",
      allocation: [0, 3000],
      gate: null,
      primaryMetric: metricId("purchases"),
      guardrailMetrics: [{ metric: metricId("checkout-errors"), worseWhen: "increase" }],
      variants: [
        { key: "control", name: "control", weight: 50, value: "blue" },
        { key: "green", name: "Green button", weight: 50, value: "green", override: { kind: "gate", name: "beta", value: true } },
      ],
    });
  });

  test("detail of a draft: the design, the allocation drawn; start asks first; another experiment's allocation shows beside it", async () => {
    // A second experiment in the same universe, through the API.
    ok(
      await f.ts.api("/api/admin/experiments", {
        body: { name: "skewed", universe: "web", variants: [{ key: "control", weight: 1 }, { key: "green", weight: 1 }], allocation: [3000, 6000], primaryMetric: "purchases", guardrailMetrics: [{ metric: "checkout-errors", worseWhen: "increase" }] },
      }),
    );
    ok(await f.ts.api("/api/admin/experiments/skewed/start", { method: "POST" }), 200);

    await page.reload();
    await page.getByText("Results appear once the experiment starts").waitFor();
    const design = page.getByRole("table", { name: /Variants with their weights/ });
    expect(await design.getByRole("row").nth(2).innerText()).toMatch(/green\s+Green button\s+50 \(50 %\)\s+"green"\s+gate beta → true/);
    await page.getByRole("img", {
      name: "Allocation in universe web: 10,000 segments, holdout segments 9,000–9,999 (10 % of units); running experiment skewed segments 3,000–5,999 (30 % of units); checkout-button segments 0–2,999 (30 % of units)",
    }).waitFor();
    await page.getByText("Running experiment skewed: segments 3,000–5,999 (30 % of units)").waitFor();
    await noSeriousViolations("experiment-draft");

    await page.getByRole("button", { name: "Start experiment" }).click();
    const confirm = page.getByRole("dialog", { name: "Start checkout-button?" });
    await confirm.getByText("published in the prod snapshot").waitFor();
    await confirm.getByRole("button", { name: "Start experiment" }).click();
    await page.getByRole("status").filter({ hasText: "Started checkout-button" }).waitFor();
    expect((await experiment("checkout-button")).body.status).toBe("running");
    await page.getByRole("heading", { level: 1, name: /checkout-button\s+running/ }).waitFor();
    await page.getByRole("button", { name: "Stop experiment" }).waitFor();
    expect(await page.getByRole("button", { name: "Start experiment" }).count()).toBe(0);
    // Running: no delete.
    expect(await page.getByRole("button", { name: "Delete experiment" }).count()).toBe(0);
  });

  test("results: exposures, the forest plot and its table from GET …/results; a skewed split raises the sample-ratio alarm", async () => {
    const a = (await experiment("checkout-button")).body;
    const b = (await experiment("skewed")).body;
    await ingest([
      ...traffic(a, { control: { n: 200, buyers: 60, errors: 10 }, green: { n: 200, buyers: 100, errors: 12 } }),
      ...traffic(b, { control: { n: 300, buyers: 90, errors: 5 }, green: { n: 200, buyers: 60, errors: 80 } }),
    ]);
    const r = await results("checkout-button");
    expect(r.exposures.variants).toEqual([
      { variant: "control", n: 200, expectedShare: 0.5 },
      { variant: "green", n: 200, expectedShare: 0.5 },
    ]);
    expect(r.srm.flagged).toBe(false);
    expect(r.minimumReached).toBe(true);

    await page.reload();
    const exposures = page.getByRole("table", { name: "Units exposed per variant against the share the weights expect" });
    await exposures.waitFor();
    expect(await row("control").first().innerText()).toMatch(/control\s+200\s+50 %\s+50 %/);
    expect(await page.getByRole("alert").filter({ hasText: "Sample ratio mismatch" }).count()).toBe(0);
    await page.getByText("Verdicts are read from the fixed-horizon test (p-value)").waitFor();

    for (const m of r.metrics as { metric: { name: string }; role: string; treatments: any[] }[]) {
      const table = page.getByRole("table", { name: new RegExp(`^${m.metric.name}: each treatment against the control`) });
      await table.waitFor();
      expect(await table.getByRole("columnheader", { name: /p-value/ }).innerText()).toMatch(/p-value\s*decides/);
      for (const t of m.treatments) {
        const cells = await cellTexts(table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: t.variant, exact: true }) }));
        const rel = t.frequentist.relative;
        expect(cells.slice(2, 7)).toEqual([
          percent(rel?.estimate),
          rel ? `[${percent(rel.ci[0])}, ${percent(rel.ci[1])}]` : "n/a",
          pValue(t.frequentist.absolute?.pValue),
          t.bayesian ? share(t.bayesian.chanceToBeatControl) : "n/a",
          pValue(t.sequential?.pValue),
        ]);
        expect(cells[7]).toContain(t.verdict);
        // The plot says the same interval in words.
        const plot = page.getByRole("img", { name: new RegExp(`^Relative lift of ${m.metric.name} against the control`) });
        expect(await plot.getAttribute("aria-labelledby")).toBeTruthy();
        const words = await plot.evaluate((svg) => svg.querySelector("title")?.textContent ?? "");
        expect(words).toContain(`${t.variant}: ${percent(rel.estimate)}, 95 % confidence interval ${percent(rel.ci[0])} to ${percent(rel.ci[1])}`);
      }
    }
    // Purchases rose 30 % → 50 %: a significant increase, drawn in the "better" colour.
    const purchases = r.metrics.find((m: { role: string }) => m.role === "primary");
    expect(purchases.treatments[0].verdict).toBe("increase");
    expect(purchases.treatments[0].frequentist.relative.estimate).toBeCloseTo(2 / 3, 6);
    const plot = page.getByRole("img", { name: /^Relative lift of purchases/ });
    expect(await plot.locator(".forest-row").first().getAttribute("class")).toContain("forest-good");
    expect(await plot.locator(".forest-zero").count()).toBe(1);
    await noSeriousViolations("experiment-results");

    // 300 / 200 under 1 : 1 weights: the loud warning, and the reply's warning listed.
    const skewed = await results("skewed");
    expect(skewed.srm.flagged).toBe(true);
    await open("/experiments/skewed");
    const alarm = page.getByRole("alert").filter({ hasText: "Sample ratio mismatch: do not trust these results" });
    await alarm.waitFor();
    expect(await alarm.innerText()).toContain(`control 300 / green 200 are unlikely under the weights (expected 250 / 250; χ² = ${skewed.srm.chiSquare.toFixed(2)}, p < 0.0001, below 0.001)`);
    const warnings = page.locator("ul.warnings li");
    expect(await warnings.allInnerTexts()).toEqual(skewed.warnings);
    await noSeriousViolations("experiment-srm");
  });

  test("stop: ship a variant with a reason; an automatic rollback shows loudly with its reason", async () => {
    await open("/experiments/checkout-button");
    await page.getByRole("button", { name: "Stop experiment" }).click();
    const dialog = page.getByRole("dialog", { name: "Stop checkout-button?" });
    await valueBecomes(dialog.getByLabel("Variant to ship"), "green");
    await dialog.getByLabel("Reason").fill("+66.7 % purchases");
    await noSeriousViolations("experiment-stop");
    await dialog.getByRole("button", { name: "Stop and ship green" }).click();
    await page.getByRole("status").filter({ hasText: "Stopped checkout-button: shipped green" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "Shipped variant green" }).waitFor();
    await page.getByText("Reason: +66.7 % purchases").waitFor();
    const stopped = (await experiment("checkout-button")).body;
    expect(stopped).toMatchObject({ status: "stopped", outcome: { decision: "ship", variant: "green", reason: "+66.7 % purchases", by: "owner@example.com", auto: false } });
    expect(await page.getByRole("button", { name: "Stop experiment" }).count()).toBe(0);
    // Its results stay readable, as of the stop.
    await page.getByRole("table", { name: /^purchases: each treatment against the control/ }).waitFor();

    // The guardrail check: checkout errors rose sharply in skewed's green, so it is rolled back by `system`.
    const rolled = await f.ts.server.ctx.services.experiments.checkGuardrails();
    expect(rolled.map((x) => x.experiment.name)).toEqual(["skewed"]);
    const reason = rolled[0]!.reason;
    expect(reason).toContain("Guardrail checkout-errors rose in variant green");
    await open("/experiments/skewed");
    await page.getByRole("heading", { level: 2, name: "Rolled back automatically by a guardrail" }).waitFor();
    await page.getByText(`Why: ${reason}`).waitFor();
    await page.getByRole("heading", { level: 1, name: /skewed\s+stopped: rolled back automatically/ }).waitFor();
    await noSeriousViolations("experiment-auto-rollback");
  });

  test("the method decides: Bayesian plots credible intervals; before the minimum days the sequential test decides", async () => {
    const analysis = (body: Record<string, unknown>) => f.ts.api("/api/admin/projects/current", { method: "PATCH", body: { analysis: body } });
    try {
      ok(await analysis({ method: "bayesian" }), 200);
      const r = await results("checkout-button");
      expect(r.method).toBe("bayesian");
      await open("/experiments/checkout-button");
      await page.getByText("Verdicts are read from the chance to beat control (Bayesian)").waitFor();
      const table = page.getByRole("table", { name: /^purchases: each treatment against the control/ });
      expect(await table.getByRole("columnheader", { name: /Chance to beat control/ }).innerText()).toMatch(/Chance to beat control\s*decides/);
      const t = r.metrics[0].treatments[0];
      const ci = t.bayesian.relative.credibleInterval;
      const cells = await cellTexts(table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "green", exact: true }) }));
      expect(cells.slice(2, 4)).toEqual([percent(t.bayesian.relative.estimate), `[${percent(ci[0])}, ${percent(ci[1])}]`]);
      const words = await page.getByRole("img", { name: /^Relative lift of purchases/ }).evaluate((svg) => svg.querySelector("title")?.textContent ?? "");
      expect(words).toContain(`green: ${percent(t.bayesian.relative.estimate)}, 95 % credible interval ${percent(ci[0])} to ${percent(ci[1])}`);
      await noSeriousViolations("experiment-bayesian");

      ok(await analysis({ method: "frequentist", minSampleDays: 30 }), 200);
      await page.reload();
      await page.getByText("Verdicts are read from the always-valid sequential test (sequential p)").waitFor();
      await page.getByText("minimum not reached").waitFor();
      expect(await table.getByRole("columnheader", { name: /Sequential p/ }).innerText()).toMatch(/Sequential p\s*decides/);
      expect(await table.getByRole("columnheader", { name: /^p-value/ }).innerText()).not.toContain("decides");
    } finally {
      ok(await analysis({ method: "frequentist", minSampleDays: 0 }), 200);
    }
  });

  test("the list: universe, status, allocation, primary metric, start; filters; edit and delete per row", async () => {
    ok(await f.ts.api("/api/admin/experiments", { body: { name: "pricing-page", description: "Annual plan first", universe: "web", variants: [{ key: "control", weight: 1 }, { key: "annual", weight: 1 }], allocation: [0, 500] } }));
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Experiments" }).click();
    await page.waitForURL((url) => url.pathname === "/experiments");
    await listRow("checkout-button").waitFor();
    const cells = await cellTexts(listRow("checkout-button"));
    expect(cells.slice(0, 4)).toEqual(["web", "stopped: shipped green", "30 % of units\nsegments 0–2,999", "purchases"]);
    expect(cells[4]).toMatch(/ago|now/);
    expect((await cellTexts(listRow("pricing-page"))).slice(0, 5)).toEqual(["web", "draft", "5 % of units\nsegments 0–499", "none", "never"]);
    expect(await listRow("skewed").getByRole("cell").nth(1).innerText()).toBe("stopped: rolled back automatically");
    await noSeriousViolations("experiments");

    await page.getByLabel("Status").selectOption("draft");
    await listRow("pricing-page").waitFor();
    await listRow("checkout-button").waitFor({ state: "detached" });
    await page.getByLabel("Status").selectOption("");
    // The whole list back first: otherwise the draft filter's one row could pass for the search's answer below,
    // and the unfiltered answer land after it (seen once in a full run: three rows, 0.6 s into the test).
    await listRow("checkout-button").waitFor();
    await page.getByRole("searchbox", { name: "Search experiments" }).fill("ANNUAL");
    await listRow("checkout-button").waitFor({ state: "detached" });
    // The filtered answer may land a moment after an earlier one: wait for the list to settle on one row, up to 10 s.
    // It once showed all three rows after 5 s in a loaded full run: the live reload threw away the search's slow
    // answer (useLoad, now fixed; dashboard-live-list.test.ts). What the page holds is checked whole, so a failure
    // says which part was off.
    for (let i = 0; i < 200 && (await page.getByRole("rowheader").count()) !== 1; i++) await Bun.sleep(50);
    expect({
      rows: await page.getByRole("rowheader").allInnerTexts(),
      search: await page.getByRole("searchbox", { name: "Search experiments" }).inputValue(),
      status: await page.getByLabel("Status").inputValue(),
      alerts: await page.getByRole("alert").allInnerTexts(),
    }).toEqual({ rows: ["pricing-page\nAnnual plan first"], search: "ANNUAL", status: "", alerts: [] });
    await page.getByRole("searchbox", { name: "Search experiments" }).fill("nothing");
    await page.getByText("No experiment matches these filters.").waitFor();
    await page.getByRole("searchbox", { name: "Search experiments" }).fill("");
    await listRow("checkout-button").waitFor();

    // A stopped experiment: its design is shown but fixed; only name and description change.
    await page.getByRole("button", { name: "Edit experiment checkout-button" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit experiment checkout-button" });
    await dialog.getByText("This experiment is stopped: only name and description can change").waitFor();
    expect(await dialog.getByLabel("Universe").isDisabled()).toBe(true);
    expect(await dialog.getByRole("group", { name: "Variant 2" }).getByLabel("Key", { exact: true }).isDisabled()).toBe(true);
    await dialog.getByLabel("Description").fill("Green won");
    await noSeriousViolations("experiment-edit-stopped");
    await dialog.getByRole("button", { name: "Save experiment" }).click();
    await page.getByRole("status").filter({ hasText: "Saved experiment checkout-button" }).waitFor();
    expect((await experiment("checkout-button")).body.description).toBe("Green won");

    // A draft: the allocation moves.
    await page.getByRole("button", { name: "Edit experiment pricing-page" }).click();
    const draft = page.getByRole("dialog", { name: "Edit experiment pricing-page" });
    await draft.getByLabel("First segment").fill("6000");
    await draft.getByLabel("End segment (excluded)").fill("7000");
    await draft.getByRole("img", { name: /pricing-page segments 6,000–6,999 \(10 % of units\)$/ }).waitFor();
    await draft.getByRole("button", { name: "Save experiment" }).click();
    await page.getByRole("status").filter({ hasText: "Saved experiment pricing-page" }).waitFor();
    expect((await experiment("pricing-page")).body.allocation).toEqual([6000, 7000]);

    await page.getByRole("button", { name: "Delete experiment pricing-page" }).click();
    await page.getByRole("dialog", { name: "Delete pricing-page?" }).getByRole("button", { name: "Delete experiment" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted experiment pricing-page" }).waitFor();
    expect((await experiment("pricing-page")).status).toBe(404);
    await listRow("pricing-page").waitFor({ state: "detached" });
  });

  test("the overview card and the command palette lead here", async () => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("link", { name: /0 experiments running$/ }).click();
    await page.waitForURL((url) => url.pathname === "/experiments");
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Experiments" }).getAttribute("aria-current")).toBe("page");

    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "Go to" });
    await palette.getByRole("combobox").fill("checkout-b");
    await palette.getByRole("option", { name: /checkout-button\s+experiment/, selected: true }).waitFor();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/experiments/checkout-button");
    await page.getByRole("heading", { level: 2, name: "Shipped variant green" }).waitFor();
  });

  // Issue 27, item 15: a new experiment's default allocation is a free range, not one that opens with a warning.
  test("a new experiment's default allocation keeps clear of the universe's holdout", async () => {
    ok(await f.ts.api("/api/admin/universes", { body: { name: "app", holdout_range: [0, 1000] }, headers: { "x-project-id": f.ts.projectId } }));
    await page.goto(`${f.ts.url}/experiments`);
    await page.getByRole("button", { name: "New experiment" }).click();
    const dialog = page.getByRole("dialog", { name: "New experiment" });
    await dialog.getByLabel("Universe").locator("option", { hasText: "app (user_id)" }).waitFor({ state: "attached" });
    await dialog.getByLabel("Universe").selectOption({ label: "app (user_id)" });
    await dialog.getByRole("img", { name: /^Allocation preview: 10,000 segments, holdout segments 0–999 \(10 % of units\); this experiment segments 1,000–1,999 \(10 % of units\)$/ }).waitFor();
    expect([await dialog.getByLabel("First segment").inputValue(), await dialog.getByLabel("End segment (excluded)").inputValue()]).toEqual(["1000", "2000"]);
    expect(await dialog.getByText(/It overlaps/).count()).toBe(0);
    // A range typed by hand stays as typed when the universe changes.
    await dialog.getByLabel("First segment").fill("500");
    await dialog.getByLabel("Universe").selectOption({ label: "web (user_id)" });
    await dialog.getByLabel("Universe").selectOption({ label: "app (user_id)" });
    await valueBecomes(dialog.getByLabel("First segment"), "500");
    await dialog.getByText("It overlaps the holdout, segments 0–999 (10 % of units): those units go to no experiment.").waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });
});
