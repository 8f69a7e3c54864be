/**
 * Experiment sums in the event store (`experimentStats`, `exposureCounts`;
 * src/lib/eventstore/types.ts), on every implementation: the embedded SQLite
 * store, PostgreSQL (when SVC_TEST_STORE names the test cluster), and the
 * spooling upstream over each. First a small experiment whose answers are
 * worked out by hand (duplicate and late-arriving exposures, the window, the
 * pre-period, filters, ratios, unique as 0/1), then a random one checked
 * against a plain TypeScript reference over the rows appended.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { PostgresEventStore } from "../../src/lib/eventstore/postgres";
import { SpoolingEventStore } from "../../src/lib/eventstore/spool";
import { SqliteEventStore } from "../../src/lib/eventstore/sqlite";
import { type EventRow, type EventStore, type ExperimentStatsQuery, type Measure, type PropertyFilter, type VariantStats, statsOfMany } from "../../src/lib/eventstore/types";
import { sampleCovariance, sampleVariance } from "../../src/modules/experiments/stats/moments";
import { exposureEventName } from "../../src/sdk/experiments";
import { TEST_PG_URL, dropStore, freshStoreUrl, tempDir } from "../helpers";
import { seededRandom as prng } from "../seeded-random";

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** A UTC midnight ten days ago (ms): recent, so no PostgreSQL partition is old enough to be dropped. */
const T0 = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;

/** `put` appends and (through a spool) drains; `settle` drains what concurrent puts may have left spooled. */
type Harness = { store: EventStore; put(rows: EventRow[]): Promise<void>; settle(): Promise<void>; close(): Promise<void> };

async function harness(engine: "sqlite" | "postgres", wrap: boolean): Promise<Harness> {
  const dir = tempDir("svc-exp-events-");
  const url = engine === "postgres" ? (await freshStoreUrl())! : undefined;
  const inner: EventStore = url ? new PostgresEventStore(url, { upstream: wrap }) : new SqliteEventStore(join(dir, "events.db"));
  const store: EventStore = wrap ? new SpoolingEventStore(inner, join(dir, "events-spool.db"), { drainEveryMs: 60_000 }) : inner;
  const settle = async () => {
    if (store instanceof SpoolingEventStore) await store.drain();
  };
  return {
    store,
    settle,
    put: async (rows) => {
      await store.append(rows);
      await settle();
    },
    close: () => store.close().then(() => dropStore(url)),
  };
}

const IMPLS = [
  { name: "sqlite", enabled: true, open: () => harness("sqlite", false) },
  { name: "spool over sqlite", enabled: true, open: () => harness("sqlite", true) },
  { name: "postgres", enabled: TEST_PG_URL !== "", open: () => harness("postgres", false) },
  { name: "spool over postgres", enabled: TEST_PG_URL !== "", open: () => harness("postgres", true) },
];

