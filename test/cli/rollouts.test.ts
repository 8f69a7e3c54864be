import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditOf } from "../../src/lib/audit";
import { type ClientTestServer, type Sandbox, removeSandboxes, sandbox, startClientTestServer, svc, svcJson } from "./client-helpers";

// `svc rollouts`: every subcommand against a real server, --json equal to the API, the human
// output's stage bar and last check, usage mistakes before anything is sent.

setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;
let purchasesId: string;
const everyone = [{ name: "everyone", conditions: [], passPercentage: 100 }];

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "rollouts-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/events", { body: { name: "purchase" } })).status).toBe(201);
  const purchases = await ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } });
  expect(purchases.status).toBe(201);
  purchasesId = purchases.body.id;
  for (const name of ["new-checkout", "search", "later"]) expect((await ts.api("/api/admin/gates", { body: { name } })).status).toBe(201);
  const schema = { type: "object", properties: { perMinute: { type: "integer" } }, required: ["perMinute"] };
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema, value: { perMinute: 60 } } })).status).toBe(201);
  const draft = await ts.api("/api/admin/configs/limits/drafts", { method: "PUT", body: { env: "prod", value: { perMinute: 120 } }, headers: { "x-project-id": ts.projectId } });
  expect(draft.status).toBe(200);
  writeFileSync(join(box.cwd, "rules.json"), JSON.stringify(everyone));
  writeFileSync(join(box.cwd, "wrapped.json"), JSON.stringify({ env: "prod", rules: everyone }));
  writeFileSync(join(box.cwd, "broken.json"), "[{");
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["rollouts", ...args], { env, cwd: box.cwd });
const json = (args: string[]) => svcJson(box, ["rollouts", ...args], { env, cwd: box.cwd });
const stored = async (ref: string) => (await ts.api(`/api/admin/rollouts/${encodeURIComponent(ref)}`)).body;

/** The CLI's number formatting, restated: 4 significant digits, a real minus sign. */
const num = (x: number | null) => (x === null ? "-" : String(Number(x.toPrecision(4))).replace(/^-/, "−"));
const signed = (x: number | null) => (x === null ? "-" : x > 0 ? `+${num(x)}` : num(x));
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

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

/**
 * Stage 0's two groups through the ingest, as SDKs log them: `n` units per
 * group exposed, then purchases (the new group buys more) and tracked
 * errors (about as many in each).
 */
async function traffic(id: string, n: number, options: { broken?: boolean } = {}): Promise<void> {
  const exposures: unknown[] = [];
  const purchases: unknown[] = [];
  const errors: unknown[] = [];
  for (let i = 0; i < n; i++) {
    for (const arm of ["old", "new"] as const) {
      const unitId = `${id}-${arm}-${i}`;
      exposures.push({ name: `$exposure:${id}_0`, unitId, properties: { variant: arm } });
      const bought = (i % 3) + (arm === "new" && i % 2 === 0 ? 1 : 0);
      for (let k = 0; k < bought; k++) purchases.push({ name: "purchase", unitId });
      // A broken change: half of the units with it hit an error, one in twenty without.
      const failed = options.broken ? (arm === "new" ? i % 2 === 0 : i % 20 === 0) : i % 9 === (arm === "new" ? 1 : 0);
      if (failed) errors.push({ message: "checkout failed", fingerprint: "checkout-failed", unitId });
    }
  }
  for (let i = 0; i < exposures.length; i += 1000) expect((await ts.api("/api/sdk/v1/events", { body: { events: exposures.slice(i, i + 1000) }, key: ts.serverKey })).status).toBe(202);
  await Bun.sleep(5);
  for (let i = 0; i < purchases.length; i += 1000) expect((await ts.api("/api/sdk/v1/events", { body: { events: purchases.slice(i, i + 1000) }, key: ts.serverKey })).status).toBe(202);
  expect((await ts.api("/api/sdk/v1/errors", { body: { errors }, key: ts.serverKey })).status).toBe(202);
}

