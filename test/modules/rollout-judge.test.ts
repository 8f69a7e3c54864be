import { describe, expect, test } from "bun:test";
import type { VariantStats } from "../../src/lib/eventstore/types";
import { judgeMetric, previousState, regressionOf, testAlpha } from "../../src/modules/rollouts/judge";
import { DEFAULT_STAGES, MIN_UNITS_PER_GROUP, type MetricCheck, type WatchedMetric } from "../../src/modules/rollouts/types";
import { seededRandom as rng } from "../seeded-random";

// The rollout monitor's statistics over seeded synthetic traffic: how often a harmless change is
// stopped (A/A, 500 runs) and how fast a harmful one is (30 % more errors). The same functions the
// monitor calls each minute; the server-level simulation is rollout-simulation.test.ts.

const ERRORS: WatchedMetric = { metric: "errors", metricId: null, direction: "lower", tolerance: 0 };
const arm = (variant: string): VariantStats => ({ variant, n: 0, sumX: 0, sumXX: 0 });

/**
 * One rollout over the default plan: per stage `unitsPerLook` new units per
 * minute for `looks` minutes, each in the new group with the stage's
 * probability, erring with `base` (old) or `base × lift` (new) chance per
 * unit (0/1 per unit here; counts behave the same). The monitor looks every
 * minute with the previous look's state. Answers the stage it stopped at, or
 * null when it ran to 100 %.
 */
function runRollout(random: () => number, opts: { base: number; lift: number; unitsPerLook: number; looks: number }): number | null {
  const stages = DEFAULT_STAGES;
  const alpha = testAlpha(0.05, stages, 1);
  for (let stage = 0; stage < stages.length; stage++) {
    const p = stages[stage]!.percent / 100;
    if (p >= 1) return null;
    const sums = { old: arm("old"), new: arm("new") };
    let last: { stage: number; metrics: MetricCheck[] } | null = null;
    for (let look = 0; look < opts.looks; look++) {
      for (let u = 0; u < opts.unitsPerLook; u++) {
        const isNew = random() < p;
        const s = isNew ? sums.new : sums.old;
        const x = random() < opts.base * (isNew ? opts.lift : 1) ? 1 : 0;
        s.n++;
        s.sumX += x;
        s.sumXX += x * x;
      }
      const check = judgeMetric(ERRORS, "mean", { old: { ...sums.old }, new: { ...sums.new } }, alpha, previousState(last, stage, "errors", alpha));
      if (check.regression) return stage;
      last = { stage, metrics: [check] };
    }
  }
  return null;
}

describe("the monitor's statistics", () => {
  test("A/A: over 500 seeded rollouts a harmless change is stopped in at most the false alarm rate (5 %)", () => {
    const random = rng(20261124);
    let stopped = 0;
    for (let run = 0; run < 500; run++) if (runRollout(random, { base: 0.1, lift: 1, unitsPerLook: 400, looks: 30 }) !== null) stopped++;
    // The split over stages and the one-sided stop make it far rarer than 5 %; the bound is what is promised.
    expect(stopped / 500).toBeLessThanOrEqual(0.05);
  });

  test("30 % more errors is stopped in nearly every run, at the first stage whose new group has the units", () => {
    const random = rng(7);
    const stoppedAt: (number | null)[] = [];
    // 60,000 units a stage: at 1 % the new group (600) shows a 30 % rise at about 1.7 standard errors, too
    // little for any test; at 5 % (3,000) at about 4.8: that is the first stage that has the data.
    for (let run = 0; run < 100; run++) stoppedAt.push(runRollout(random, { base: 0.1, lift: 1.3, unitsPerLook: 2000, looks: 30 }));
    const caught = stoppedAt.filter((s) => s !== null) as number[];
    expect(caught.length).toBeGreaterThanOrEqual(95);
    expect(2000 * 0.01).toBeLessThan(MIN_UNITS_PER_GROUP); // the first look of stage 0 cannot judge
    expect(caught.every((s) => s <= 2)).toBe(true);
    expect(caught.filter((s) => s === 1).length).toBeGreaterThanOrEqual(90);
  });

  test("a regression within the tolerance is not one; the direction decides which side stops", () => {
    const sums = (n: number, rate: number): VariantStats => ({ variant: "", n, sumX: n * rate, sumXX: n * rate });
    const alpha = 0.01;
    const worse = judgeMetric(ERRORS, "mean", { old: sums(20_000, 0.1), new: sums(20_000, 0.12) }, alpha);
    expect(worse.regression).toBe(true);
    expect(worse.estimate).toBeCloseTo(0.02, 10);
    expect(worse.interval![0]).toBeGreaterThan(0);
    expect(regressionOf([worse])!.reason).toContain("errors got higher");
    // 20 % worse is inside a 50 % tolerance.
    expect(judgeMetric({ ...ERRORS, tolerance: 0.5 }, "mean", { old: sums(20_000, 0.1), new: sums(20_000, 0.12) }, alpha).regression).toBe(false);
    // Fewer errors is no regression; for a higher-is-better metric a fall is.
    expect(judgeMetric(ERRORS, "mean", { old: sums(20_000, 0.12), new: sums(20_000, 0.1) }, alpha).regression).toBe(false);
    const conversion: WatchedMetric = { metric: "purchases", metricId: "met_x", direction: "higher", tolerance: 0 };
    expect(judgeMetric(conversion, "mean", { old: sums(20_000, 0.12), new: sums(20_000, 0.1) }, alpha).regression).toBe(true);
    // Too few units: no judgement at all.
    const few = judgeMetric(ERRORS, "mean", { old: sums(150, 0.1), new: sums(150, 0.9) }, alpha);
    expect(few).toMatchObject({ estimate: null, interval: null, regression: false });
  });
});
