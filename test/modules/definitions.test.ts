import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { type TestServer, startTestServer } from "../helpers";

// Flags as code (issue 31): export, plan and apply through the API; the round trip to an empty project,
// dependency order, all-or-nothing, prune, and a second apply changing nothing.

let source: TestServer;
let target: TestServer;

beforeAll(async () => {
  [source, target] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([source.stop(), target.stop()]);
});

const exported = async (ts: TestServer, query = "") => {
  const res = await ts.api(`/api/admin/export${query}`);
  expect(res.status).toBe(200);
  return res.body;
};
const apply = (ts: TestServer, doc: unknown, query = "") => ts.api(`/api/admin/apply${query}`, { body: doc });
const ok = async (p: Promise<{ status: number; body: any }>, status = 200) => {
  const res = await p;
  if (res.status !== status) throw new Error(`${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
};

/** One of every kind, with references between them: the gate names a segment and another gate, the config a gate. */
async function seed(ts: TestServer) {
  const scoped = { "X-Project-Id": ts.projectId };
  await ok(ts.api("/api/admin/attributes", { body: { name: "plan", type: "enum", enumValues: ["free", "pro"], description: "Billing plan" } }), 201);
  await ok(ts.api("/api/admin/segments", { body: { name: "beta", description: "Beta testers", ids: ["u-2", "u-1"] } }), 201);
  await ok(ts.api("/api/admin/segments", { body: { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] } }), 201);
  await ok(ts.api("/api/admin/gates/templates", { body: { name: "Pro plan", description: "Paying", rules: [{ attr: "plan", op: "eq", value: "pro" }] } }), 201);
  await ok(ts.api("/api/admin/killswitches", { body: { name: "payments", description: "Card payments", switches: { eu: true } } }), 201);
  await ok(ts.api("/api/admin/killswitches/payments/toggle", { body: { env: "dev" } }));
  await ok(ts.api("/api/admin/gates", { body: { name: "base", description: "Base gate" } }), 201);
  await ok(ts.api("/api/admin/gates", { body: { name: "new-checkout", description: "The redesigned checkout" } }), 201);
  await ok(ts.api("/api/admin/gates/new-checkout/rules", { method: "PUT", body: { env: "prod", rules: [{ name: "beta", conditions: [{ attr: "user_id", op: "in_segment", value: "beta" }], passPercentage: 100 }, { conditions: [{ attr: "user_id", op: "passes_gate", value: "base" }], passPercentage: 25 }] } }));
  await ok(ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer", minimum: 1 }, value: 60, description: "Requests per minute" } }), 201);
  await ok(ts.api("/api/admin/configs/limits/drafts", { method: "PUT", headers: scoped, body: { env: "prod", value: 120, rules: [{ name: "pro", conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 600 }, { conditions: [{ attr: "user_id", op: "passes_gate", value: "new-checkout" }], split: [{ value: 100, weight: 50 }, { value: 200, weight: 50 }] }] } }));
  await ok(ts.api("/api/admin/configs/limits/publish", { body: { env: "prod" } }));
  await ok(ts.api("/api/admin/universes", { headers: scoped, body: { name: "accounts", unit_type: "account_id", holdout_range: [0, 500] } }), 201);
  await ok(ts.api("/api/admin/events", { body: { name: "purchase", folder: "shop", description: "A paid order", properties: [{ name: "amount", type: "number" }] } }), 201);
  await ok(ts.api("/api/admin/metrics", { body: { name: "revenue", kind: "sum", event: "purchase", property: "amount", description: "Money in" } }), 201);
  await ok(ts.api("/api/admin/metrics", { body: { name: "purchases", kind: "count", event: "purchase" } }), 201);
  await ok(ts.api("/api/admin/alert-rules", { body: { name: "no-sales", metricId: "purchases", threshold: 1, comparator: "lt", windowHours: 6 } }), 201);
  await ok(
    ts.api("/api/admin/experiments", {
      body: {
        name: "price-test",
        universe: "accounts",
        allocation: [500, 5500],
        gate: "new-checkout",
        variants: [
          { key: "control", weight: 1, value: 10 },
          { key: "cheap", weight: 1, value: 8, override: { kind: "config", name: "limits", value: 80, rule: "pro" } },
        ],
        primaryMetric: "revenue",
        guardrailMetrics: [{ metric: "purchases", worseWhen: "decrease" }],
      },
    }),
    201,
  );
}

describe("export → apply to an empty project → export", () => {
  test("the two documents are identical; the second apply changes nothing", async () => {
    await seed(source);
    const doc = await exported(source);
    expect(Object.keys(doc)).toEqual(["version", "attributes", "events", "segments", "templates", "killswitches", "gates", "configs", "universes", "metrics", "alerts", "experiments"]);
    expect(doc.alerts).toEqual([{ name: "no-sales", metric: "purchases", threshold: 1, comparator: "lt", windowHours: 6, enabled: true }]);
    expect(doc.experiments[0]).toMatchObject({ name: "price-test", universe: "accounts", gate: "new-checkout", primaryMetric: "revenue", guardrailMetrics: [{ metric: "purchases", worseWhen: "decrease" }] });
    // Names, not ids; no salts.
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/"(id|salt|metricId)":|cfg_|gate_|seg_|met_|exp_|uni_/);
    expect(doc.segments.find((s: any) => s.name === "beta")).toEqual({ name: "beta", description: "Beta testers", attribute: "user_id", conditions: [], ids: ["u-2", "u-1"] });
    expect(doc.configs[0].envs.prod.rules[1].split).toEqual([{ value: 100, weight: 50 }, { value: 200, weight: 50 }]);

    const plan = await ok(apply(target, doc, "?dryRun=true"));
    expect(plan.applied).toBe(false);
    expect(plan.summary.create).toBeGreaterThanOrEqual(9);
    // The dry run changed nothing.
    expect((await exported(target)).gates.length).toBe(0);

    const applied = await ok(apply(target, doc));
    expect(applied).toMatchObject({ applied: true, summary: plan.summary });
    expect(await exported(target)).toEqual(doc);
    // Audit rows: the owning modules' own, and one for the apply.
    const audit = await auditOf(target.store, target.projectId, 1000);
    expect(audit.some((r) => r.action === "definitions.apply")).toBe(true);
    expect(audit.some((r) => r.action === "gate.rules.set" || r.action.startsWith("gate."))).toBe(true);

    const again = await ok(apply(target, doc));
    expect(again).toEqual({ changes: [], summary: { create: 0, update: 0, delete: 0 }, applied: false });
  });

  test("a plan lists field changes per env; prune deletes only what a section lists no longer", async () => {
    const doc = await exported(target);
    const config = doc.configs.find((c: any) => c.name === "limits");
    config.envs.prod.value = 90;
    config.description = "Requests per minute, per key";
    doc.gates = doc.gates.filter((g: any) => g.name !== "base");
    // new-checkout names base: pruning base must be refused, and nothing else happens either.
    const refused = await apply(target, doc, "?prune=true");
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect((await exported(target)).configs.find((c: any) => c.name === "limits").envs.prod.value).toBe(120);

    doc.gates = doc.gates.map((g: any) => (g.name === "new-checkout" ? { ...g, envs: { ...g.envs, prod: { rules: [g.envs.prod.rules[0]] } } } : g));
    const plan = await ok(apply(target, doc, "?dryRun=true&prune=true"));
    expect(plan.changes).toEqual([
      { section: "gates", name: "new-checkout", action: "update", changes: [{ field: "envs.prod.rules", before: expect.any(Array), after: [doc.gates.find((g: any) => g.name === "new-checkout").envs.prod.rules[0]] }] },
      {
        section: "configs",
        name: "limits",
        action: "update",
        changes: [
          { field: "description", before: "Requests per minute", after: "Requests per minute, per key" },
          { field: "envs.prod.value", before: 120, after: 90 },
        ],
      },
      { section: "gates", name: "base", action: "delete", changes: [] },
    ]);
    // Without prune, base stays; a document without a section leaves that section alone.
    expect((await ok(apply(target, { version: 1, configs: doc.configs }, "?dryRun=true"))).summary).toEqual({ create: 0, update: 1, delete: 0 });
    await ok(apply(target, doc, "?prune=true"));
    const after = await exported(target);
    expect(after.gates.map((g: any) => g.name)).toEqual(["new-checkout"]);
    expect(after.configs[0].envs.prod).toMatchObject({ value: 90 });
    expect(after.segments.length).toBe(2);
  });

  test("a refusal midway changes nothing at all, and names the field", async () => {
    const before = await exported(target);
    const doc = structuredClone(before);
    doc.segments.push({ name: "fresh", ids: ["x-1"] });
    doc.killswitches.push({ name: "fresh-switch", envs: { prod: { value: false, switches: {} } } });
    // The config's new value breaks its schema: refused after the segment and killswitch were made.
    doc.configs[0].envs.dev.value = 0;
    const res = await apply(target, doc);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION");
    expect(await exported(target)).toEqual(before);
    // The same through a dry run.
    expect((await apply(target, doc, "?dryRun=true")).status).toBe(400);
  });

  test("bad documents are VALIDATION naming the entry and field", async () => {
    const cases: [unknown, RegExp][] = [
      [{ version: 2 }, /version/],
      [{ version: 1, flags: [] }, /flags/],
      [{ version: 1, gates: [{ name: "a" }, { name: "a" }] }, /gates\[1\]\.name/],
      [{ version: 1, killswitches: [{ name: "k", envs: { production: { value: true } } }] }, /killswitches\[0\]\.envs\.production/],
      [{ version: 1, configs: [{ name: "c", envs: {} }] }, /configs\[0\]\.schema/],
      [{ version: 1, segments: [{ name: "s", colour: "red" }] }, /segments\[0\]\.colour/],
    ];
    for (const [doc, detail] of cases) {
      const res = await apply(target, doc, "?dryRun=true");
      expect(res.status).toBe(400);
      expect(`${res.body.error} ${res.body.detail}`).toMatch(detail);
    }
  });
});

describe("applies at once", () => {
  test("five applies of one document at the same moment: one makes the changes, the others plan against it and change nothing", async () => {
    const doc = { version: 1, killswitches: [{ name: "race-switch", description: "made once", envs: {} }], configs: [{ name: "race-config", description: "", schema: { type: "integer" }, envs: { dev: { value: 1 } } }] };
    const answers = await Promise.all(Array.from({ length: 5 }, () => apply(target, doc)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const made = answers.filter((a) => a.body.applied);
    expect(made.length).toBe(1);
    expect(made[0]!.body.summary).toEqual({ create: 2, update: 0, delete: 0 });
    for (const a of answers.filter((x) => !x.body.applied)) expect(a.body.summary).toEqual({ create: 0, update: 0, delete: 0 });
    const audit = (await auditOf(target.store, target.projectId, 1000)).filter((r) => r.action === "definitions.apply" && JSON.stringify(r.detail).includes("race-switch"));
    expect(audit.length).toBe(1);
    expect((await exported(target)).killswitches.filter((k: any) => k.name === "race-switch").length).toBe(1);
  });
});