describe("svc rollouts create", () => {
  test("a gate's rollout from --rules-file: --json is the API's record; stages, metrics and tolerances as flags", async () => {
    const created = await json([
      "create",
      "--gate", "new-checkout",
      "--rules-file", "rules.json",
      "--env", "prod",
      "--stages", "10:60, 50:120,100:0",
      "--metric", "purchases:higher:5%",
      "--error-tolerance", "0.1",
      "--on-regression", "pause",
      "--description", "New checkout for everyone",
    ]);
    expect(created).toEqual(await stored(created.id));
    expect(created).toMatchObject({
      kind: "gate",
      subject: "new-checkout",
      env: "prod",
      status: "running",
      stage: 0,
      percent: 10,
      onRegression: "pause",
      notify: true,
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
        { metric: "purchases", metricId: purchasesId, direction: "higher", tolerance: 0.05 },
      ],
    });
    // The snapshot serves it.
    const snapshot = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
    expect(snapshot.rollouts[created.id]).toMatchObject({ kind: "gate", name: "new-checkout", percent: 10 });

    // A second one of the same gate and env: the server's 409, as JSON on stderr.
    const twice = await run(["create", "--gate", "new-checkout", "--rules-file", "wrapped.json", "--env", "prod", "--json"]);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ code: "ALREADY_EXISTS", status: 409 });
  });

  test("a config's rollout: the env's draft by default, or --value; human output shows the stage bar", async () => {
    const human = await run(["create", "--config", "limits", "--env", "prod", "--stages", "50:30,100:0", "--no-notify"]);
    expect(human.stderr).toBe("");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Started the rollout of config limits on prod \(rol_\w+\): stage 1 of 2 \(50 %\)\.$/m);
    expect(human.stdout).toContain("  [▶ 50 % 30 min] → [ 100 %]\n");
    expect(human.stdout).toContain("  watching errors (per unit); on a regression: roll back.\n");
    const r = (await ts.api("/api/admin/rollouts?q=limits")).body[0];
    expect(r).toMatchObject({ kind: "config", notify: false, change: { value: { perMinute: 120 } }, previous: { value: { perMinute: 60 }, version: 1 } });
    expect(human.stdout).toContain(`Follow it with \`svc rollouts get ${r.id}\`.`);

    const staging = await json(["create", "--config", "limits", "--env", "staging", "--value", '{"perMinute":90}', "--start-at", "2099-01-01T00:00:00Z"]).catch((e) => e);
    // Over a year ahead: the server's refusal names startAt.
    expect(String(staging)).toContain("startAt");
    const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await json(["create", "--config", "limits", "--env", "staging", "--value", '{"perMinute":90}', "--stages", "50:30,100:30", "--start-at", scheduledAt]);
    expect(scheduled).toMatchObject({ status: "scheduled", percent: 0, change: { value: { perMinute: 90 } }, startAt: scheduledAt });
    const bad = await run(["create", "--config", "limits", "--env", "dev", "--value", '{"perMinute":"many"}', "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: "VALIDATION", status: 400 });
    const noDraft = await run(["create", "--config", "limits", "--env", "dev"]);
    expect(noDraft.code).toBe(1);
    expect(noDraft.stderr).toContain("no draft on dev");
  });

  test("usage mistakes are exit 2 with a message naming the flag, and create nothing", async () => {
    const before = (await ts.api("/api/admin/rollouts")).body.length;
    await usageMistakes([
      [["create", "--env", "prod"], /^give exactly one of --gate NAME .* or --config NAME/],
      [["create", "--gate", "search", "--config", "limits", "--env", "prod"], /^give exactly one of --gate/],
      [["create", "--gate", "search", "--rules-file", "rules.json"], /^--env dev\|staging\|prod is required/],
      [["create", "--gate", "search", "--env", "prod"], /^--gate needs its new rules: --rules-file FILE/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "missing.json"], /^--rules-file missing\.json: cannot read it \(ENOENT\)/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "broken.json"], /^--rules-file broken\.json: not JSON/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--rules", "[]"], /^give --rules-file FILE or --rules JSON, not both/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--value", "1"], /^--value is for --config/],
      [["create", "--config", "limits", "--env", "prod", "--rules-file", "rules.json"], /^--rules-file is for --gate/],
      [["create", "--config", "limits", "--env", "prod", "--value", "many"], /^--value must be JSON/],
      [["create", "--gate", "search", "--env", "qa", "--rules-file", "rules.json"], /^--env must be one of dev, staging, prod/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--stages", "1:60,,100:0"], /^--stages must be 1 to 20 PERCENT:MINUTES/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--stages", "1:1.5,100:0"], /^--stages: "1:1\.5" is not PERCENT:MINUTES/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--metric", "purchases"], /^--metric must be NAME:lower\|higher\[:TOLERANCE\]/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--metric", "purchases:sideways"], /^--metric must be NAME:lower\|higher/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--metric", "purchases:higher:lots"], /^--metric purchases: the tolerance must be a fraction/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--metric", "purchases:higher", "--metric", "purchases:lower"], /^--metric purchases is given twice/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--metric", "errors:lower"], /^--metric errors: the error rate is always watched/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--error-tolerance", "lots"], /^--error-tolerance: the tolerance must be/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--on-regression", "panic"], /^--on-regression must be pause or rollback/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--false-alarm-rate", "0.9"], /^--false-alarm-rate must be a number above 0, at most 0\.5/],
      [["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--start-at", "tomorrow"], /^--start-at must be an ISO 8601 time/],
      [["list", "--status", "stopped"], /^--status must be one of scheduled, running, paused, completed, rolled_back/],
      [["pause"], /^expected: svc rollouts pause <rollout>/],
      [["frobnicate"], /rollouts/],
    ]);
    expect((await ts.api("/api/admin/rollouts")).body.length).toBe(before);
    // The server's own checks name the field (a plan that does not grow).
    const shrinking = await run(["create", "--gate", "search", "--env", "prod", "--rules-file", "rules.json", "--stages", "50:10,20:10,100:0", "--json"]);
    expect(shrinking.code).toBe(1);
    expect(JSON.parse(shrinking.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("stages[1].percent") });
    const help = await svc(box, ["help", "rollouts", "create"], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--metric NAME:DIR[:TOL]");
    expect(help.stdout).toContain("--rules-file FILE");
  });
});

