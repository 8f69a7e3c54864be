import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import type { EventRow } from "../../src/lib/eventstore/types";
import type { AutoRollback } from "../../src/modules/experiments/guardrails";
import { analyzeMetric } from "../../src/modules/experiments/stats";
import { type PublishedExperiment, assignVariant, exposureEventName } from "../../src/sdk/experiments";
import type { PublishedUniverse } from "../../src/sdk/universes";
import { type TestServer, startTestServer } from "../helpers";
import { seededRandom as rng } from "../seeded-random";

// Results end to end: exposures and outcomes in the real event store, sums in SQL, statistics on top; then the
// guardrail check that rolls an experiment back. The clock is the server's injected one, so days pass on demand.

const DAY = 86_400_000;
const T0 = Math.floor(Date.now() / DAY) * DAY - 20 * DAY;
let now = T0;
let ts: TestServer;

const api = (path: string, init: { method?: string; body?: unknown } = {}) => ts.api(path, init);
const append = (rows: EventRow[]) => ts.server.ctx.services.analytics.append(rows);

beforeAll(async () => {
  ts = await startTestServer({ alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now });
  const scoped = { "x-project-id": ts.projectId };
  expect((await ts.api("/api/admin/universes", { body: { name: "web" }, headers: scoped })).status).toBe(201);
  expect((await api("/api/admin/events", { body: { name: "purchase", properties: [{ name: "amount", type: "number" }] } })).status).toBe(201);
  expect((await api("/api/admin/events", { body: { name: "checkout_error" } })).status).toBe(201);
  for (const body of [
    { name: "purchases", kind: "count", event: "purchase" },
    { name: "buyers", kind: "unique", event: "purchase" },
    { name: "revenue", kind: "sum", event: "purchase", property: "amount" },
    { name: "amount-per-purchase", kind: "ratio", numerator: { kind: "sum", event: "purchase", property: "amount" }, denominator: { kind: "count", event: "purchase" } },
    { name: "errors", kind: "count", event: "checkout_error" },
  ]) {
    expect((await api("/api/admin/metrics", { body })).status).toBe(201);
  }
});
afterAll(() => ts.stop());

type Unit = { id: string; variant: string; exposedAt: number; purchases: number[]; pre: number[]; errors: number };

/**
 * `perVariant` units in each variant, assigned by the SDK's own function from
 * the published snapshot, one exposure each (some twice), purchases after it
 * (and some before: the pre-period), at rates per variant.
 *
 * Which units a variant gets changes from run to run (the universe and the
 * experiment hash with salts of their own), so the test keeps its verdicts
 * from hanging on that: each variant takes units until it has `perVariant`
 * (an even split: no sample ratio mismatch by chance, which a fair split
 * showed about one run in a thousand), and draws from a seeded stream of its
 * own, so its k-th unit behaves alike on every run (with one stream for all,
 * the A/A errors guardrail read "harm" about one run in 2,500).
 */
