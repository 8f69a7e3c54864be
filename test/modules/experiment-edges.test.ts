import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { EventRow } from "../../src/lib/eventstore/types";
import { exposureEventName } from "../../src/sdk/experiments";
import { type TestServer, startTestServer } from "../helpers";
import { seededRandom as rng } from "../seeded-random";

// Issue 25, items 17–20: GET /results at the statistics' edges, end to end (events in the real event store, sums in
// SQL, statistics on top), on whichever engine the suite runs. Each experiment covers its own segments and is stopped
// at the end of its test, so they never overlap.

const DAY = 86_400_000;
const T0 = Math.floor(Date.now() / DAY) * DAY - 20 * DAY;
let now = T0;
let ts: TestServer;

const api = (path: string, init: { method?: string; body?: unknown } = {}) => ts.api(path, init);
const append = async (rows: EventRow[]) => {
  for (let i = 0; i < rows.length; i += 1000) await ts.server.ctx.services.analytics.append(rows.slice(i, i + 1000));
};

beforeAll(async () => {
  ts = await startTestServer({ alertsEveryMs: 0, experimentsEveryMs: 0, clock: () => now });
  expect((await ts.api("/api/admin/universes", { body: { name: "web" }, headers: { "x-project-id": ts.projectId } })).status).toBe(201);
  expect((await api("/api/admin/events", { body: { name: "order", properties: [{ name: "net", type: "number" }] } })).status).toBe(201);
  for (const body of [
    { name: "net-revenue", kind: "sum", event: "order", property: "net" },
    { name: "orders", kind: "count", event: "order" },
    { name: "buyers", kind: "unique", event: "order" },
  ]) {
    expect((await api("/api/admin/metrics", { body })).status).toBe(201);
  }
});
afterAll(() => ts.stop());

async function start(name: string, allocation: [number, number], primaryMetric: string, guardrailMetrics: string[] = []): Promise<string> {
  const created = await api("/api/admin/experiments", {
    body: { name, universe: "web", variants: [{ key: "control", weight: 1 }, { key: "treatment", weight: 1 }], allocation, primaryMetric, guardrailMetrics },
  });
  expect(created.status).toBe(201);
  expect((await api(`/api/admin/experiments/${name}/start`, { method: "POST" })).status).toBe(200);
  return created.body.id;
}

const exposure = (experimentId: string, unitId: string, variant: string, at: number): EventRow => ({ projectId: ts.projectId, name: exposureEventName(experimentId), ts: at, unitId, value: null, props: { variant } });
const order = (unitId: string, at: number, net: number): EventRow => ({ projectId: ts.projectId, name: "order", ts: at, unitId, value: null, props: { net } });
type Metric = { metric: { name: string }; arms: { variant: string; n: number; mean: number | null; sd: number | null }[]; treatments: any[] };
const metricOf = (body: { metrics: Metric[] }, name: string) => body.metrics.find((m) => m.metric.name === name)!;