const newProject = () => `prj_${crypto.randomUUID().slice(0, 8)}`;
const newExperiment = () => `exp_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;

const exposure = (projectId: string, experimentId: string, unitId: string | null, ts: number, variant: unknown): EventRow => ({
  projectId,
  name: exposureEventName(experimentId),
  ts,
  unitId,
  value: null,
  props: variant === undefined ? null : { variant: variant as string },
});
const event = (projectId: string, name: string, unitId: string | null, ts: number, value: number | null = null, props: EventRow["props"] = null): EventRow => ({
  projectId,
  name,
  ts,
  unitId,
  value,
  props,
});

const count = (event: string, filters: PropertyFilter[] = []): Measure => ({ kind: "count", event, filters });
const unique = (event: string, filters: PropertyFilter[] = []): Measure => ({ kind: "unique", event, filters });
const sum = (event: string, property?: string, filters: PropertyFilter[] = []): Measure => ({ kind: "sum", event, property, filters });

/**
 * A VariantStats in a form that does not depend on the shifts the store chose (VariantStats: its second-order sums
 * are about shifts): units, the plain sums, and the second-order sums about the arm's own means.
 */
function centred(v: VariantStats): Record<string, number> {
  const n = v.n;
  const d = { x: v.sumX - n * (v.shiftX ?? 0), y: (v.sumY ?? 0) - n * (v.shiftY ?? 0), p: (v.sumPre ?? 0) - n * (v.shiftPre ?? 0) };
  const about = (sum: number, a: number, b: number) => (n > 0 ? sum - (a * b) / n : sum);
  const out: Record<string, number> = { n, sumX: v.sumX, mXX: about(v.sumXX, d.x, d.x) };
  if (v.sumY !== undefined) Object.assign(out, { sumY: v.sumY, mYY: about(v.sumYY!, d.y, d.y), mXY: about(v.sumXY!, d.x, d.y) });
  if (v.sumPre !== undefined) Object.assign(out, { sumPre: v.sumPre, mPP: about(v.sumPreSq!, d.p, d.p), mXP: about(v.sumXPre!, d.x, d.p) });
  return out;
}

/** Compares every field (centred: see above) to 1e-9 relative to the sums' scale (sums of doubles may be added in another order). */
function expectStats(actual: VariantStats[], expected: VariantStats[]): void {
  expect(actual.map((v) => v.variant)).toEqual(expected.map((v) => v.variant));
  actual.forEach((a, i) => {
    const e = expected[i]!;
    const [ca, ce] = [centred(a), centred(e)];
    expect(Object.keys(ca).sort()).toEqual(Object.keys(ce).sort());
    const scale = Math.max(1, ...[e.sumXX, e.sumYY ?? 0, e.sumPreSq ?? 0].map(Math.abs));
    for (const key of Object.keys(ce)) {
      const want = ce[key]!;
      const got = ca[key]!;
      if (Math.abs(got - want) > 1e-9 * Math.max(Math.abs(want), key.startsWith("m") ? scale : 1)) throw new Error(`${e.variant}.${key}: got ${got}, expected ${want}`);
    }
  });
}

/** What a filter means (as the series reference does): the property holds a value of the filter's type, compared. */
function matches(props: EventRow["props"], f: PropertyFilter): boolean {
  const v = props?.[f.property];
  if (v === undefined || typeof v !== typeof f.value) return false;
  const a = typeof v === "boolean" ? Number(v) : v;
  const b = typeof f.value === "boolean" ? Number(f.value) : f.value;
  return { eq: a === b, neq: a !== b, gt: a > b, gte: a >= b, lt: a < b, lte: a <= b }[f.op];
}

/** The definition of ExperimentStatsQuery in plain TypeScript, over the rows appended. */
function reference(rows: EventRow[], q: ExperimentStatsQuery): VariantStats[] {
  const name = exposureEventName(q.experimentId);
  const firsts = new Map<string, { ts: number; variant: string }>();
  for (const r of rows) {
    if (r.projectId !== q.projectId || r.name !== name || r.unitId === null || typeof r.props?.variant !== "string") continue;
    const seen = firsts.get(r.unitId);
    const variant = r.props.variant;
    if (!seen || r.ts < seen.ts || (r.ts === seen.ts && variant < seen.variant)) firsts.set(r.unitId, { ts: r.ts, variant });
  }
  const units = new Map<string, { variant: string; first: number; x: number; y: number; p: number }>();
  for (const [unit, f] of firsts) if (f.ts >= q.from && f.ts < q.to) units.set(unit, { variant: f.variant, first: f.ts, x: 0, y: 0, p: 0 });
  const contribution = (m: Measure, r: EventRow): number | null => {
    // A name ending in * is a prefix (namePrefix in src/lib/eventstore/plan.ts: `$error:*`, every tracked error).
    const named = m.event.length > 1 && m.event.endsWith("*") ? r.name.startsWith(m.event.slice(0, -1)) : r.name === m.event;
    if (!named || !m.filters.every((f) => matches(r.props, f))) return null;
    if (m.kind === "count" || m.kind === "unique") return 1;
    if (m.property === undefined) return r.value ?? 0;
    const v = r.props?.[m.property];
    return typeof v === "number" ? v : 0;
  };
  const add = (m: Measure, current: number, v: number) => (m.kind === "unique" ? 1 : current + v);
  const [mx, my] = q.measures;
  for (const r of rows) {
    if (r.projectId !== q.projectId || r.unitId === null) continue;
    const u = units.get(r.unitId);
    if (!u || r.ts >= q.to) continue;
    const post = r.ts >= u.first;
    const pre = q.preMs !== undefined && r.ts < u.first && r.ts >= u.first - q.preMs;
    const vx = contribution(mx, r);
    if (vx !== null && post) u.x = add(mx, u.x, vx);
    if (vx !== null && pre) u.p = add(mx, u.p, vx);
    const vy = my ? contribution(my, r) : null;
    if (my && vy !== null && post) u.y = add(my, u.y, vy);
  }
  const out = new Map<string, VariantStats>();
  for (const u of units.values()) {
    let s = out.get(u.variant);
    if (!s) {
      s = { variant: u.variant, n: 0, sumX: 0, sumXX: 0 };
      if (my) Object.assign(s, { sumY: 0, sumYY: 0, sumXY: 0 });
      if (q.preMs !== undefined) Object.assign(s, { sumPre: 0, sumPreSq: 0, sumXPre: 0 });
      out.set(u.variant, s);
    }
    s.n++;
    s.sumX += u.x;
    s.sumXX += u.x * u.x;
    if (my) {
      s.sumY! += u.y;
      s.sumYY! += u.y * u.y;
      s.sumXY! += u.x * u.y;
    }
    if (q.preMs !== undefined) {
      s.sumPre! += u.p;
      s.sumPreSq! += u.p * u.p;
      s.sumXPre! += u.x * u.p;
    }
  }
  return [...out.values()].sort((a, b) => (a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : 0));
}

for (const impl of IMPLS) {
  describe.skipIf(!impl.enabled)(`experiment sums: ${impl.name}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await impl.open();
    });
    afterAll(async () => {
      await h?.close();
    });

    /**
     * The hand-worked experiment. Window [T0, T0+10h).
     * Exposures: u1 control at +1h (again as treatment at +2h: a duplicate, later);
     * u2 treatment at +3h, then (a later append) control at +1h: control at +1h;
     * u3 treatment at +2h; u4 control at +5h, nothing after; u5 treatment at −1h
     * (before the window) and +3h: not counted; u6 control at +10h (= to): not counted;
     * an exposure without variant (u7) or without unit: ignored; u1 in another
     * experiment and another project: apart.
     */
    async function handWorked(): Promise<{ p: string; x: string; q: (measures: ExperimentStatsQuery["measures"], preMs?: number) => ExperimentStatsQuery }> {
      const p = newProject();
      const x = newExperiment();
      const other = newExperiment();
      const at = (h: number) => T0 + h * HOUR;
      await h.put([
        exposure(p, x, "u1", at(1), "control"),
        exposure(p, x, "u1", at(2), "treatment"),
        exposure(p, x, "u2", at(3), "treatment"),
        exposure(p, x, "u3", at(2), "treatment"),
        exposure(p, x, "u4", at(5), "control"),
        exposure(p, x, "u5", at(-1), "treatment"),
        exposure(p, x, "u6", at(10), "control"),
        exposure(p, x, "u7", at(1), undefined),
        exposure(p, x, "u7", at(1), 3),
        exposure(p, x, null, at(1), "control"),
        exposure(p, other, "u1", at(0), "treatment"),
        exposure("prj_other", x, "u1", at(0), "treatment"),
        // purchases: value, plan, amount
        event(p, "purchase", "u1", at(-1.5), 50, { plan: "pro" }), // before the pre-period (2h) of u1
        event(p, "purchase", "u1", at(-0.5), 1, { plan: "free" }), // u1 pre
        event(p, "purchase", "u1", at(0.5), 10, { plan: "free" }), // u1 pre
        event(p, "purchase", "u1", at(1), 5, { plan: "pro", amount: 2.5 }), // u1, at its first exposure: counts
        event(p, "purchase", "u1", at(4), 7, { plan: "free", amount: "x" }), // u1
        event(p, "purchase", "u1", at(10), 1000, { plan: "pro", amount: 1000 }), // at `to`: out
        event(p, "purchase", "u2", at(1.5), 3, { plan: "free", amount: 1 }), // u2
        event(p, "purchase", "u2", at(2), 4, { plan: "pro" }), // u2
        event(p, "purchase", "u3", at(1), 100, { plan: "pro", amount: 9 }), // u3 pre
        event(p, "purchase", "u3", at(3), null, { plan: "free", amount: 4 }), // u3
        event(p, "purchase", "u4", at(4), 8, { plan: "pro" }), // u4 pre
        event(p, "purchase", "u5", at(4), 70, { plan: "pro" }), // not an exposed unit of the window
        event(p, "purchase", "nobody", at(4), 70, { plan: "pro" }),
        event(p, "purchase", null, at(4), 70, { plan: "pro" }),
        event("prj_other", "purchase", "u1", at(4), 70, { plan: "pro" }),
        event(p, "refund", "u1", at(4), 70, { plan: "pro" }),
        event(p, "visit", "u1", at(2), null),
        event(p, "visit", "u1", at(3), null),
        event(p, "visit", "u3", at(2.5), null),
        event(p, "visit", "u3", at(1), null), // before u3's first exposure
        event(p, "visit", "u1", at(10), null), // at `to`
      ]);
      // Arrives later, but is earlier: u2's first exposure is this one.
      await h.put([exposure(p, x, "u2", at(1), "control")]);
      return { p, x, q: (measures, preMs) => ({ projectId: p, experimentId: x, from: T0, to: at(10), measures, ...(preMs === undefined ? {} : { preMs }) }) };
    }

    test("count, sum of value, sum of a property, unique: worked by hand", async () => {
      const { q } = await handWorked();
      const c = await h.store.experimentStats(q([count("purchase")]));
      // control: u1 2, u2 2, u4 0; treatment: u3 1.
      expectStats(c.variants, [
        { variant: "control", n: 3, sumX: 4, sumXX: 8 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1 },
      ]);
      expect(c.sql).toContain("experiment_exposures");
      expect(c.sql).not.toContain("purchase");
      expect(c.sql).not.toContain("prj_");
      // value: u1 5+7, u2 3+4, u4 0; u3 null → 0.
      expectStats((await h.store.experimentStats(q([sum("purchase")]))).variants, [
        { variant: "control", n: 3, sumX: 19, sumXX: 193 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0 },
      ]);
      // amount: u1 2.5 (and "x" as 0), u2 1, u4 0; u3 4.
      expectStats((await h.store.experimentStats(q([sum("purchase", "amount")]))).variants, [
        { variant: "control", n: 3, sumX: 3.5, sumXX: 7.25 },
        { variant: "treatment", n: 1, sumX: 4, sumXX: 16 },
      ]);
      // unique: u1 1, u2 1, u4 0; u3 1.
      expectStats((await h.store.experimentStats(q([unique("purchase")]))).variants, [
        { variant: "control", n: 3, sumX: 2, sumXX: 2 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1 },
      ]);
      // No such event: every unit is 0, still counted.
      expectStats((await h.store.experimentStats(q([count("nothing")]))).variants, [
        { variant: "control", n: 3, sumX: 0, sumXX: 0 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0 },
      ]);
    });

    test("filters of the measure apply", async () => {
      const { q } = await handWorked();
      // plan = pro: u1 one (at +1h), u2 one; u3 none after its exposure.
      expectStats((await h.store.experimentStats(q([count("purchase", [{ property: "plan", op: "eq", value: "pro" }])]))).variants, [
        { variant: "control", n: 3, sumX: 2, sumXX: 2 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0 },
      ]);
      // value-free numeric filter on amount ≥ 1: u1 2.5, u2 1; u3 4 ("x" is text: no match).
      expectStats((await h.store.experimentStats(q([sum("purchase", undefined, [{ property: "amount", op: "gte", value: 1 }])]))).variants, [
        { variant: "control", n: 3, sumX: 8, sumXX: 34 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0 },
      ]);
      expectStats((await h.store.experimentStats(q([unique("purchase", [{ property: "plan", op: "neq", value: "pro" }])]))).variants, [
        { variant: "control", n: 3, sumX: 2, sumXX: 2 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1 },
      ]);
    });

    test("pre-period (CUPED covariate) over [first − preMs, first)", async () => {
      const { q } = await handWorked();
      // preMs 2h. count: X as before; pre: u1 2 (−0.5h, +0.5h; not −1.5h), u2 0, u4 1 (+4h); u3 1 (+1h).
      expectStats((await h.store.experimentStats(q([count("purchase")], 2 * HOUR))).variants, [
        { variant: "control", n: 3, sumX: 4, sumXX: 8, sumPre: 3, sumPreSq: 5, sumXPre: 4 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1, sumPre: 1, sumPreSq: 1, sumXPre: 1 },
      ]);
      // sum of value: pre u1 1+10, u2 0, u4 8; u3 100. X: u1 12, u2 7, u4 0; u3 0.
      expectStats((await h.store.experimentStats(q([sum("purchase")], 2 * HOUR))).variants, [
        { variant: "control", n: 3, sumX: 19, sumXX: 193, sumPre: 19, sumPreSq: 121 + 64, sumXPre: 132 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0, sumPre: 100, sumPreSq: 10000, sumXPre: 0 },
      ]);
      // A pre-period of 3h reaches u1's purchase at −1.5h.
      const wide = (await h.store.experimentStats(q([sum("purchase")], 3 * HOUR))).variants;
      expect(wide[0]!.sumPre).toBe(69);
      // preMs 0: an empty pre-period, still answered.
      expectStats((await h.store.experimentStats(q([unique("purchase")], 0))).variants, [
        { variant: "control", n: 3, sumX: 2, sumXX: 2, sumPre: 0, sumPreSq: 0, sumXPre: 0 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1, sumPre: 0, sumPreSq: 0, sumXPre: 0 },
      ]);
    });

    test("ratios: two measures, of two event names or of one", async () => {
      const { q } = await handWorked();
      // value of purchase / visits: Y u1 2, u2 0, u4 0; u3 1 (not the one before its exposure, not at `to`).
      expectStats((await h.store.experimentStats(q([sum("purchase"), count("visit")]))).variants, [
        { variant: "control", n: 3, sumX: 19, sumXX: 193, sumY: 2, sumYY: 4, sumXY: 24 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0, sumY: 1, sumYY: 1, sumXY: 0 },
      ]);
      // value per purchase (one name).
      expectStats((await h.store.experimentStats(q([sum("purchase"), count("purchase")]))).variants, [
        { variant: "control", n: 3, sumX: 19, sumXX: 193, sumY: 4, sumYY: 8, sumXY: 38 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0, sumY: 1, sumYY: 1, sumXY: 0 },
      ]);
      // Each measure's own filters: pro purchases / all purchases.
      expectStats((await h.store.experimentStats(q([count("purchase", [{ property: "plan", op: "eq", value: "pro" }]), count("purchase")]))).variants, [
        { variant: "control", n: 3, sumX: 2, sumXX: 2, sumY: 4, sumYY: 8, sumXY: 4 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0, sumY: 1, sumYY: 1, sumXY: 0 },
      ]);
      // With a pre-period: the covariate is X's (value of purchase) before the exposure.
      expectStats((await h.store.experimentStats(q([sum("purchase"), count("visit")], 2 * HOUR))).variants, [
        { variant: "control", n: 3, sumX: 19, sumXX: 193, sumY: 2, sumYY: 4, sumXY: 24, sumPre: 19, sumPreSq: 185, sumXPre: 132 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0, sumY: 1, sumYY: 1, sumXY: 0, sumPre: 100, sumPreSq: 10000, sumXPre: 0 },
      ]);
    });

    test("the window: units first exposed in [from, to) only", async () => {
      const { q, x, p } = await handWorked();
      // From +1.5h: u1 and u2 (first at +1h) are out; u3 (+2h) and u4 (+5h) in.
      const late = { ...q([count("purchase")]), from: T0 + 1.5 * HOUR };
      expectStats((await h.store.experimentStats(late)).variants, [
        { variant: "control", n: 1, sumX: 0, sumXX: 0 },
        { variant: "treatment", n: 1, sumX: 1, sumXX: 1 },
      ]);
      // To +3h: u4 out; u1's purchase at +4h out; u3's at +3h out.
      const early = { ...q([count("purchase")]), to: T0 + 3 * HOUR };
      expectStats((await h.store.experimentStats(early)).variants, [
        { variant: "control", n: 2, sumX: 3, sumXX: 5 },
        { variant: "treatment", n: 1, sumX: 0, sumXX: 0 },
      ]);
      // Another experiment, another project, or no exposures: nothing.
      expect((await h.store.experimentStats({ ...q([count("purchase")]), experimentId: newExperiment() })).variants).toEqual([]);
      expect((await h.store.experimentStats({ ...q([count("purchase")]), projectId: newProject() })).variants).toEqual([]);
      expect((await h.store.experimentStats({ ...q([count("purchase")]), experimentId: x, projectId: p, to: T0 })).variants).toEqual([]);
    });

    test("exposureCounts: first exposure per unit, whatever the window", async () => {
      const { p, x } = await handWorked();
      // control: u1, u2, u4, u6; treatment: u3, u5. First at −1h (u5), last at +10h (u6).
      expect(await h.store.exposureCounts(p, x)).toEqual({
        variants: [
          { variant: "control", n: 4 },
          { variant: "treatment", n: 2 },
        ],
        firstAt: T0 - HOUR,
        lastAt: T0 + 10 * HOUR,
      });
      expect(await h.store.exposureCounts(p, newExperiment())).toEqual({ variants: [], firstAt: null, lastAt: null });
      expect(await h.store.exposureCounts(newProject(), x)).toEqual({ variants: [], firstAt: null, lastAt: null });
    });

    test("exposureCounts with a window: the units first exposed in it, as experimentStats counts them; the others apart (issue 25, item 18)", async () => {
      const { p, x, q } = await handWorked();
      // In [T0, T0 + 10h): control u1, u2 (+1h), u4 (+5h); treatment u3 (+2h). Outside: u5 (−1h), u6 (+10h).
      expect(await h.store.exposureCounts(p, x, { from: T0, to: T0 + 10 * HOUR })).toEqual({
        variants: [
          { variant: "control", n: 3 },
          { variant: "treatment", n: 1 },
        ],
        firstAt: T0 + HOUR,
        lastAt: T0 + 5 * HOUR,
        outside: 2,
      });
      const analysed = (await h.store.experimentStats(q([count("purchase")]))).variants.map((v) => ({ variant: v.variant, n: v.n }));
      expect((await h.store.exposureCounts(p, x, { from: T0, to: T0 + 10 * HOUR })).variants).toEqual(analysed);
      // A variant whose units are all outside is not listed.
      expect(await h.store.exposureCounts(p, x, { from: T0 + 6 * HOUR, to: T0 + 11 * HOUR })).toEqual({ variants: [{ variant: "control", n: 1 }], firstAt: T0 + 10 * HOUR, lastAt: T0 + 10 * HOUR, outside: 5 });
      expect(await h.store.exposureCounts(p, newExperiment(), { from: T0, to: T0 + HOUR })).toEqual({ variants: [], firstAt: null, lastAt: null, outside: 0 });
    });

    test("second-order sums about the variant's mean: values 1e9 ± 1 keep their spread, with a pre-period and a ratio too (issue 25, item 20)", async () => {
      const p = newProject();
      const x = newExperiment();
      const rows: EventRow[] = [];
      const values: Record<string, { x: number; p: number; y: number }[]> = { a: [], b: [], c: [] };
      for (let i = 0; i < 300; i++) {
        const variant = ["a", "b", "c"][i % 3]!;
        const at = T0 + HOUR + i * 1000;
        rows.push(exposure(p, x, `u${i}`, at, variant));
        // a and b: every unit has 1e9 ± 1 (and a pre-period of 5e8 ± 1); c: a third have nothing (zeros count).
        if (variant === "c" && i % 9 === 2) {
          values[variant]!.push({ x: 0, p: 0, y: 0 });
          continue;
        }
        const v = 1e9 + (i % 2 === 0 ? 1 : -1) + (variant === "b" ? 0.5 : 0);
        const pre = 5e8 + (i % 4 < 2 ? 1 : -1);
        rows.push(event(p, "purchase", `u${i}`, at + 10, v), event(p, "purchase", `u${i}`, at - 10, pre));
        values[variant]!.push({ x: v, p: pre, y: 1 });
      }
      await h.put(rows);
      const q = (measures: ExperimentStatsQuery["measures"], preMs?: number): ExperimentStatsQuery => ({ projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures, ...(preMs === undefined ? {} : { preMs }) });
      const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;
      const co = (xs: number[], ys: number[]) => xs.reduce((s, v, i) => s + (v - mean(xs)) * (ys[i]! - mean(ys)), 0) / (xs.length - 1);
      const plain = (await h.store.experimentStats(q([sum("purchase")], HOUR))).variants;
      const ratio = (await h.store.experimentStats(q([sum("purchase"), count("purchase")]))).variants;
      for (const v of ["a", "b", "c"]) {
        const units = values[v]!;
        const xs = units.map((u) => u.x);
        const ps = units.map((u) => u.p);
        const s = plain.find((r) => r.variant === v)!;
        expect(s.n).toBe(100);
        const close = (got: number, want: number) => expect(Math.abs(got - want)).toBeLessThan(1e-6 * Math.max(1, Math.abs(want)));
        close(sampleVariance(s.n, s.sumX, s.sumXX, s.shiftX), co(xs, xs));
        close(sampleVariance(s.n, s.sumPre!, s.sumPreSq!, s.shiftPre), co(ps, ps));
        close(sampleCovariance(s.n, s.sumX, s.sumPre!, s.sumXPre!, s.shiftX, s.shiftPre), co(xs, ps));
        const r = ratio.find((row) => row.variant === v)!;
        close(sampleVariance(r.n, r.sumX, r.sumXX, r.shiftX), co(xs, xs));
        close(sampleCovariance(r.n, r.sumX, r.sumY!, r.sumXY!, r.shiftX, r.shiftY), co(xs, units.map((u) => u.y)));
      }
      // The arms' spreads: a and b about 1 (not 0, not noise), c dominated by its zeros.
      expect(sampleVariance(plain[0]!.n, plain[0]!.sumX, plain[0]!.sumXX, plain[0]!.shiftX)).toBeCloseTo(100 / 99, 6);
    });

    test("a value whose square overflows double precision: the sums answer, not an error (issue 25, item 19)", async () => {
      const p = newProject();
      const x = newExperiment();
      const rows: EventRow[] = [];
      for (let i = 0; i < 10; i++) rows.push(exposure(p, x, `u${i}`, T0 + HOUR + i, "a"), event(p, "purchase", `u${i}`, T0 + 2 * HOUR, i === 0 ? 2e154 : 10));
      await h.put(rows);
      const [a] = (await h.store.experimentStats({ projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures: [sum("purchase")] })).variants;
      expect(a!.n).toBe(10);
      expect(a!.sumX).toBeCloseTo(2e154, -140);
      expect(Number.isFinite(a!.sumXX)).toBe(false);
    });

    test("exposures at the same ms: the smaller variant, whatever the arrival order or batch", async () => {
      const p = newProject();
      const [a, b, c] = [newExperiment(), newExperiment(), newExperiment()];
      const t = T0 + HOUR;
      await h.put([exposure(p, a, "u", t, "b"), exposure(p, a, "u", t, "a"), exposure(p, b, "u", t, "a"), exposure(p, c, "u", t, "b")]);
      await h.put([exposure(p, b, "u", t, "b"), exposure(p, c, "u", t, "a"), exposure(p, c, "u", t + 1, "0")]);
      for (const e of [a, b, c]) expect((await h.store.exposureCounts(p, e)).variants).toEqual([{ variant: "a", n: 1 }]);
      // Several appends in flight at once (one group commit or several): the same answer.
      const d = newExperiment();
      await Promise.all(["d", "c", "b", "a", "e"].map((v, i) => h.put([exposure(p, d, "u", t + (i === 3 ? 0 : 5), v)])));
      await h.settle();
      expect(await h.store.exposureCounts(p, d)).toEqual({ variants: [{ variant: "a", n: 1 }], firstAt: t, lastAt: t });
    });

    test("prune drops that project's exposures first exposed before rawBefore", async () => {
      const p = newProject();
      const other = newProject();
      const x = newExperiment();
      await h.put([exposure(p, x, "old", T0, "control"), exposure(p, x, "new", T0 + 2 * HOUR, "control"), exposure(other, x, "old", T0, "control")]);
      await h.store.prune({ projectId: p, rawBefore: T0 + HOUR });
      expect(await h.store.exposureCounts(p, x)).toEqual({ variants: [{ variant: "control", n: 1 }], firstAt: T0 + 2 * HOUR, lastAt: T0 + 2 * HOUR });
      expect((await h.store.exposureCounts(other, x)).variants).toEqual([{ variant: "control", n: 1 }]);
    });

    test("a random experiment matches the TypeScript reference, every kind of measure", async () => {
      const rand = prng(impl.name.length * 7919 + 13);
      const p = newProject();
      const x = newExperiment();
      const from = T0 + 6 * HOUR;
      const to = from + 3 * DAY;
      const span = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
      const variants = ["control", "green", "blue"];
      const plans = ["free", "pro", "team"];
      const rows: EventRow[] = [];
      const unit = () => `u${Math.floor(rand() * 400)}`;
      for (let i = 0; i < 900; i++) {
        // Exposures from before the window to after it; some units get several, some in other variants.
        const r = rand();
        if (r < 0.02) rows.push(exposure(p, x, unit(), span(from - 6 * HOUR, to + DAY), undefined));
        else rows.push(exposure(p, x, unit(), r < 0.05 ? from + Math.floor(rand() * 3) * HOUR : span(from - 6 * HOUR, to + DAY), variants[Math.floor(rand() * 3)]));
      }
      for (let i = 0; i < 4000; i++) {
        const name = rand() < 0.6 ? "purchase" : rand() < 0.8 ? "visit" : "other";
        const amount = rand() < 0.6 ? Math.round(rand() * 10000) / 100 - 20 : rand() < 0.5 ? "n/a" : undefined;
        const props: Record<string, string | number | boolean> = { plan: plans[Math.floor(rand() * 3)]!, ok: rand() < 0.5 };
        if (amount !== undefined) props.amount = amount;
        rows.push(event(rand() < 0.97 ? p : "prj_noise", name, rand() < 0.98 ? unit() : null, span(from - 3 * DAY, to + DAY), rand() < 0.8 ? Math.round(rand() * 100000) / 1000 : null, rand() < 0.95 ? props : null));
      }
      // Shuffled, in several appends (some concurrently): first exposures arrive in any order.
      for (let i = rows.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [rows[i], rows[j]] = [rows[j]!, rows[i]!];
      }
      const chunks: EventRow[][] = [];
      for (let i = 0; i < rows.length; i += 500) chunks.push(rows.slice(i, i + 500));
      await h.put(chunks[0]!);
      await Promise.all(chunks.slice(1, 4).map((c) => h.put(c)));
      await h.settle();
      for (const c of chunks.slice(4)) await h.put(c);

      const pro: PropertyFilter = { property: "plan", op: "eq", value: "pro" };
      const cheap: PropertyFilter = { property: "amount", op: "lt", value: 30 };
      const ok: PropertyFilter = { property: "ok", op: "eq", value: true };
      const cases: { measures: ExperimentStatsQuery["measures"]; preMs?: number }[] = [
        { measures: [count("purchase")] },
        { measures: [sum("purchase")] },
        { measures: [sum("purchase", "amount")], preMs: DAY },
        { measures: [unique("visit")], preMs: 2 * DAY },
        { measures: [count("purchase", [pro, ok])], preMs: 12 * HOUR },
        { measures: [sum("purchase", "amount", [cheap])] },
        { measures: [sum("purchase"), count("visit")] },
        { measures: [sum("purchase", "amount", [pro]), count("purchase")], preMs: DAY },
        { measures: [unique("purchase"), unique("visit", [ok])], preMs: DAY },
        { measures: [count("other"), sum("visit")] },
      ];
      let units = 0;
      for (const c of cases) {
        const q: ExperimentStatsQuery = { projectId: p, experimentId: x, from, to, measures: c.measures, ...(c.preMs === undefined ? {} : { preMs: c.preMs }) };
        const want = reference(rows, q);
        expect(want.length).toBe(3);
        units = want.reduce((n, v) => n + v.n, 0);
        expectStats((await h.store.experimentStats(q)).variants, want);
      }
      expect(units).toBeGreaterThan(200);
      // exposureCounts: every first exposure, in or out of the window.
      const all = reference(rows, { projectId: p, experimentId: x, from: 0, to: Number.MAX_SAFE_INTEGER, measures: [count("none")] });
      const counts = await h.store.exposureCounts(p, x);
      expect(counts.variants).toEqual(all.map((v) => ({ variant: v.variant, n: v.n })));
      const times = rows.filter((r) => r.projectId === p && r.name === exposureEventName(x) && typeof r.props?.variant === "string").map((r) => r.ts);
      expect(counts.firstAt).toBe(Math.min(...times));
    });

    test("many experiments at once (statsOfMany, the rollout monitor's read) answer what each does alone", async () => {
      const rand = prng(impl.name.length * 104729 + 7);
      const p = newProject();
      const experiments = [newExperiment(), newExperiment(), newExperiment(), newExperiment()];
      const to = T0 + 2 * DAY;
      const starts = [T0, T0 + 6 * HOUR, T0 + DAY, T0 + 30 * HOUR];
      const span = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
      const unit = () => `u${Math.floor(rand() * 300)}`;
      const rows: EventRow[] = [];
      // Every unit may be in every experiment (as in a project's rollouts), some exposures before a window or after `to`.
      for (let i = 0; i < 1200; i++) {
        const k = Math.floor(rand() * experiments.length);
        rows.push(exposure(p, experiments[k]!, unit(), span(starts[k]! - 6 * HOUR, to + HOUR), rand() < 0.5 ? "old" : "new"));
      }
      const names = ["purchase", "$error:a1", "$error:b2", "$errorless", "visit"];
      for (let i = 0; i < 5000; i++) {
        const props = { plan: rand() < 0.5 ? "pro" : "free" };
        rows.push(event(rand() < 0.97 ? p : "prj_noise", names[Math.floor(rand() * names.length)]!, rand() < 0.98 ? unit() : null, span(T0 - DAY, to + HOUR), Math.round(rand() * 1000) / 10, props));
      }
      for (let i = 0; i < rows.length; i += 700) await h.put(rows.slice(i, i + 700));

      const pro: PropertyFilter = { property: "plan", op: "eq", value: "pro" };
      const metrics: { measures: ExperimentStatsQuery["measures"]; experimentIds: string[] }[] = [
        { measures: [count("$error:*")], experimentIds: experiments },
        { measures: [sum("purchase", undefined, [pro])], experimentIds: [experiments[1]!, experiments[3]!] },
        { measures: [unique("visit")], experimentIds: [experiments[0]!] },
        { measures: [sum("purchase"), count("visit")], experimentIds: experiments.slice(0, 3) },
        { measures: [count("purchase")], experimentIds: [] },
      ];
      const windows = experiments.map((experimentId, k) => ({ experimentId, from: starts[k]! }));
      const answers = await statsOfMany(h.store, { projectId: p, to, experiments: windows, metrics });
      expect(answers.length).toBe(metrics.length);
      metrics.forEach((m, i) => {
        const answer = answers[i]!;
        if (answer instanceof Error) throw answer;
        expect([...answer.keys()].sort()).toEqual([...m.experimentIds].sort());
        for (const id of m.experimentIds) {
          const want = reference(rows, { projectId: p, experimentId: id, from: starts[experiments.indexOf(id)]!, to, measures: m.measures });
          expect(want.length).toBe(2);
          expectStats(answer.get(id)!, want);
        }
      });
    });
  });
}