async function simulate(name: string, rates: Record<string, { buy: number; error: number }>, perVariant: number, seed: number): Promise<{ id: string; units: Unit[] }> {
  const snap = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
  const exp = snap.experiments[name] as PublishedExperiment;
  const uni = snap.universes[exp.universe] as PublishedUniverse;
  const streams = new Map(exp.variants.map((v, k) => [v.key, { random: rng(seed * 1000 + k), taken: 0 }]));
  const out: Unit[] = [];
  const rows: EventRow[] = [];
  for (let i = 0; [...streams.values()].some((v) => v.taken < perVariant); i++) {
    if (i > perVariant * streams.size * 100) throw new Error(`simulate: ${name} did not fill its variants`);
    const id = `${name}-u${i}`;
    const a = assignVariant(exp, uni, id);
    const variant = a.variant ? streams.get(a.variant) : undefined;
    if (!variant || variant.taken >= perVariant) continue;
    variant.taken++;
    const random = variant.random;
    const exposedAt = now + Math.floor(random() * DAY);
    const unit: Unit = { id, variant: a.variant, exposedAt, purchases: [], pre: [], errors: 0 };
    rows.push({ projectId: ts.projectId, name: exposureEventName(exp.id), ts: exposedAt, unitId: id, value: null, props: { variant: a.variant } });
    // A repeated exposure (a later page view) counts once.
    if (random() < 0.3) rows.push({ projectId: ts.projectId, name: exposureEventName(exp.id), ts: exposedAt + 60_000, unitId: id, value: null, props: { variant: a.variant } });
    const rate = rates[a.variant]!;
    // Habit: buyers before the experiment buy more during it (what CUPED exploits).
    const habitual = random() < 0.3;
    if (habitual) for (let k = 0; k < 2; k++) unit.pre.push(10 + Math.floor(random() * 20));
    const buys = (habitual ? 2 : 0) + (random() < rate.buy ? 1 + Math.floor(random() * 3) : 0);
    for (let k = 0; k < buys; k++) unit.purchases.push(5 + Math.floor(random() * 50));
    unit.pre.forEach((amount, k) => rows.push({ projectId: ts.projectId, name: "purchase", ts: exposedAt - (k + 1) * 3_600_000, unitId: id, value: null, props: { amount } }));
    unit.purchases.forEach((amount, k) => rows.push({ projectId: ts.projectId, name: "purchase", ts: exposedAt + (k + 1) * 60_000, unitId: id, value: null, props: { amount } }));
    if (random() < rate.error) {
      unit.errors = 1;
      rows.push({ projectId: ts.projectId, name: "checkout_error", ts: exposedAt + 30_000, unitId: id, value: null, props: null });
    }
    out.push(unit);
  }
  // Another unit's purchases and events before any exposure never count.
  rows.push({ projectId: ts.projectId, name: "purchase", ts: now + 1000, unitId: "never-exposed", value: null, props: { amount: 1000 } });
  for (let i = 0; i < rows.length; i += 1000) await append(rows.slice(i, i + 1000));
  return { id: exp.id, units: out };
}

async function startExperiment(name: string, extra: Record<string, unknown> = {}) {
  const created = await api("/api/admin/experiments", {
    body: { name, universe: "web", variants: [{ key: "control", weight: 1 }, { key: "treatment", weight: 1 }], allocation: [0, 10000], primaryMetric: "purchases", ...extra },
  });
  expect(created.status).toBe(201);
  expect((await api(`/api/admin/experiments/${name}/start`, { method: "POST" })).status).toBe(200);
  return created.body;
}

