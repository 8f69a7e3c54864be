import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
/** A sandbox with a read-write API token (SERVICE_CLI_TOKEN). */
let box: Sandbox;
let env: Record<string, string>;
let purchasesId: string;
let revenueId: string;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "experiments-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  const scoped = { "x-project-id": ts.projectId };
  expect((await ts.api("/api/admin/universes", { body: { name: "web" }, headers: scoped })).status).toBe(201);
  expect((await ts.api("/api/admin/events", { body: { name: "purchase", properties: [{ name: "amount", type: "number" }] } })).status).toBe(201);
  const purchases = await ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } });
  expect(purchases.status).toBe(201);
  purchasesId = purchases.body.id;
  const revenue = await ts.api("/api/admin/metrics", { body: { name: "revenue", kind: "sum", event: "purchase", property: "amount" } });
  expect(revenue.status).toBe(201);
  revenueId = revenue.body.id;
  expect((await ts.api("/api/admin/gates", { body: { name: "signed-in" } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates", { body: { name: "new-checkout" } })).status).toBe(201);
  const schema = { type: "object", properties: { color: { type: "string" } }, required: ["color"] };
  expect((await ts.api("/api/admin/configs", { body: { name: "checkout", schema, value: { color: "blue" } } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["experiments", ...args], { env });
const json = (args: string[]) => svcJson(box, ["experiments", ...args], { env });
const stored = async (name: string) => (await ts.api(`/api/admin/experiments/${encodeURIComponent(name)}`)).body;
/** A results reply without what moves with the clock (a running experiment's window ends now). */
const steady = (r: any) => ({ ...r, sampleDays: undefined, window: { from: r.window.from } });
const ingest = (events: unknown[]) => ts.api("/api/sdk/v1/events", { body: { events }, key: ts.serverKey });

/** Runs each case with --json: exit 2, code USAGE, a message matching. */
async function usageMistakes(cases: [string[], RegExp][]): Promise<void> {
  for (const [args, message] of cases) {
    const r = await run([...args, "--json"]);
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    const body = JSON.parse(r.stderr);
    expect(body.code).toBe("USAGE");
    expect([args.join(" "), body.error]).toEqual([args.join(" "), expect.stringMatching(message)]);
  }
}

describe("svc experiments: design", () => {
  test("create: --json is the API's record; variants, values, overrides, allocation, metrics and guardrails as flags", async () => {
    const created = await json([
      "create", "checkout-button",
      "--universe", "web",
      "--variant", "control=50", "--variant", "green=50",
      "--value", 'control="blue"', "--value", 'green={"color":"green"}',
      "--override", "green=gate:new-checkout=true",
      "--allocation", "0-5000",
      "--gate", "signed-in",
      "--primary-metric", "purchases",
      "--guardrail", "revenue",
      "--description", "Does a green button sell more?",
    ]);
    expect(created).toEqual(await stored(created.id));
    expect(created).toMatchObject({
      name: "checkout-button",
      description: "Does a green button sell more?",
      universe: "web",
      env: "prod",
      status: "draft",
      allocation: [0, 5000],
      gate: "signed-in",
      primaryMetric: purchasesId,
      guardrailMetrics: [{ metric: revenueId, worseWhen: "decrease" }],
      variants: [
        { key: "control", name: "control", weight: 50, value: "blue" },
        { key: "green", name: "green", weight: 50, value: { color: "green" }, override: { kind: "gate", name: "new-checkout", value: true } },
      ],
    });

    const human = await run(["create", "srm-check", "--universe", "web", "--variant", "control=1", "--variant", "blue=1", "--allocation", "[5000, 6000)", "--primary-metric", "purchases", "--guardrail", "revenue:increase", "--env", "prod"]);
    expect(human.stderr).toBe("");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Created experiment srm-check \(exp_\w+\), a draft in universe web: segments 5000-5999 \(10 % of units\) split control 50 %, blue 50 %\.$/m);
    expect(human.stdout).toContain("Start it with `svc experiments start srm-check`.");
    expect((await stored("srm-check")).guardrailMetrics).toEqual([{ metric: revenueId, worseWhen: "increase" }]);

    const twice = await run(["create", "srm-check", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "7000-8000", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
    const badUniverse = await run(["create", "x1", "--universe", "nope", "--variant", "a=1", "--variant", "b=1", "--allocation", "7000-8000"]);
    expect(badUniverse.code).toBe(1);
    expect(badUniverse.stderr).toContain("Universe nope not found (NOT_FOUND, HTTP 404)");
    expect((await ts.api("/api/admin/experiments/x1")).status).toBe(404);
  });

  test("list: --json is the API's answer, --query and --status filter; the table shows allocation as segments and % of units", async () => {
    const all = await json(["list"]);
    expect(all).toEqual((await ts.api("/api/admin/experiments")).body);
    expect(all.map((e: any) => e.name).sort()).toEqual(["checkout-button", "srm-check"]);
    expect((await json(["list", "--query", "GREEN BUTTON"])).map((e: any) => e.name)).toEqual(["checkout-button"]);
    expect(await json(["list", "--status", "running"])).toEqual([]);
    expect((await json(["list", "--status", "draft", "--query", "srm"])).map((e: any) => e.name)).toEqual(["srm-check"]);

    const table = await run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+STATUS\s+UNIVERSE\s+ENV\s+ALLOCATION\s+VARIANTS\s+STARTED$/m);
    expect(table.stdout).toMatch(/^checkout-button\s+draft\s+web\s+prod\s+segments 0-4999 \(50 % of units\)\s+control 50 %, green 50 %\s+-$/m);
    expect(table.stdout).toMatch(/^srm-check\s+draft\s+web\s+prod\s+segments 5000-5999 \(10 % of units\)\s+control 50 %, blue 50 %\s+-$/m);
    expect((await run(["list", "--status", "stopped"])).stdout.trim()).toBe("No experiments match with status stopped.");
    expect((await run(["list", "--query", "nothing"])).stdout.trim()).toBe('No experiments match "nothing".');
  });

  test("get: by name, id or id prefix; human output names the metrics, the allocation and each variant's value and override", async () => {
    const e = await stored("checkout-button");
    expect(await json(["get", "checkout-button"])).toEqual(e);
    expect(await json(["get", e.id.slice(0, 10)])).toEqual(e);
    const shown = await run(["get", e.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`checkout-button (${e.id}): draft\n`);
    expect(shown.stdout).toContain("  universe:    web\n");
    expect(shown.stdout).toContain("  allocation:  segments 0-4999 (50 % of units)\n");
    expect(shown.stdout).toContain("  gate:        signed-in\n");
    expect(shown.stdout).toMatch(/^ {4}control\s+50 %\s+value "blue" \(control\)$/m);
    expect(shown.stdout).toMatch(/^ {4}green\s+50 %\s+value \{"color":"green"\}, gate new-checkout answers true$/m);
    expect(shown.stdout).toContain(`  primary:     purchases (${purchasesId})\n`);
    expect(shown.stdout).toContain(`  guardrails:  revenue (${revenueId}), decrease is harm\n`);
    expect(shown.stdout).toContain("  started:     -\n");
    const missing = await run(["get", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("(NOT_FOUND, HTTP 404)");
  });

  test("update: --value changes one variant and keeps the rest; --variant replaces the list; --clear-* and --rename", async () => {
    const before = await stored("checkout-button");
    const lime = await json(["update", "checkout-button", "--value", 'green="lime"']);
    expect(lime.variants).toEqual([before.variants[0], { ...before.variants[1], value: "lime" }]);
    expect(lime).toEqual(await stored("checkout-button"));

    const resplit = await json(["update", "checkout-button", "--variant", "control=60", "--variant", "green=30", "--variant", "red=10", "--override", "green=none", "--override", 'red=config:checkout={"color":"red"}', "--allocation", "0-4000", "--clear-gate"]);
    expect(resplit.variants).toEqual([
      { key: "control", name: "control", weight: 60, value: "blue" },
      { key: "green", name: "green", weight: 30, value: "lime" },
      { key: "red", name: "red", weight: 10, value: null, override: { kind: "config", name: "checkout", value: { color: "red" } } },
    ]);
    const shown = await run(["get", "checkout-button"]);
    expect(shown.stdout).toMatch(/^ {4}red\s+10 %\s+value null, config checkout reads \{"color":"red"\}$/m);
    const badOverride = await run(["update", "checkout-button", "--override", 'red=config:checkout={"color":1}', "--json"]);
    expect(badOverride.code).toBe(1);
    expect(JSON.parse(badOverride.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("variants[2].override.value") });
    expect(resplit).toMatchObject({ allocation: [0, 4000], gate: null });

    const human = await run(["update", "checkout-button", "--variant", "control=50", "--variant", "green=50", "--allocation", "0-5000", "--guardrail", "revenue:increase", "--description", ""]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Updated experiment checkout-button:$/m);
    expect(human.stdout).toContain("  description: -\n");
    expect(human.stdout).toContain("  allocation:  segments 0-4999 (50 % of units)\n");
    expect(human.stdout).toContain(`  guardrails:  revenue (${revenueId}), increase is harm\n`);
    expect(await stored("checkout-button")).toMatchObject({ description: null, guardrailMetrics: [{ metric: revenueId, worseWhen: "increase" }] });

    const renamed = await json(["update", "checkout-button", "--rename", "checkout-colour", "--clear-guardrails"]);
    expect(renamed).toMatchObject({ name: "checkout-colour", guardrailMetrics: [] });
    expect(await json(["update", "checkout-colour", "--rename", "checkout-button", "--guardrail", "revenue"])).toMatchObject({ name: "checkout-button" });

    const audits = (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === "experiment.update" && r.subjectId === before.id);
    expect(audits.length).toBe(5);
  });

  test("usage mistakes are exit 2 with a message naming the flag, and change nothing", async () => {
    const before = await ts.api("/api/admin/experiments");
    await usageMistakes([
      [["create", "x2", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10"], /^--universe UNIVERSE is required/],
      [["create", "x2", "--universe", "web", "--allocation", "0-10"], /^give at least two --variant KEY=WEIGHT/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--allocation", "0-10"], /^give at least two --variant/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "a=2", "--allocation", "0-10"], /^--variant a=… is given twice/],
      [["create", "x2", "--universe", "web", "--variant", "a", "--variant", "b=1", "--allocation", "0-10"], /^--variant must be KEY=WEIGHT.*\(got "a"\)/],
      [["create", "x2", "--universe", "web", "--variant", "a b=1", "--variant", "b=1", "--allocation", "0-10"], /^--variant must be KEY=WEIGHT/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1"], /^--allocation RANGE is required/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "half"], /^--allocation must be START-END in segments/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--value", "c=1"], /^--value c=…: no variant c \(the variants are a, b\)/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--value", "b=green"], /^--value b=…: not JSON \(a string needs quotes/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--value", "green"], /^--value must be KEY=JSON/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--override", "b=flag:x=1"], /^--override must be KEY=config:NAME=JSON/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--override", "b=gate:x=yes"], /^--override b=gate:x=…: a gate override is true or false/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--guardrail", "revenue:"], /^--guardrail must be METRIC\[:increase\|decrease\]/],
      [["create", "x2", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "0-10", "--env", "qa"], /^--env must be one of dev, staging, prod/],
      [["create"], /^expected: svc experiments create <name>/],
      [["list", "--status", "paused"], /^--status must be one of draft, running, stopped/],
      [["update", "checkout-button"], /^nothing to change: give at least one of --variant/],
      [["update", "checkout-button", "--gate", "signed-in", "--clear-gate"], /^--gate and --clear-gate cannot both be given/],
      [["update", "checkout-button", "--value", "purple=1"], /^--value purple=…: no variant purple/],
      [["stop", "checkout-button"], /^give exactly one of --ship VARIANT .* or --rollback/],
      [["stop", "checkout-button", "--ship", "green", "--rollback"], /^give exactly one of --ship VARIANT/],
      [["frobnicate"], /experiments/],
    ]);
    expect((await ts.api("/api/admin/experiments")).body).toEqual(before.body);
    const help = await svc(box, ["help", "experiments", "create"], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--variant KEY=WEIGHT");
    expect(help.stdout).toContain("--guardrail METRIC[:DIR]");
  });
});

describe("svc experiments: lifecycle and results", () => {
  test("start publishes it; a running experiment refuses design changes and deletion", async () => {
    const started = await json(["start", "checkout-button", "--yes"]);
    expect(started).toEqual(await stored("checkout-button"));
    expect(started).toMatchObject({ status: "running", startedAt: expect.any(String) });
    const snapshot = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
    expect(Object.keys(snapshot.experiments ?? {})).toContain("checkout-button");

    const human = await run(["start", "srm-check"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Started experiment srm-check on prod: segments 5000-5999 (10 % of units) of universe web, split control 50 %, blue 50 %.");
    expect(human.stdout).toContain("`svc experiments results srm-check`");

    const again = await run(["start", "srm-check", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: "VALIDATION", status: 400, detail: expect.stringContaining("status: running") });
    const frozen = await run(["update", "checkout-button", "--allocation", "0-100"]);
    expect(frozen.code).toBe(1);
    expect(frozen.stderr).toContain("allocation cannot change while the experiment is running (VALIDATION, HTTP 400)");
    const refused = await run(["delete", "checkout-button", "--yes", "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("stop") });
    expect((await stored("checkout-button")).status).toBe("running");
  });

  test("results: exposures per variant, then per metric the lift with its interval, p-values, chance to beat control and verdict", async () => {
    const e = await stored("checkout-button");
    const exposures: unknown[] = [];
    const purchases: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      exposures.push({ name: `$exposure:${e.id}`, unitId: `c-${i}`, properties: { variant: "control" } });
      exposures.push({ name: `$exposure:${e.id}`, unitId: `g-${i}`, properties: { variant: "green" } });
      // control: 0 or 1 purchase a unit (mean 0.5); green: 1 or 2 (mean 1.5).
      for (let k = 0; k < i % 2; k++) purchases.push({ name: "purchase", unitId: `c-${i}`, properties: { amount: 10 } });
      for (let k = 0; k < 1 + (i % 2); k++) purchases.push({ name: "purchase", unitId: `g-${i}`, properties: { amount: 10 } });
    }
    // Exposures as the SDK logs them (server key), then the outcomes.
    expect((await ingest(exposures)).status).toBe(202);
    await Bun.sleep(5);
    expect((await ingest(purchases)).status).toBe(202);

    const reply = await json(["results", "checkout-button"]);
    expect(steady(reply)).toEqual(steady((await ts.api(`/api/admin/experiments/${e.id}/results`)).body));
    expect(reply.exposures.variants).toEqual([
      { variant: "control", n: 40, expectedShare: 0.5 },
      { variant: "green", n: 40, expectedShare: 0.5 },
    ]);
    expect(reply.srm.flagged).toBe(false);
    const primary = reply.metrics.find((m: any) => m.role === "primary");
    expect(primary.metric.name).toBe("purchases");
    expect(primary.treatments[0].frequentist.relative.estimate).toBeCloseTo(2, 6);

    const human = await run(["results", "checkout-button"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    const out = human.stdout;
    expect(out).toMatch(new RegExp(`^checkout-button \\(${e.id}\\): running, running since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d, 0 of 7 minimum sample days$`, "m"));
    expect(out).toContain("Verdicts read the project's method, frequentist at α = 0.05: before the minimum sample days only the always-valid sequential test decides.");
    expect(out).toMatch(/^Exposures: 80 units, first /m);
    expect(out).toMatch(/^VARIANT\s+UNITS\s+SHARE\s+EXPECTED$/m);
    expect(out).toMatch(/^control\s+40\s+50 %\s+50 %$/m);
    expect(out).toMatch(/^green\s+40\s+50 %\s+50 %$/m);
    expect(out).toMatch(/^Sample ratio: ok \(χ² = 0, p = 1; flagged below 0\.001\)$/m);
    expect(out).not.toContain("MISMATCH");
    expect(out).toContain("Primary metric: purchases (count; mean per unit, Welch t-test)");
    expect(out).toMatch(/^VARIANT\s+UNITS\s+MEAN\s+LIFT \[95 % CI\]\s+P-VALUE\s+ALWAYS-VALID P\s+CHANCE TO BEAT CONTROL\s+VERDICT$/m);
    expect(out).toMatch(/^control\s+40\s+0\.5\s+\(control\)(\s+-){4}$/m);
    const rel = primary.treatments[0].frequentist.relative;
    const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)} %`;
    const green = new RegExp(`^green\\s+40\\s+1\\.5\\s+\\+200\\.0 % \\[${pct(rel.ci[0]).replace("+", "\\+")}, ${pct(rel.ci[1]).replace("+", "\\+")}\\]\\s+(<0\\.0001|0\\.\\d+)\\s+(<0\\.0001|0\\.\\d+|1)\\s+(100|>99\\.9|99\\.\\d) %\\s+(increase|inconclusive)$`, "m");
    expect(out).toMatch(green);
    expect(out).toContain("Guardrail (a decrease is harm): revenue (sum; mean per unit, Welch t-test)");
    expect(out).toMatch(/^green\s+40\s+15\s+\+200\.0 % /m);
  });

  test("results: a sample ratio mismatch is flagged loudly above everything else; a draft has none", async () => {
    const e = await stored("srm-check");
    const exposures: unknown[] = [];
    for (let i = 0; i < 60; i++) exposures.push({ name: `$exposure:${e.id}`, unitId: `s-${i}`, properties: { variant: "control" } });
    for (let i = 0; i < 10; i++) exposures.push({ name: `$exposure:${e.id}`, unitId: `t-${i}`, properties: { variant: "blue" } });
    expect((await ingest(exposures)).status).toBe(202);

    const reply = await json(["results", "srm-check"]);
    expect(reply.srm.flagged).toBe(true);
    const human = await run(["results", "srm-check"]);
    expect(human.code).toBe(0);
    const out = human.stdout;
    const banner = out.indexOf("!!! SAMPLE RATIO MISMATCH: exposures 60 / 10 do not fit the weights (expected 35 / 35;");
    expect(banner).toBeGreaterThan(0);
    expect(banner).toBeLessThan(out.indexOf("Exposures: 70 units"));
    expect(out).toContain("!!! do not trust any result below until it is fixed.");
    expect(out).toMatch(/^Sample ratio: MISMATCH \(χ² = 35\.71, p < 0\.0001\)$/m);
    // No purchases: every unit 0, so there is no lift to show.
    expect(out).toMatch(/^blue\s+10\s+0\s+-\s+/m);

    expect((await json(["create", "later", "--universe", "web", "--variant", "a=1", "--variant", "b=1", "--allocation", "9000-10000"])).status).toBe("draft");
    const draft = await run(["results", "later"]);
    expect(draft.code).toBe(0);
    expect(draft.stdout).toMatch(/^later \(exp_\w+\) is a draft: no results until it runs \(`svc experiments start later`\)\.$/m);
  });

  test("results: a negative control mean (refunds) shows a positive lift beside a higher treatment and its increase (issue 25, item 17)", async () => {
    expect((await json(["create", "refunds", "--universe", "web", "--variant", "control=1", "--variant", "green=1", "--allocation", "6000-7000", "--primary-metric", "revenue"])).status).toBe("draft");
    expect((await ts.api("/api/admin/experiments/refunds/start", { method: "POST" })).status).toBe(200);
    const e = await stored("refunds");
    const exposures: unknown[] = [];
    const refunds: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      exposures.push({ name: `$exposure:${e.id}`, unitId: `rc-${i}`, properties: { variant: "control" } });
      exposures.push({ name: `$exposure:${e.id}`, unitId: `rg-${i}`, properties: { variant: "green" } });
      // Net amount per unit: control −40 ± 2, green −30 ± 2 (it loses less: higher).
      refunds.push({ name: "purchase", unitId: `rc-${i}`, properties: { amount: -40 + (i % 2 ? 2 : -2) } });
      refunds.push({ name: "purchase", unitId: `rg-${i}`, properties: { amount: -30 + (i % 2 ? 2 : -2) } });
    }
    expect((await ingest(exposures)).status).toBe(202);
    await Bun.sleep(5);
    expect((await ingest(refunds)).status).toBe(202);
    const reply = await json(["results", "refunds"]);
    const t = reply.metrics[0].treatments[0];
    // (m_t − m_c)/|m_c| = 10/40; m_t/m_c − 1 gave −25 %.
    expect(t.frequentist.relative.estimate).toBeCloseTo(0.25, 9);
    expect(t.verdict).toBe("increase");
    const out = (await run(["results", "refunds"])).stdout;
    expect(out).toMatch(/^control\s+40\s+[-−]40\s+\(control\)/m);
    expect(out).toMatch(/^green\s+40\s+[-−]30\s+\+25\.0 % \[\+\d+\.\d %, \+\d+\.\d %\]\s+\S+\s+\S+\s+(100|>99\.9) %\s+increase$/m);
    expect(out).not.toContain("−25.0 %");
    expect((await run(["stop", "refunds", "--rollback", "--reason", "test", "--yes"])).code).toBe(0);
  });

  test("stop: --ship a variant (checked against the experiment) or --rollback with a reason; then delete with --yes", async () => {
    const wrong = await run(["stop", "checkout-button", "--ship", "purple", "--json"]);
    expect(wrong.code).toBe(2);
    expect(JSON.parse(wrong.stderr).error).toBe("--ship purple: no such variant in checkout-button (its variants are control, green)");
    expect((await stored("checkout-button")).status).toBe("running");

    const shipped = await json(["stop", "checkout-button", "--ship", "green", "--reason", "+200 % purchases", "--yes"]);
    expect(shipped).toEqual(await stored("checkout-button"));
    expect(shipped).toMatchObject({ status: "stopped", stoppedAt: expect.any(String), outcome: { decision: "ship", variant: "green", reason: "+200 % purchases", auto: false } });
    const snapshot = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
    expect(Object.keys(snapshot.experiments ?? {})).not.toContain("checkout-button");

    const human = await run(["stop", "srm-check", "--rollback", "--reason", "assignment is broken"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Stopped experiment srm-check: rolled back by .+: assignment is broken\.$/m);
    expect(human.stdout).toContain("Every unit reads the default again.");
    expect((await stored("srm-check")).outcome).toMatchObject({ decision: "rollback", variant: null });

    const stoppedResults = await run(["results", "checkout-button"]);
    expect(stoppedResults.stdout).toMatch(/^checkout-button \(exp_\w+\): stopped, ran \S+ \S+ to \S+ \S+, /m);
    const got = await run(["get", "checkout-button"]);
    expect(got.stdout).toMatch(/^ {2}outcome: {5}shipped green by .+: \+200 % purchases$/m);

    const twice = await run(["stop", "srm-check", "--rollback"]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("only a running experiment stops (VALIDATION, HTTP 400)");

    expect(await json(["delete", "srm-check", "--yes"])).toEqual({ name: "srm-check", deleted: true });
    expect((await ts.api("/api/admin/experiments/srm-check")).status).toBe(404);
    const human2 = await run(["delete", "later", "--yes"]);
    expect(human2.stdout.trim()).toBe("Deleted experiment later.");
    const gone = await run(["delete", "later", "--yes"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("(NOT_FOUND, HTTP 404)");
  });
});

describe("MCP tools", () => {
  test("list_experiments, get_experiment and experiment_results answer what the API does, read-only", async () => {
    const { client, call, body, close } = await mcpSession(box, env);
    try {
      const { tools } = await client.listTools();
      for (const name of ["list_experiments", "get_experiment", "experiment_results"]) {
        expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
      expect(await body("list_experiments", {})).toEqual((await ts.api("/api/admin/experiments")).body);
      expect((await body("list_experiments", { status: "stopped", q: "checkout" })).map((e: any) => e.name)).toEqual(["checkout-button"]);
      expect(await body("list_experiments", { status: "running" })).toEqual([]);
      const e = await body("get_experiment", { name: "checkout-button" });
      expect(e).toEqual(await stored("checkout-button"));
      const results = await body("experiment_results", { name: e.id });
      expect(results).toEqual((await ts.api(`/api/admin/experiments/${e.id}/results`)).body);
      expect(results.exposures.variants.map((v: any) => [v.variant, v.n])).toEqual([["control", 40], ["green", 40]]);
      const missing = await call("get_experiment", { name: "nope" });
      expect(missing.isError).toBe(true);
      expect(missing.text).toContain("not found");
      const badStatus = await call("list_experiments", { status: "paused" });
      expect(badStatus.isError).toBe(true);
    } finally {
      await close();
    }
  });
});