describe("svc rollouts list and get", () => {
  test("list: --json is the API's answer, --query and --status filter; the table shows stage and percent", async () => {
    const all = await json(["list"]);
    expect(all).toEqual((await ts.api("/api/admin/rollouts")).body);
    expect(all.map((r: any) => `${r.subject}/${r.env}/${r.status}`).sort()).toEqual(["limits/prod/running", "limits/staging/scheduled", "new-checkout/prod/running"]);
    expect((await json(["list", "--query", "CHECKOUT FOR"])).map((r: any) => r.subject)).toEqual(["new-checkout"]);
    expect((await json(["list", "--status", "scheduled"])).map((r: any) => r.env)).toEqual(["staging"]);
    expect(await json(["list", "--status", "paused"])).toEqual([]);
    const table = await run(["list"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^SUBJECT\s+KIND\s+ENV\s+STATUS\s+STAGE\s+PERCENT\s+CREATED\s+ID$/m);
    expect(table.stdout).toMatch(/^new-checkout\s+gate\s+prod\s+running\s+1\/3\s+10 %\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+rol_\w+$/m);
    expect(table.stdout).toMatch(/^limits\s+config\s+staging\s+scheduled\s+1\/2\s+0 %\s+/m);
    expect((await run(["list", "--status", "completed"])).stdout.trim()).toBe("No rollouts match with status completed.");
  });

  test("get: by id, id prefix or the gate's name; the stage bar, the change, and the last check's differences with their intervals", async () => {
    const r = await stored("new-checkout");
    expect(await json(["get", "new-checkout"])).toEqual(r);
    expect(await json(["get", r.id.slice(0, 12)])).toEqual(r);
    const before = await run(["get", r.id]);
    expect(before.code).toBe(0);
    expect(before.stdout).toContain(`new-checkout (gate) on prod: running (${r.id})\n`);
    expect(before.stdout).toContain("  stages:      [▶ 10 % 1 h] → [ 50 % 2 h] → [ 100 %]\n");
    expect(before.stdout).toContain("  position:    stage 1 of 3 (10 %)\n");
    expect(before.stdout).toContain("  before:      version 1, no rules\n");
    expect(before.stdout).toContain("  change:      1 rule\n    1. everyone: everyone → 100%\n");
    expect(before.stdout).toContain("  watching:    errors (per unit) (lower is better, 10 % tolerated); purchases (higher is better, 5 % tolerated)\n");
    expect(before.stdout).toContain("  action:      pause on a regression; connectors told; false alarm rate 5 %\n");

    // Traffic in both groups, then one check by the monitor.
    await traffic(r.id, 250);
    const [round] = (await ts.server.ctx.services.rollouts.monitor.checkAll(Date.now())).filter((o) => o.rolloutId === r.id);
    expect(round!.error).toBeUndefined();
    const after = await stored(r.id);
    const check = after.lastCheck;
    expect(check).toMatchObject({ stage: 0, percent: 10, stale: false, decision: "none" });
    const purchases = check.metrics.find((m: any) => m.metric === "purchases");
    expect(purchases).toMatchObject({ old: { n: 250 }, new: { n: 250 }, regression: false });
    expect(purchases.estimate).toBeGreaterThan(0);
    expect(purchases.interval).toHaveLength(2);
    const errors = check.metrics.find((m: any) => m.metric === "errors");
    expect(errors.estimate).not.toBeNull();

    const shown = await run(["get", "new-checkout"]);
    expect(shown.code).toBe(0);
    const out = shown.stdout;
    expect(out).toMatch(/^Last check \d{4}-\d\d-\d\d \d\d:\d\d: stage 1 \(10 %\), ingest lag \d+ s, decision: nothing to do \(the stage's time is not up\)$/m);
    expect(out).toMatch(/^METRIC\s+BETTER\s+TOLERATED\s+UNITS WITHOUT\/WITH\s+MEAN WITHOUT\/WITH\s+DIFFERENCE\s+INTERVAL\s+VERDICT$/m);
    for (const m of check.metrics) {
      const name = m.metric === "errors" ? "errors \\(per unit\\)" : m.metric;
      const row = new RegExp(
        `^${name}\\s+${m.direction}\\s+${esc(m.tolerance === 0.1 ? "10 %" : "5 %")}\\s+250/250\\s+${esc(`${num(m.old.mean)}/${num(m.new.mean)}`)}\\s+${esc(signed(m.estimate))}\\s+${esc(`[${signed(m.interval[0])}, ${signed(m.interval[1])}]`)}\\s+ok$`,
        "m",
      );
      expect(out).toMatch(row);
    }
  });
});

describe("svc rollouts: pause, resume, advance, rollback, delete", () => {
  test("each acts through the API and is audited; the stored state follows", async () => {
    const r = await stored("new-checkout");
    const paused = await json(["pause", "new-checkout", "--reason", "checking logs"]);
    expect(paused).toEqual(await stored(r.id));
    expect(paused).toMatchObject({ status: "paused", outcome: { kind: "paused", reason: "checking logs", auto: false } });
    const again = await run(["pause", r.id, "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: "VALIDATION", detail: "status: paused" });
    const shown = await run(["get", r.id]);
    expect(shown.stdout).toContain("  stages:      [‖ 10 % 1 h] → [ 50 % 2 h] → [ 100 %]\n");
    expect(shown.stdout).toMatch(/^ {2}outcome: {5}paused by .+ \d{4}-\d\d-\d\d \d\d:\d\d: checking logs$/m);

    const resumed = await run(["resume", "new-checkout"]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("Resumed the rollout of gate new-checkout on prod: stage 1 of 3 (10 %).\n  [▶ 10 % 1 h] → [ 50 % 2 h] → [ 100 %]");
    expect(await stored(r.id)).toMatchObject({ status: "running", outcome: null });

    const advanced = await json(["advance", r.id, "--yes"]);
    expect(advanced).toMatchObject({ status: "running", stage: 1, percent: 50 });
    expect((await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body.rollouts[r.id]).toMatchObject({ stage: 1, percent: 50 });
    expect((await run(["get", r.id])).stdout).toContain("  stages:      [✓ 10 % 1 h] → [▶ 50 % 2 h] → [ 100 %]\n");

    const refused = await run(["delete", r.id, "--yes", "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("roll it back") });

    const rolled = await run(["rollback", "new-checkout", "--reason", "support tickets", "--yes"]);
    expect(rolled.code).toBe(0);
    expect(rolled.stdout).toBe("Rolled back the rollout of gate new-checkout on prod: every unit gets the old rules again.\n  reason: support tickets\n");
    expect(await stored(r.id)).toMatchObject({ status: "rolled_back", percent: 0, outcome: { kind: "rolled_back", reason: "support tickets", auto: false } });
    expect((await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body.rollouts[r.id]).toBeUndefined();
    expect((await ts.api("/api/admin/gates/new-checkout")).body.envs.prod.rules).toEqual([]);
    const finished = await run(["get", r.id]);
    expect(finished.stdout).toContain(`new-checkout (gate) on prod: rolled_back (${r.id})\n`);
    expect(finished.stdout).toContain("  position:    rolled back at stage 2 of 3: 0 %\n");
    // A finished rollout is no longer found by its gate's name.
    expect((await run(["get", "new-checkout"])).code).toBe(1);

    const audit = (await auditOf(ts.store, ts.projectId, 1000)).filter((a) => a.subjectId === r.id).map((a) => a.action);
    for (const action of ["rollout.create", "rollout.pause", "rollout.resume", "rollout.advance", "rollout.rollback"]) expect(audit).toContain(action);

    expect(await json(["delete", r.id, "--yes"])).toEqual({ rollout: r.id, deleted: true });
    expect((await ts.api(`/api/admin/rollouts/${r.id}`)).status).toBe(404);
    const gone = await run(["delete", r.id, "--yes"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("(NOT_FOUND, HTTP 404)");
  });

  test("a regression rolls back by itself: get shows the outcome's metric, estimate and interval", async () => {
    const r = (await ts.api("/api/admin/rollouts?q=limits&status=running")).body.find((x: any) => x.env === "prod");
    expect(r).toMatchObject({ env: "prod", status: "running", stage: 0, onRegression: "rollback" });
    await traffic(r.id, 250, { broken: true });
    await ts.server.ctx.services.rollouts.monitor.checkAll(Date.now());
    const after = await stored(r.id);
    expect(after).toMatchObject({ status: "rolled_back", outcome: { kind: "rolled_back", auto: true, metric: "errors" } });
    const o = after.outcome;
    const shown = await run(["get", r.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`limits (config) on prod: rolled_back (${r.id})\n`);
    expect(shown.stdout).toContain(`  outcome:     rolled back automatically (${o.by}) `);
    expect(shown.stdout).toContain(o.reason);
    expect(shown.stdout).toContain(`  regression:  errors (per unit) difference ${signed(o.estimate)} [${signed(o.interval[0])}, ${signed(o.interval[1])}]\n`);
    expect(shown.stdout).toMatch(/^errors \(per unit\)\s+lower\s+0\s+250\/250\s+.*REGRESSION$/m);
    expect((await ts.api("/api/admin/configs/limits")).body.envs.prod.value).toEqual({ perMinute: 60 });
  });

  test("advance starts a scheduled rollout and completes after the last stage, publishing the value", async () => {
    const scheduled = (await ts.api("/api/admin/rollouts?status=scheduled")).body[0];
    const started = await run(["advance", scheduled.id, "--yes"]);
    expect(started.code).toBe(0);
    expect(started.stdout).toContain("Advanced the rollout of config limits on staging: stage 1 of 2 (50 %).");
    expect((await stored(scheduled.id)).status).toBe("running");
    await json(["advance", scheduled.id, "--yes"]);
    const completed = await run(["advance", scheduled.id, "--yes"]);
    expect(completed.code).toBe(0);
    expect(completed.stdout).toContain("Completed the rollout of config limits on staging: completed: all 2 stages, 100 %.\n  [✓ 50 % 30 min] → [✓ 100 % 30 min]");
    expect((await ts.api("/api/admin/configs/limits")).body.envs.staging.value).toEqual({ perMinute: 90 });
    const after = await run(["advance", scheduled.id, "--yes", "--json"]);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stderr)).toMatchObject({ code: "VALIDATION", detail: "status: completed" });
  });
});