describe("results", () => {
  test("a draft has no window and no metrics; a running one without exposures says so", async () => {
    const d = await api("/api/admin/experiments", { body: { name: "empty", universe: "web", variants: [{ key: "a", weight: 1 }, { key: "b", weight: 1 }], allocation: [0, 10], primaryMetric: "purchases" } });
    const r = await api(`/api/admin/experiments/${d.body.id}/results`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ method: "frequentist", alpha: 0.05, minimumReached: false, window: { from: null, to: null }, exposures: { total: 0 }, metrics: [] });
    expect((await api(`/api/admin/experiments/${d.body.id}`, { method: "DELETE" })).status).toBe(204);
  });

  test("sums from the store match the units; every metric kind picks its test; the lift is found; no SRM", async () => {
    now = T0;
    await startExperiment("pricing", { allocation: [0, 4000], guardrailMetrics: [{ metric: "errors", worseWhen: "increase" }, "revenue", "buyers", "amount-per-purchase"] });
    const { units } = await simulate("pricing", { control: { buy: 0.2, error: 0.05 }, treatment: { buy: 0.45, error: 0.05 } }, 2000, 7);
    now = T0 + 3 * DAY;
    const res = await api("/api/admin/experiments/pricing/results");
    expect(res.status).toBe(200);
    const r = res.body;
    const byVariant = (v: string) => units.filter((u) => u.variant === v);
    expect(r.exposures.variants.map((e: { variant: string; n: number }) => [e.variant, e.n])).toEqual([
      ["control", byVariant("control").length],
      ["treatment", byVariant("treatment").length],
    ]);
    expect(r.exposures.total).toBe(units.length);
    expect(r.srm.flagged).toBe(false);
    expect(r.warnings).toEqual([]);
    expect(r.minimumReached).toBe(false);
    expect(r.sampleDays).toBeCloseTo(3, 5);
    const metric = (name: string) => r.metrics.find((m: { metric: { name: string } }) => m.metric.name === name);
    expect(r.metrics.map((m: { metric: { name: string }; role: string; test: string }) => [m.metric.name, m.role, m.test])).toEqual([
      ["purchases", "primary", "mean"],
      ["errors", "guardrail", "mean"],
      ["revenue", "guardrail", "mean"],
      ["buyers", "guardrail", "proportion"],
      ["amount-per-purchase", "guardrail", "ratio"],
    ]);
    // The control's mean purchases per unit, computed here from the units, equals the store's.
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const purchases = metric("purchases");
    expect(purchases.treatments[0].frequentist.control.n).toBe(byVariant("control").length);
    expect(purchases.arms.map((a: { variant: string; mean: number }) => [a.variant, a.mean])).toEqual(
      ["control", "treatment"].map((v) => [v, expect.closeTo(mean(byVariant(v).map((u) => u.purchases.length)), 9)]),
    );
    // CUPED ran on the pre-period and reduced variance; the verdict (sequential before the minimum days) is an increase.
    expect(purchases.cuped).not.toBeNull();
    expect(purchases.cuped.varianceReduction[0]).toBeGreaterThan(0.05);
    expect(purchases.treatments[0].verdict).toBe("increase");
    expect(purchases.treatments[0].frequentist.relative.estimate).toBeGreaterThan(0.1);
    expect(purchases.sql).toContain("experiment");
    // Unadjusted, the same sums give the plain Welch test: recompute from the units.
    const arms = ["control", "treatment"].map((v) => {
      const xs = byVariant(v).map((u) => u.purchases.reduce((s, a) => s + a, 0));
      return { n: xs.length, sum: xs.reduce((s, x) => s + x, 0), sumSq: xs.reduce((s, x) => s + x * x, 0) };
    });
    const revenue = metric("revenue");
    const plain = analyzeMetric({ kind: "mean", arms }, { cuped: false });
    expect(revenue.treatments[0].frequentist.control.n).toBe(arms[0]!.n);
    expect(revenue.cuped).not.toBeNull();
    expect(revenue.treatments[0].frequentist.absolute.se).toBeLessThan(plain.variants[0]!.frequentist.absolute!.se);
    // unique → proportion of units that bought at all.
    const buyers = metric("buyers");
    expect(buyers.arms[0].mean).toBeCloseTo(mean(byVariant("control").map((u) => (u.purchases.length > 0 ? 1 : 0))), 9);
    // ratio → ΣX/ΣY over the arm.
    const ratio = metric("amount-per-purchase");
    const control = byVariant("control");
    const sx = control.reduce((s, u) => s + u.purchases.reduce((a, b) => a + b, 0), 0);
    const sy = control.reduce((s, u) => s + u.purchases.length, 0);
    expect(ratio.arms[0].mean).toBeCloseTo(sx / sy, 9);
    expect(ratio.treatments[0].frequentist.control.mean).toBeCloseTo(sx / sy, 9);
    expect(ratio.cuped).toBeNull();
    // Guardrail moved no harmful way.
    expect(metric("errors").treatments[0].harm).toBe(false);
  });

  test("a broken split is flagged as a sample ratio mismatch, loudly", async () => {
    now = T0;
    const e = await startExperiment("skewed", { primaryMetric: null, allocation: [4000, 5000] });
    const rows: EventRow[] = [];
    for (let i = 0; i < 3000; i++) rows.push({ projectId: ts.projectId, name: exposureEventName(e.id), ts: now + i, unitId: `s${i}`, value: null, props: { variant: i % 3 === 0 ? "treatment" : "control" } });
    rows.push({ projectId: ts.projectId, name: exposureEventName(e.id), ts: now + 5, unitId: "odd", value: null, props: { variant: "purple" } });
    await append(rows);
    now = T0 + DAY;
    const r = (await api("/api/admin/experiments/skewed/results")).body;
    expect(r.exposures.variants.map((v: { n: number }) => v.n)).toEqual([2000, 1000]);
    expect(r.srm.flagged).toBe(true);
    expect(r.srm.pValue).toBeLessThan(1e-10);
    expect(r.warnings.join("\n")).toContain("Sample ratio mismatch");
    expect(r.warnings.join("\n")).toContain("purple");
  });

  test("the sequential result remembers its looks: p never rises between looks, five at once count five, another threshold or metric definition starts afresh, nothing is kept below 300 units an arm, the looks go with the experiment", async () => {
    now = T0;
    const e = await startExperiment("peeking", { allocation: [5000, 10000] });
    // Units alternate variants (no SRM); `buy` is each variant's chance of one purchase.
    let next = 0;
    const batch = async (units: number, buy: Record<string, number>) => {
      const random = rng(units + next);
      const rows: EventRow[] = [];
      for (let i = 0; i < units; i++, next++) {
        const unitId = `peek-${next}`;
        const variant = next % 2 === 0 ? "control" : "treatment";
        const at = now + i;
        rows.push({ projectId: ts.projectId, name: exposureEventName(e.id), ts: at, unitId, value: null, props: { variant } });
        if (random() < buy[variant]!) rows.push({ projectId: ts.projectId, name: "purchase", ts: at + 1000, unitId, value: null, props: { amount: 10 } });
      }
      for (let i = 0; i < rows.length; i += 1000) await append(rows.slice(i, i + 1000));
    };
    const look = async () => {
      const r = await api("/api/admin/experiments/peeking/results");
      expect(r.status).toBe(200);
      return r.body.metrics.find((m: { metric: { name: string } }) => m.metric.name === "purchases").treatments[0].sequential as { pValue: number; confidenceSequence: [number, number] };
    };
    const kept = async () =>
      (await ts.store.all<{ basis: string; looks: number; p_value: number }>("SELECT basis, looks, p_value FROM experiment_looks WHERE experiment_id = ? AND variant = ?", e.id, "treatment")).map((r) => ({
        basis: r.basis,
        looks: Number(r.looks),
        p: Number(r.p_value),
      }));

    // A strong early lift. Read at 100 units an arm, nothing is remembered yet; at 1,100, the look is.
    await batch(200, { control: 0.1, treatment: 0.3 });
    now = T0 + DAY / 2;
    await look();
    expect(await kept()).toEqual([]);
    await batch(2000, { control: 0.1, treatment: 0.3 });
    now = T0 + DAY;
    const first = await look();
    expect(first.pValue).toBeLessThan(1e-6);
    expect(await kept()).toEqual([{ basis: expect.stringMatching(/^mean\|alpha=0\.05\|plain\|measures=/), looks: 1, p: first.pValue }]);
    // Then the mirror image: over both batches the arms are alike, yet the p-value shown stays the first look's.
    await batch(2000, { control: 0.3, treatment: 0.1 });
    now = T0 + 2 * DAY;
    const second = await look();
    expect(second.pValue).toBe(first.pValue);
    expect(await kept()).toEqual([{ basis: (await kept())[0]!.basis, looks: 2, p: first.pValue }]);
    // Looks at once are each counted (one transaction each, under a lock): none starts from a state another replaces.
    await Promise.all(Array.from({ length: 5 }, () => look()));
    expect((await kept())[0]!.looks).toBe(7);

    // Another threshold is another basis: the memory starts afresh, and this data alone shows no lift.
    const setAlpha = async (significanceThreshold: number) =>
      expect((await api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { analysis: { significanceThreshold } } })).status).toBe(200);
    await setAlpha(0.1);
    try {
      const fresh = await look();
      expect(fresh.pValue).toBeGreaterThan(0.1);
      expect(await kept()).toEqual([{ basis: expect.stringMatching(/^mean\|alpha=0\.1\|plain\|measures=/), looks: 1, p: fresh.pValue }]);
    } finally {
      await setAlpha(0.05);
    }
    // So is another definition of the metric, even with the same test (a filter that keeps every purchase). First a
    // low p to remember again: another lift, read, then its mirror image.
    await batch(2000, { control: 0.1, treatment: 0.3 });
    now = T0 + 3 * DAY;
    const lifted = await look();
    expect(lifted.pValue).toBeLessThan(1e-3);
    await batch(2000, { control: 0.3, treatment: 0.1 });
    now = T0 + 4 * DAY;
    expect((await look()).pValue).toBe(lifted.pValue);
    const setFilters = async (filters: unknown[]) => expect((await api("/api/admin/metrics/purchases", { method: "PATCH", body: { filters } })).status).toBe(200);
    await setFilters([{ property: "amount", op: "gte", value: 0 }]);
    try {
      const redefined = await look();
      expect(redefined.pValue).toBeGreaterThan(0.1);
      expect((await kept())[0]!.looks).toBe(1);
    } finally {
      await setFilters([]);
    }

    expect((await api("/api/admin/experiments/peeking/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
    expect((await api("/api/admin/experiments/peeking", { method: "DELETE" })).status).toBe(204);
    expect(await kept()).toEqual([]);
  });
});