describe("experiment sums: SqliteEventStore specifics", () => {
  test("a file made before the kept exposure counts gets them when opened, counted from its exposures, and they move with later exposures", async () => {
    const path = join(tempDir("svc-exp-counts-"), "events.db");
    const p = newProject();
    const x = newExperiment();
    const rows: EventRow[] = [];
    for (let i = 0; i < 300; i++) rows.push(exposure(p, x, `u${i % 120}`, T0 + ((i * 7919) % 5000) * 1000, i % 3 === 0 ? "new" : "old"));
    let store = new SqliteEventStore(path);
    await store.append(rows.slice(0, 200));
    await store.close();
    // As an older build left it: no counts table, no triggers.
    const raw = new Database(path);
    for (const t of ["insert", "update", "delete"]) raw.run(`DROP TRIGGER experiment_exposures_counted_${t}`);
    raw.run("DROP TABLE experiment_exposure_counts");
    raw.close();
    store = new SqliteEventStore(path);
    try {
      await store.append(rows.slice(200));
      const measures: [Measure] = [count("none")];
      const [answer] = await statsOfMany(store, { projectId: p, to: T0 + DAY, experiments: [{ experimentId: x, from: T0 + 1_000_000 }], metrics: [{ measures, experimentIds: [x] }] });
      if (answer instanceof Error) throw answer;
      expectStats(answer.get(x)!, reference(rows, { projectId: p, experimentId: x, from: T0 + 1_000_000, to: T0 + DAY, measures }));
      const kept = new Database(path, { readonly: true });
      const total = (kept.query("SELECT SUM(n) AS n FROM experiment_exposure_counts WHERE experiment_id = ?").get(x) as { n: number }).n;
      kept.close();
      expect(total).toBe(120);
    } finally {
      await store.close();
    }
  });

  /** Exposures and purchases over units with every kind of id: empty, one character, astral, long. */
  function oddRows(p: string, x: string): EventRow[] {
    const units = ["", "a", "7", "ü", "😀", "u-1", "u-2", "z".repeat(200), "\u0000x"];
    const rows: EventRow[] = [];
    units.forEach((u, i) => {
      rows.push(exposure(p, x, u, T0 + i * 1000, i % 2 ? "b" : "a"));
      for (let k = 0; k <= i % 3; k++) rows.push(event(p, "purchase", u, T0 + HOUR + k, i + k));
    });
    return rows;
  }

  test("an in-memory store answers on its own connection, the same as the reference", async () => {
    const store = new SqliteEventStore(":memory:");
    try {
      const p = newProject();
      const x = newExperiment();
      const rows = oddRows(p, x);
      await store.append(rows);
      const q: ExperimentStatsQuery = { projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures: [sum("purchase"), count("purchase")], preMs: HOUR };
      const got = await store.experimentStats(q);
      expectStats(got.variants, reference(rows, q));
      expect(got.sql).not.toContain("unicode");
      expect((await store.exposureCounts(p, x)).variants).toEqual([
        { variant: "a", n: 5 },
        { variant: "b", n: 4 },
      ]);
    } finally {
      await store.close();
    }
  });

  test("on a file, the units are split over the workers and every unit counts once, whatever its id", async () => {
    const dir = tempDir("svc-exp-slices-");
    const store = new SqliteEventStore(join(dir, "events.db"));
    try {
      const p = newProject();
      const x = newExperiment();
      const rows = oddRows(p, x);
      await store.append(rows);
      for (const measures of [[count("purchase")], [sum("purchase"), unique("purchase")]] as ExperimentStatsQuery["measures"][]) {
        const q: ExperimentStatsQuery = { projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures };
        const got = await store.experimentStats(q);
        expectStats(got.variants, reference(rows, q));
        if (navigator.hardwareConcurrency > 1) expect(got.sql).toContain("unicode");
      }
      // Concurrent analyses share the workers.
      const q: ExperimentStatsQuery = { projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures: [count("purchase")] };
      const all = await Promise.all(Array.from({ length: 6 }, () => store.experimentStats(q)));
      for (const r of all) expectStats(r.variants, reference(rows, q));
    } finally {
      await store.close();
    }
    // Closed: refused, not hung.
    await expect(store.experimentStats({ projectId: "p", experimentId: "x", from: 0, to: 1, measures: [count("e")] })).rejects.toThrow("closed");
    await expect(store.exposureCounts("p", "x")).rejects.toThrow("closed");
  });

  test("a statement that fails in a worker rejects the call, and the next one works", async () => {
    const dir = tempDir("svc-exp-fail-");
    const store = new SqliteEventStore(join(dir, "events.db"));
    try {
      const p = newProject();
      const x = newExperiment();
      await store.append(oddRows(p, x));
      // Nothing a valid query holds can fail (everything is bound); an operator the contract never lets through makes bad SQL.
      const bad = { projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures: [{ kind: "sum", event: "purchase", property: "a", filters: [{ property: "b", op: "zz", value: 1 }] }] };
      await expect(store.experimentStats(bad as unknown as ExperimentStatsQuery)).rejects.toThrow();
      expect((await store.experimentStats({ projectId: p, experimentId: x, from: T0, to: T0 + DAY, measures: [count("purchase")] })).variants.length).toBe(2);
    } finally {
      await store.close();
    }
  });
});