describe("results at the edges (issue 25)", () => {
  test("17: a negative control mean (net revenue): the lift is (m_t − m_c)/|m_c|, positive when the treatment is higher, beside an increase", async () => {
    now = T0;
    const id = await start("refunds", [0, 2000], "net-revenue");
    const random = rng(17);
    const rows: EventRow[] = [];
    const nets: Record<string, number[]> = { control: [], treatment: [] };
    for (let i = 0; i < 800; i++) {
      const variant = i % 2 === 0 ? "control" : "treatment";
      const at = now + i * 1000;
      // Each unit: net −40 (control) or −30 (treatment) per unit, ± 20.
      const net = (variant === "control" ? -40 : -30) + Math.round((random() - 0.5) * 4000) / 100;
      nets[variant]!.push(net);
      rows.push(exposure(id, `r${i}`, variant, at), order(`r${i}`, at + 1000, net));
    }
    await append(rows);
    now = T0 + 8 * DAY;
    const res = await api("/api/admin/experiments/refunds/results");
    expect(res.status).toBe(200);
    expect(res.body.minimumReached).toBe(true);
    const m = metricOf(res.body, "net-revenue");
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const variance = (xs: number[]) => xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1);
    const [mc, mt] = [mean(nets.control!), mean(nets.treatment!)];
    expect(mc).toBeLessThan(0);
    const t = m.treatments[0];
    // By hand (gbstats' formulas): (m_t − m_c)/|m_c|, se² = v_t/(n_t·m_c²) + m_t²·v_c/(n_c·m_c⁴).
    const lift = (mt - mc) / Math.abs(mc);
    const se = Math.sqrt(variance(nets.treatment!) / (400 * mc ** 2) + (mt ** 2 * variance(nets.control!)) / (400 * mc ** 4));
    expect(lift).toBeGreaterThan(0.15);
    expect(t.frequentist.relative.estimate).toBeCloseTo(lift, 9);
    expect(t.frequentist.relative.se).toBeCloseTo(se, 9);
    expect(t.frequentist.relative.ci[0]).toBeGreaterThan(0);
    expect(t.frequentist.relative.ci[0]).toBeCloseTo(lift - t.frequentist.relative.se * 1.9631, 3);
    expect(t.bayesian.chanceToBeatControl).toBeGreaterThan(0.999);
    expect(t.bayesian.relative.estimate).toBeCloseTo(lift, 9);
    expect(t.bayesian.relative.credibleInterval[0]).toBeGreaterThan(0);
    expect(t.verdict).toBe("increase");
    expect((await api("/api/admin/experiments/refunds/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
  });

  test("18: exposures logged after the stop are not counted: the SRM check reads the analysed units, 300/300", async () => {
    now = T0;
    const id = await start("late", [2000, 4000], "orders");
    const rows: EventRow[] = [];
    for (let i = 0; i < 600; i++) rows.push(exposure(id, `l${i}`, i % 2 === 0 ? "control" : "treatment", now + i * 1000), order(`l${i}`, now + i * 1000 + 500, 1 + (i % 3)));
    await append(rows);
    now = T0 + DAY;
    expect((await api("/api/admin/experiments/late/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
    // Stale SDKs keep logging: 400 new units in the treatment, after the stop.
    const after: EventRow[] = [];
    for (let i = 0; i < 400; i++) after.push(exposure(id, `after${i}`, "treatment", now + 60_000 + i));
    await append(after);
    now = T0 + 2 * DAY;
    const res = await api("/api/admin/experiments/late/results");
    expect(res.status).toBe(200);
    expect(res.body.exposures.variants.map((v: { n: number }) => v.n)).toEqual([300, 300]);
    expect(res.body.exposures.total).toBe(600);
    expect(res.body.exposures.outside).toBe(400);
    expect(res.body.srm.flagged).toBe(false);
    expect(res.body.srm.pValue).toBe(1);
    expect(metricOf(res.body, "orders").arms.map((a) => a.n)).toEqual([300, 300]);
    expect(res.body.warnings.join("\n")).not.toContain("Sample ratio mismatch");
    expect(res.body.warnings.join("\n")).toContain("400 units first exposed outside the experiment's window");
  });

  test("19: a finite but huge value (2e154, whose square overflows) answers 200: what cannot be computed is null, with a warning", async () => {
    now = T0;
    const id = await start("huge", [4000, 6000], "net-revenue");
    const rows: EventRow[] = [];
    for (let i = 0; i < 40; i++) rows.push(exposure(id, `h${i}`, i % 2 === 0 ? "control" : "treatment", now + i * 1000), order(`h${i}`, now + i * 1000 + 500, 10 + (i % 5)));
    rows.push(order("h0", now + 5000, 2e154));
    await append(rows);
    now = T0 + DAY;
    const res = await api("/api/admin/experiments/huge/results");
    expect(res.status).toBe(200);
    const m = metricOf(res.body, "net-revenue");
    expect(m.arms[0]!.sd).toBeNull();
    expect(m.arms[0]!.mean).toBeCloseTo(2e154 / 20, -140);
    expect(m.arms[1]!.sd).toBeGreaterThan(0);
    const t = m.treatments[0];
    expect(t.frequentist.absolute).toBeNull();
    expect(t.frequentist.control.variance).toBeNull();
    expect(t.verdict).toBe("inconclusive");
    expect(res.body.warnings.join("\n")).toContain("net-revenue, treatment: no test: the control's values are too large for double precision");
    expect(JSON.stringify(res.body)).not.toMatch(/NaN|Infinity/);
    expect((await api("/api/admin/experiments/huge/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
  });

  test("20: values 1e9 ± 1 keep their spread through the store; zero conversions in an arm say why there is no test", async () => {
    now = T0;
    const id = await start("offset", [6000, 8000], "net-revenue", ["buyers"]);
    const rows: EventRow[] = [];
    for (let i = 0; i < 400; i++) {
      const variant = i % 2 === 0 ? "control" : "treatment";
      rows.push(exposure(id, `o${i}`, variant, now + i * 1000));
      // The control's units never buy; every treatment unit buys once, at 1e9 ± 1.
      if (variant === "treatment") rows.push(order(`o${i}`, now + i * 1000 + 500, 1e9 + (i % 4 === 1 ? 1 : -1)));
    }
    await append(rows);
    now = T0 + DAY;
    const res = await api("/api/admin/experiments/offset/results");
    expect(res.status).toBe(200);
    const revenue = metricOf(res.body, "net-revenue");
    // Treatment: 100 units at 1e9 + 1 and 100 at 1e9 − 1: sd √(200/199) (Σx² − (Σx)²/n gave 0 or noise).
    expect(revenue.arms[1]!.sd).toBeCloseTo(Math.sqrt(200 / 199), 6);
    expect(revenue.arms[0]!.sd).toBe(0);
    const warnings = res.body.warnings.join("\n");
    expect(warnings).toContain("net-revenue, treatment: no test: every unit of the control has the same value (0), so its variance is 0");
    expect(warnings).toContain("buyers, treatment: no fixed-horizon or sequential test: the control has no conversions (0 of 200 units)");
    const buyers = metricOf(res.body, "buyers").treatments[0];
    expect(buyers.frequentist.absolute).toBeNull();
    expect(buyers.sequential).toBeNull();
    expect(buyers.bayesian.chanceToBeatControl).toBeGreaterThan(0.999);
    expect((await api("/api/admin/experiments/offset/stop", { method: "POST", body: { decision: "rollback" } })).status).toBe(200);
  });
});