describe("auto-rollback", () => {
  test("waits for the minimum sample days, then stops an experiment whose guardrail is significantly worse, says why, tells the notifiers", async () => {
    // "pricing" (earlier test) is stopped first: only the two below are checked. The healthy experiment here is one
    // whose guardrail cannot move: no unit ever errs.
    expect((await api("/api/admin/experiments/pricing/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
    const patched = await api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { analysis: { autoRollback: true, minSampleDays: 2 } } });
    expect(patched.status).toBe(200);
    now = T0 + 5 * DAY;
    await startExperiment("calm", { allocation: [0, 4000], guardrailMetrics: [{ metric: "errors", worseWhen: "increase" }] });
    await simulate("calm", { control: { buy: 0.2, error: 0 }, treatment: { buy: 0.3, error: 0 } }, 600, 13);
    const e = await startExperiment("risky", { allocation: [5000, 10000], guardrailMetrics: [{ metric: "errors", worseWhen: "increase" }] });
    await simulate("risky", { control: { buy: 0.2, error: 0.02 }, treatment: { buy: 0.2, error: 0.2 } }, 1500, 11);
    const heard: AutoRollback[] = [];
    const unhear = ts.server.ctx.services.experiments.addRollbackNotifier((event) => void heard.push(event));
    try {
      now = T0 + 6 * DAY;
      expect(await ts.server.ctx.services.experiments.checkGuardrails()).toEqual([]);
      expect((await api("/api/admin/experiments/risky")).body.status).toBe("running");
      now = T0 + 7.5 * DAY;
      const done = await ts.server.ctx.services.experiments.checkGuardrails();
      expect(done.map((d) => d.experiment.id)).toEqual([e.id]);
      const stopped = (await api("/api/admin/experiments/risky")).body;
      expect(stopped.status).toBe("stopped");
      expect(stopped.outcome).toMatchObject({ decision: "rollback", variant: null, auto: true, by: "system@svc.local" });
      expect(stopped.outcome.reason).toContain("Guardrail errors rose in variant treatment");
      expect(heard.map((h) => h.experiment.id)).toEqual([e.id]);
      const audit = (await auditOf(ts.store, ts.projectId, 1000)).find((a) => a.action === "experiment.stop" && a.subjectId === e.id);
      expect(audit).toMatchObject({ actorType: "system" });
      // Connectors hear the automatic rollback (an outbox event in the same transaction).
      const told = await ts.store.all<{ payload: string }>("SELECT payload FROM outbox_events WHERE type = 'experiment.rolled_back'");
      expect(told.map((t) => JSON.parse(t.payload))).toEqual([expect.objectContaining({ experimentId: e.id, name: "risky", reason: stopped.outcome.reason })]);
      const snap = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body;
      expect(snap.experiments.risky).toBeUndefined();
      // The healthy experiment of the same project keeps running.
      expect((await api("/api/admin/experiments/calm")).body.status).toBe("running");
      // A second round finds nothing more to do.
      expect(await ts.server.ctx.services.experiments.checkGuardrails()).toEqual([]);
    } finally {
      unhear();
    }
  });
});
