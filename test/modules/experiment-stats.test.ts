/**
 * Experiment statistics (src/modules/experiments/stats): the NOTES.md
 * vectors to 5 decimals, then seeded simulations that show the tests keep
 * their promises: 5 % false positives at α = 0.05 for the fixed-horizon
 * tests, ≤ 5 % for the sequential test under 20 peeks (where the naive test
 * is far above), CUPED's variance reduction, the ratio delta method against
 * the session-level mistake, and SRM on fair and broken splits. Pure
 * functions, no server: runs on either engine unchanged.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import jStat from "jstat";
import {
  type MeanStats, type Moments, type SequentialResult, type SequentialState, analyzeMetric, bayesianFromMoments, bayesianProportions, compareMeans, compareProportions,
  compareRatios, cuped, meanMoments, optimalMixingRatio, ratioMoments, sequentialTest, srmCheck, welch,
} from "../../src/modules/experiments/stats";
import * as stats from "../../src/modules/experiments/stats";
import { verdictOf } from "../../src/modules/experiments/analysis";
import { seededRandom as mulberry32 } from "../seeded-random";

/** Box–Muller normals to GENERATE test data (the analysis itself only reads jStat's distributions). */
function normals(rand: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const th = 2 * Math.PI * rand();
    spare = r * Math.sin(th);
    return r * Math.cos(th);
  };
}

const acc = (): MeanStats => ({ n: 0, sum: 0, sumSq: 0 });
function add(s: MeanStats, x: number): void {
  s.n++;
  s.sum += x;
  s.sumSq += x * x;
}

describe("NOTES.md vectors", () => {
  test("Welch: absolute Δ, CI and p; relative lift and p (delta method, Student t with Welch df)", () => {
    const r = compareMeans({ n: 3407, sum: 1396.87, sumSq: 52377.9767 }, { n: 3461, sum: 2422.7, sumSq: 134698.29 });
    expect(r.absolute!.estimate).toBeCloseTo(0.29, 5);
    expect(r.absolute!.ci[0]).toBeCloseTo(0.04538, 5);
    expect(r.absolute!.ci[1]).toBeCloseTo(0.53462, 5);
    expect(r.absolute!.pValue).toBeCloseTo(0.02016, 5);
    expect(r.relative!.estimate).toBeCloseTo(0.70732, 5);
    expect(r.relative!.pValue).toBeCloseTo(0.06191, 5);
    expect(r.absolute!.significant).toBe(true);
    expect(r.relative!.significant).toBe(false);
  });

  test("binomial 14/28 vs 16/30: Δ is the relative lift, p from the delta method with p(1 − p) and Welch df", () => {
    const r = compareProportions({ n: 28, successes: 14 }, { n: 30, successes: 16 });
    expect(r.relative!.estimate).toBeCloseTo(0.06667, 5);
    expect(r.relative!.pValue).toBeCloseTo(0.80707, 5);
    expect(r.absolute!.estimate).toBeCloseTo(1 / 30, 10);
  });

  test("SRM: [5100, 4900] at 50/50 → p 0.0455, not flagged at the 0.001 default", () => {
    const r = srmCheck([5100, 4900], [0.5, 0.5]);
    expect(r.chiSquare).toBeCloseTo(4, 10);
    expect(r.pValue).toBeCloseTo(0.0455, 5);
    expect(r.flagged).toBe(false);
    expect(srmCheck([5100, 4900], [50, 50], 0.05).flagged).toBe(true);
  });
});

describe("A/A simulation: 2,000 experiments of 1,000 units per arm, 20 looks each", () => {
  const RUNS = 2000;
  const PER_ARM = 1000;
  const LOOKS = 20;
  const alpha = 0.05;
  const hits = { fixed: 0, naivePeeking: 0, sequential: 0, bayesExtreme: 0, proportions: 0 };
  const rate = (k: number) => k / RUNS;

  beforeAll(() => {
    const gauss = normals(mulberry32(20240601));
    const bernoulli = mulberry32(7);
    for (let run = 0; run < RUNS; run++) {
      const c = acc();
      const t = acc();
      let naiveHit = false;
      let seqHit = false;
      let prev: SequentialState | null = null;
      for (let look = 1; look <= LOOKS; look++) {
        while (c.n < (PER_ARM * look) / LOOKS) {
          add(c, 10 + 3 * gauss());
          add(t, 10 + 3 * gauss());
        }
        const mc = meanMoments(c);
        const mt = meanMoments(t);
        if (welch(mc, mt, { alpha }).absolute!.pValue < alpha) naiveHit = true;
        // The horizon at the planned size makes the sequence as tight as it gets here: the strictest check of validity.
        const s: SequentialResult = sequentialTest(mc, mt, { alpha, horizonPerArm: PER_ARM, previous: prev })!;
        prev = s;
        if (s.significant) seqHit = true;
      }
      // The last look is the fixed-horizon experiment: read once, at 1,000 units per arm.
      if (welch(meanMoments(c), meanMoments(t), { alpha }).absolute!.pValue < alpha) hits.fixed++;
      const chance = bayesianFromMoments(meanMoments(c), meanMoments(t))!.chanceToBeatControl;
      if (chance > 1 - alpha / 2 || chance < alpha / 2) hits.bayesExtreme++;
      if (naiveHit) hits.naivePeeking++;
      if (seqHit) hits.sequential++;
      let sc = 0;
      let st = 0;
      for (let i = 0; i < PER_ARM; i++) {
        if (bernoulli() < 0.1) sc++;
        if (bernoulli() < 0.1) st++;
      }
      if (compareProportions({ n: PER_ARM, successes: sc }, { n: PER_ARM, successes: st }).absolute!.pValue < alpha) hits.proportions++;
    }
    const pct = (k: number) => `${(100 * rate(k)).toFixed(2)} %`;
    console.log(
      `A/A false-positive rates at α = 0.05 over ${RUNS} runs: fixed-horizon Welch ${pct(hits.fixed)}, two proportions ${pct(hits.proportions)}, ` +
        `Bayesian chance outside [2.5 %, 97.5 %] ${pct(hits.bayesExtreme)}; with ${LOOKS} peeks: naive Welch ${pct(hits.naivePeeking)}, mSPRT ${pct(hits.sequential)}`,
    );
  });

  test("fixed-horizon Welch: 5 % ± 1 %", () => {
    expect(rate(hits.fixed)).toBeGreaterThanOrEqual(0.04);
    expect(rate(hits.fixed)).toBeLessThanOrEqual(0.06);
  });
  test("two proportions (p = 0.1) and the Bayesian chance to beat control are calibrated the same way", () => {
    expect(Math.abs(rate(hits.proportions) - 0.05)).toBeLessThanOrEqual(0.01);
    expect(Math.abs(rate(hits.bayesExtreme) - 0.05)).toBeLessThanOrEqual(0.01);
  });
  test("peeking: the sequential test stays ≤ 5 %, the naive test with the same peeks is far above", () => {
    expect(rate(hits.sequential)).toBeLessThanOrEqual(alpha);
    expect(rate(hits.naivePeeking)).toBeGreaterThan(0.12);
  });
});

describe("sequential test", () => {
  const m = (n: number, mean: number, variance: number): Moments => ({ n, mean, variance });

  test("the mixing ratio is the fixed point, and the sequence is narrowest there", () => {
    const r = optimalMixingRatio(0.05);
    expect(r).toBeCloseTo(2 * Math.log(20) + Math.log1p(r), 12);
    expect(r).toBeGreaterThan(8);
    expect(r).toBeLessThan(8.5);
    const c = m(1000, 0, 1);
    const width = (tau2: number) => {
      const s = sequentialTest(c, m(1000, 0, 1), { tau2 })!;
      return s.confidenceSequence[1] - s.confidenceSequence[0];
    };
    const V = 2 / 1000;
    expect(width(r * V)).toBeLessThan(width(0.5 * r * V));
    expect(width(r * V)).toBeLessThan(width(2 * r * V));
  });

  test("wider than the fixed-horizon interval, monotone across looks, and powerful against a real effect", () => {
    const c = m(1000, 10, 9);
    const t = m(1000, 10.2, 9);
    const s1 = sequentialTest(c, t)!;
    const fixedCi = welch(c, t).absolute!.ci;
    expect(s1.confidenceSequence[0]).toBeLessThan(fixedCi[0]);
    expect(s1.confidenceSequence[1]).toBeGreaterThan(fixedCi[1]);
    // A later look with a weaker estimate: p may not rise, the sequence may not widen.
    const s2 = sequentialTest(m(2000, 10, 9), m(2000, 10.05, 9), { previous: s1 })!;
    expect(s2.pValue).toBeLessThanOrEqual(s1.pValue);
    expect(s2.confidenceSequence[0]).toBeGreaterThanOrEqual(s1.confidenceSequence[0]);
    expect(s2.confidenceSequence[1]).toBeLessThanOrEqual(s1.confidenceSequence[1]);
    const gauss = normals(mulberry32(99));
    let detected = 0;
    for (let run = 0; run < 200; run++) {
      const a = acc();
      const b = acc();
      let prev: SequentialState | null = null;
      for (let look = 1; look <= 10; look++) {
        while (a.n < 100 * look) {
          add(a, 3 * gauss());
          add(b, 0.6 + 3 * gauss()); // 0.2 standard deviations
        }
        prev = sequentialTest(meanMoments(a), meanMoments(b), { horizonPerArm: 1000, previous: prev })!;
      }
      if (prev!.pValue < 0.05) detected++;
    }
    console.log(`mSPRT power at 0.2 sd by 1,000 units per arm, 10 looks: ${(detected / 2).toFixed(1)} %`);
    expect(detected / 200).toBeGreaterThan(0.85);
  });
});

describe("CUPED", () => {
  /** Units with a pre-period value pre and an outcome correlated with it (ρ ≈ 0.8), plus `effect` in the treatment. */
  function simulate(seed: number, perArm: number, effect: number) {
    const g = normals(mulberry32(seed));
    return [0, effect].map((lift) => {
      const a = { n: 0, sum: 0, sumSq: 0, sumPre: 0, sumPreSq: 0, sumXPre: 0 };
      for (let i = 0; i < perArm; i++) {
        const pre = 20 + 4 * g();
        const x = 5 + 0.8 * pre + 0.6 * 4 * g() + lift; // var x = (3.2² + 2.4²) → ρ = 3.2 / 4 = 0.8
        a.n++;
        a.sum += x;
        a.sumSq += x * x;
        a.sumPre += pre;
        a.sumPreSq += pre * pre;
        a.sumXPre += x * pre;
      }
      return a;
    });
  }

  test("θ recovers the slope, variance falls by ρ² (≈ 64 %), the interval narrows by √(1 − ρ²), the estimate stays unbiased", () => {
    const arms = simulate(11, 5000, 0.3);
    const adj = cuped(arms);
    expect(adj.theta).toBeCloseTo(0.8, 1);
    for (const r of adj.varianceReduction) expect(Math.abs(r - 0.64)).toBeLessThan(0.03);
    const raw = welch(meanMoments(arms[0]), meanMoments(arms[1])).absolute!;
    const cup = welch(adj.arms[0], adj.arms[1]).absolute!;
    expect((cup.ci[1] - cup.ci[0]) / (raw.ci[1] - raw.ci[0])).toBeCloseTo(0.6, 1);
    expect(Math.abs(cup.estimate - 0.3)).toBeLessThan(2 * cup.se);
    expect(cup.pValue).toBeLessThan(raw.pValue);
    const viaAnalyze = analyzeMetric({ kind: "mean", arms });
    expect(viaAnalyze.cuped!.theta).toBe(adj.theta);
    expect(viaAnalyze.variants[0].frequentist.absolute!.estimate).toBe(cup.estimate);
    expect(analyzeMetric({ kind: "mean", arms }, { cuped: false }).cuped).toBeNull();
  });

  test("A/A with CUPED keeps the 5 % false-positive rate (θ estimated from the same data)", () => {
    let hits = 0;
    for (let run = 0; run < 1000; run++) {
      const adj = cuped(simulate(1000 + run, 300, 0));
      if (welch(adj.arms[0], adj.arms[1]).absolute!.pValue < 0.05) hits++;
    }
    console.log(`CUPED A/A false-positive rate over 1000 runs of 300 units per arm: ${(hits / 10).toFixed(1)} %`);
    expect(Math.abs(hits / 1000 - 0.05)).toBeLessThan(0.015);
  });

  test("a covariate without spread leaves the metric as it was", () => {
    const adj = cuped([{ n: 3, sum: 6, sumSq: 14, sumPre: 3, sumPreSq: 3, sumXPre: 6 }, { n: 3, sum: 9, sumSq: 29, sumPre: 3, sumPreSq: 3, sumXPre: 9 }]);
    expect(adj.theta).toBe(0);
    expect(adj.arms[1]).toEqual(meanMoments({ n: 3, sum: 9, sumSq: 29 }));
  });
});

describe("ratio metrics by the delta method", () => {
  test("with a denominator of 1 per unit it is exactly Welch on the numerator", () => {
    const a = { n: 500, sumX: 1200, sumY: 500, sumXX: 4100, sumYY: 500, sumXY: 1200 };
    const b = { n: 520, sumX: 1350, sumY: 520, sumXX: 4700, sumYY: 520, sumXY: 1350 };
    const r = compareRatios(a, b);
    const w = compareMeans({ n: 500, sum: 1200, sumSq: 4100 }, { n: 520, sum: 1350, sumSq: 4700 });
    expect(r.absolute!.pValue).toBeCloseTo(w.absolute!.pValue, 12);
    expect(r.relative!.ci[0]).toBeCloseTo(w.relative!.ci[0], 12);
  });

  test("equals the variance of the linearised unit values (X − R·Y)/Ȳ computed from raw rows", () => {
    const rand = mulberry32(5);
    const rows = Array.from({ length: 300 }, () => {
      const y = 1 + Math.floor(rand() * 6);
      return { x: y * (2 + rand()) + rand() * 3, y };
    });
    const s = { n: rows.length, sumX: 0, sumY: 0, sumXX: 0, sumYY: 0, sumXY: 0 };
    for (const { x, y } of rows) Object.assign(s, { sumX: s.sumX + x, sumY: s.sumY + y, sumXX: s.sumXX + x * x, sumYY: s.sumYY + y * y, sumXY: s.sumXY + x * y });
    const R = s.sumX / s.sumY;
    const ybar = s.sumY / s.n;
    const lin = rows.map(({ x, y }) => (x - R * y) / ybar);
    const mean = lin.reduce((u, v) => u + v, 0) / lin.length;
    const variance = lin.reduce((u, v) => u + (v - mean) ** 2, 0) / (lin.length - 1);
    expect(ratioMoments(s).mean).toBeCloseTo(R, 12);
    expect(ratioMoments(s).variance).toBeCloseTo(variance, 9);
  });

  test("A/A on sessions clustered in users: the delta method holds 5 %, counting sessions as independent does not", () => {
    const g = normals(mulberry32(31));
    const rand = mulberry32(32);
    let delta = 0;
    let naive = 0;
    for (let run = 0; run < 1000; run++) {
      const arms = [0, 1].map(() => {
        const unit = { n: 0, sumX: 0, sumY: 0, sumXX: 0, sumYY: 0, sumXY: 0 };
        const session = acc();
        for (let u = 0; u < 400; u++) {
          const userEffect = 2 * g();
          const sessions = 1 + Math.floor(rand() * 6);
          let x = 0;
          for (let k = 0; k < sessions; k++) {
            const v = 5 + userEffect + g();
            x += v;
            add(session, v);
          }
          Object.assign(unit, { n: unit.n + 1, sumX: unit.sumX + x, sumY: unit.sumY + sessions, sumXX: unit.sumXX + x * x, sumYY: unit.sumYY + sessions ** 2, sumXY: unit.sumXY + x * sessions });
        }
        return { unit, session };
      });
      if (compareRatios(arms[0].unit, arms[1].unit).absolute!.pValue < 0.05) delta++;
      if (compareMeans(arms[0].session, arms[1].session).absolute!.pValue < 0.05) naive++;
    }
    console.log(`ratio A/A false-positive rate over 1000 runs: delta method ${(delta / 10).toFixed(1)} %, sessions as independent ${(naive / 10).toFixed(1)} %`);
    expect(Math.abs(delta / 1000 - 0.05)).toBeLessThan(0.015);
    expect(naive / 1000).toBeGreaterThan(0.2);
  });
});

describe("Bayesian", () => {
  test("flat priors: chance to beat control is 1 − p/2 of the z test, and risk.control − risk.treatment = Δ", () => {
    const c = meanMoments({ n: 3407, sum: 1396.87, sumSq: 52377.9767 });
    const t = meanMoments({ n: 3461, sum: 2422.7, sumSq: 134698.29 });
    const b = bayesianFromMoments(c, t)!;
    const se = Math.sqrt(c.variance / c.n + t.variance / t.n);
    expect(b.chanceToBeatControl).toBeCloseTo(1 - jStat.normal.cdf(-0.29 / se, 0, 1), 12);
    expect(b.chanceToBeatControl).toBeCloseTo(0.98994, 5);
    expect(b.risk.control - b.risk.treatment).toBeCloseTo(0.29, 12);
    expect(b.relative!.estimate).toBeCloseTo(0.70732, 5);
  });

  test("Beta posteriors: the normal approximation of the difference matches exact quadrature of the two Betas", () => {
    // P(p_t > p_c) = ∫ f_t(x)·F_c(x) dx, by Simpson's rule over jStat's Beta density and distribution.
    const exact = (c: { n: number; successes: number }, t: { n: number; successes: number }) => {
      const [a, b] = [1 + t.successes, 1 + t.n - t.successes];
      const steps = 4000;
      let sum = 0;
      for (let i = 0; i <= steps; i++) {
        const x = i / steps;
        const w = i === 0 || i === steps ? 1 : i % 2 ? 4 : 2;
        sum += w * jStat.beta.pdf(x, a, b) * jStat.beta.cdf(x, 1 + c.successes, 1 + c.n - c.successes);
      }
      return sum / (3 * steps);
    };
    for (const [c, t, tol] of [
      [{ n: 1000, successes: 120 }, { n: 1000, successes: 140 }, 0.001],
      [{ n: 28, successes: 14 }, { n: 30, successes: 16 }, 0.002],
      [{ n: 20, successes: 3 }, { n: 20, successes: 8 }, 0.005],
    ] as const) {
      const approx = bayesianProportions(c, t)!.chanceToBeatControl;
      console.log(`chance to beat control ${t.successes}/${t.n} vs ${c.successes}/${c.n}: normal approx ${approx.toFixed(4)}, exact Beta ${exact(c, t).toFixed(4)}`);
      expect(Math.abs(approx - exact(c, t))).toBeLessThan(tol);
    }
    // 0/n in both arms: the normal's p(1 − p) would be 0, the Beta posterior still has spread.
    expect(bayesianProportions({ n: 100, successes: 0 }, { n: 100, successes: 0 })!.chanceToBeatControl).toBeCloseTo(0.5, 12);
  });
});

describe("SRM", () => {
  test("flags a broken split, passes fair splits (simulated: ~0.1 % false alarms)", () => {
    expect(srmCheck([5300, 4700], [1, 1]).flagged).toBe(true);
    expect(srmCheck([2000, 2000, 4000], [1, 1, 2]).flagged).toBe(false);
    expect(srmCheck([2000, 2000, 3600], [1, 1, 2]).flagged).toBe(true);
    const rand = mulberry32(3);
    let flagged = 0;
    for (let run = 0; run < 1000; run++) {
      let a = 0;
      for (let i = 0; i < 10000; i++) if (rand() < 0.5) a++;
      if (srmCheck([a, 10000 - a], [0.5, 0.5]).flagged) flagged++;
    }
    expect(flagged).toBeLessThanOrEqual(5);
  });

  test("edges: units in a zero-weight arm, no units at all, a lone arm", () => {
    const r = srmCheck([100, 100, 3], [1, 1, 0]);
    expect(r.flagged).toBe(true);
    expect(JSON.stringify(r)).not.toContain("null");
    expect(srmCheck([100, 100, 0], [1, 1, 0])).toMatchObject({ df: 1, flagged: false });
    expect(srmCheck([0, 0], [1, 1])).toMatchObject({ pValue: 1, flagged: false });
    expect(srmCheck([42], [1])).toMatchObject({ pValue: 1, flagged: false });
    expect(() => srmCheck([1, 2], [1])).toThrow(RangeError);
  });
});

describe("edges never throw and never put NaN in a reply", () => {
  test("empty and single-unit arms, zero variance, a zero control mean, a zero denominator, huge samples", () => {
    for (const [c, t] of [
      [{ n: 0, sum: 0, sumSq: 0 }, { n: 0, sum: 0, sumSq: 0 }],
      [{ n: 1, sum: 3, sumSq: 9 }, { n: 5, sum: 10, sumSq: 30 }],
      [{ n: 4, sum: 8, sumSq: 16 }, { n: 4, sum: 12, sumSq: 36 }],
    ] as const) {
      const r = compareMeans(c, t);
      expect(r.absolute).toBeNull();
      expect(r.relative).toBeNull();
      expect(JSON.stringify(r)).not.toMatch(/NaN|Infinity/);
      expect(bayesianFromMoments(meanMoments(c), meanMoments(t))).toBeNull();
      expect(sequentialTest(meanMoments(c), meanMoments(t))).toBeNull();
    }
    const zeroControl = compareMeans({ n: 4, sum: 0, sumSq: 8 }, { n: 4, sum: 4, sumSq: 10 });
    expect(zeroControl.absolute).not.toBeNull();
    expect(zeroControl.relative).toBeNull();
    const noDenominator = compareRatios({ n: 3, sumX: 0, sumY: 0, sumXX: 0, sumYY: 0, sumXY: 0 }, { n: 3, sumX: 3, sumY: 3, sumXX: 5, sumYY: 5, sumXY: 5 });
    expect(noDenominator.control.mean).toBeNull();
    expect(noDenominator.absolute).toBeNull();
    // 10⁸ units per arm: df far past jStat's t range, read on the normal; a t of 21 keeps its tiny p (2·F(−|t|), not 1 − F).
    const big = welch({ n: 1e8, mean: 1, variance: 1 }, { n: 1e8, mean: 1.0001, variance: 1 });
    expect(big.absolute!.pValue).toBeCloseTo(2 * jStat.normal.cdf(-0.0001 / Math.sqrt(2e-8), 0, 1), 12);
    expect(welch({ n: 1e4, mean: 0, variance: 1 }, { n: 1e4, mean: 0.3, variance: 1 }).absolute!.pValue).toBeGreaterThan(0);
    const ok: MeanStats = { n: 10, sum: 10, sumSq: 20 };
    expect(() => compareMeans(ok, ok, { alpha: 1.5 })).toThrow(RangeError);
  });

  test("analyzeMetric: proportions read Beta posteriors, the sequential state threads per treatment", () => {
    const arms = [{ n: 1000, successes: 100 }, { n: 1000, successes: 130 }, { n: 1000, successes: 95 }];
    const first = analyzeMetric({ kind: "proportion", arms }, { alpha: 0.1, sequential: { horizonPerArm: 1000 } });
    expect(first.variants.map((v) => v.arm)).toEqual([1, 2]);
    expect(first.variants[0].bayesian).toEqual(bayesianProportions(arms[0], arms[1], { alpha: 0.1 }));
    expect(first.variants[0].frequentist.alpha).toBe(0.1);
    const later = analyzeMetric({ kind: "proportion", arms: arms.map((a) => ({ n: 2 * a.n, successes: 2 * a.successes - 10 })) }, { sequential: { horizonPerArm: 1000, previous: first.variants.map((v) => v.sequential) }, alpha: 0.1 });
    for (const [i, v] of later.variants.entries()) expect(v.sequential!.pValue).toBeLessThanOrEqual(first.variants[i].sequential!.pValue);
    expect(() => analyzeMetric({ kind: "mean", arms: [{ n: 1, sum: 1, sumSq: 1 }] })).toThrow(RangeError);
  });
});

describe("issue 25, item 17: the relative lift keeps the difference's sign when the control's mean is negative", () => {
  // Net revenue per unit: the control loses 40, the treatment 30. The treatment is higher: +25 % of |−40|.
  const control: Moments = { n: 1000, mean: -40, variance: 400 };
  const treatment: Moments = { n: 1000, mean: -30, variance: 400 };
  // By hand (gbstats' formulas): r = (m_t − m_c)/|m_c| = 10/40; var = v_t/(n_t·m_c²) + m_t²·v_c/(n_c·m_c⁴)
  // = 400/(1000·1600) + 900·400/(1000·2,560,000) = 0.00025 + 0.000140625; Welch df = 0.8²/(2·0.4²/999) = 1998.
  const se = Math.sqrt(0.00025 + 0.000140625);

  test("frequentist: estimate +0.25, its delta-method interval, and the verdict is an increase", () => {
    const r = welch(control, treatment);
    expect(r.df).toBeCloseTo(1998, 9);
    expect(r.absolute!.estimate).toBe(10);
    expect(r.relative!.estimate).toBeCloseTo(0.25, 12);
    expect(r.relative!.se).toBeCloseTo(se, 12);
    const t = jStat.studentt.inv(0.975, 1998);
    expect(r.relative!.ci[0]).toBeCloseTo(0.25 - t * se, 10);
    expect(r.relative!.ci[1]).toBeCloseTo(0.25 + t * se, 10);
    expect(r.relative!.ci[0]).toBeGreaterThan(0);
    // The same magnitude as a positive control mean would give, mirrored: 40 → 50 is +25 % too.
    expect(welch({ ...control, mean: 40 }, { ...treatment, mean: 50 }).relative!.se).toBeCloseTo(Math.sqrt(0.00025 + (2500 * 400) / (1000 * 40 ** 4)), 12);
    const result = { variant: "t", frequentist: r, bayesian: bayesianFromMoments(control, treatment), sequential: null };
    expect(verdictOf(result, "frequentist", 0.05, true)).toBe("increase");
    expect(verdictOf(result, "bayesian", 0.05, true)).toBe("increase");
  });

  test("a treatment that loses more is a negative lift, whatever the sign of the means", () => {
    expect(welch(control, { ...treatment, mean: -50 }).relative!.estimate).toBeCloseTo(-0.25, 12);
    expect(welch({ ...control, mean: 40 }, { ...treatment, mean: 30 }).relative!.estimate).toBeCloseTo(-0.25, 12);
  });

  test("Bayesian: the relative credible interval is centred on +0.25 with the posterior delta-method sd", () => {
    const b = bayesianFromMoments(control, treatment)!;
    expect(b.chanceToBeatControl).toBeGreaterThan(0.999);
    expect(b.relative!.estimate).toBeCloseTo(0.25, 12);
    expect(b.relative!.sd).toBeCloseTo(se, 12);
    const z = jStat.normal.inv(0.975, 0, 1);
    expect(b.relative!.credibleInterval[0]).toBeCloseTo(0.25 - z * se, 10);
    expect(b.relative!.credibleInterval[1]).toBeCloseTo(0.25 + z * se, 10);
  });
});

describe("issue 25, item 20: tails by survival functions, centred variances, degenerate cases said", () => {
  test("normal and χ² survival functions at tail points against known values", () => {
    const close = (got: number, want: number, rel = 1e-12) => expect(Math.abs(got - want) / want).toBeLessThan(rel);
    close(stats.normalSf(10), 7.619853024160527e-24);
    close(stats.normalSf(8), 6.22096057427178e-16);
    close(stats.normalSf(1.96), 0.024997895148220435);
    close(stats.normalCdf(-20), 2.7536241186062337e-89);
    close(stats.normalCdf(-9), 1.1285884059538324e-19);
    close(stats.chiSquareSf(100, 1), 1.5239706048320995e-23, 1e-10);
    close(stats.chiSquareSf(4, 1), 0.04550026389635842);
    close(stats.chiSquareSf(10, 5), 0.07523524614651217, 1e-10);
    close(stats.chiSquareSf(3, 2), Math.exp(-1.5));
    expect(stats.chiSquareSf(0, 3)).toBe(1);
  });

  test("SRM keeps a p-value far past χ² = 72", () => {
    const r = srmCheck([5600, 4400], [1, 1]);
    expect(r.chiSquare).toBeCloseTo(144, 9);
    // χ² 144 on 1 df is z = 12 two-sided: 2·Φ̄(12) = 3.5529642241554e-33, not 0.
    expect(Math.abs(r.pValue - 3.5529642241554e-33) / 3.5529642241554e-33).toBeLessThan(1e-10);
    expect(r.flagged).toBe(true);
  });

  test("the normal cdf and the expected loss stay accurate and non-negative far in the tails", () => {
    expect(stats.normalCdf(-8.6)).toBeGreaterThan(0);
    for (let z = 8; z <= 8.5; z += 0.01) {
      const b = stats.bayesian({ mean: 0, variance: 0.5 }, { mean: z, variance: 0.5 })!;
      // E[max(−D, 0)] for D ~ N(z, 1): φ(z)/z²·(1 − 3/z² + 15/z⁴ …), asymptotically.
      const asymptotic = (Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI) / z ** 2) * (1 - 3 / z ** 2 + 15 / z ** 4 - 105 / z ** 6);
      expect(b.risk.treatment).toBeGreaterThan(0);
      expect(Math.abs(b.risk.treatment - asymptotic) / asymptotic).toBeLessThan(2e-3);
      expect(b.risk.control - b.risk.treatment).toBeCloseTo(z, 12);
    }
  });

  test("a variance from shifted sums keeps its digits when the mean dwarfs the spread", () => {
    // Units 1e9 − 1, 1e9 + 1 (twice each): variance 4/3. Σx² about 0 cannot hold it.
    const xs = [1e9 - 1, 1e9 + 1, 1e9 - 1, 1e9 + 1];
    const sum = xs.reduce((s, x) => s + x, 0);
    const shift = 1e9 + 0.25;
    const sumSq = xs.reduce((s, x) => s + (x - shift) ** 2, 0);
    expect(meanMoments({ n: 4, sum, sumSq, shift }).variance).toBeCloseTo(4 / 3, 9);
    const r = compareMeans({ n: 4, sum, sumSq, shift }, { n: 4, sum: sum + 4, sumSq: xs.reduce((s, x) => s + (x + 1 - shift) ** 2, 0), shift });
    expect(r.absolute!.estimate).toBeCloseTo(1, 6);
    expect(r.absolute!.se).toBeCloseTo(Math.sqrt(2 * (4 / 3) / 4), 9);
  });

  test("zero conversions in one arm and other degenerate cases: null with a note that says why", () => {
    const none = analyzeMetric({ kind: "proportion", arms: [{ n: 500, successes: 0 }, { n: 500, successes: 25 }] }, { sequential: {} });
    const v = none.variants[0]!;
    expect(v.frequentist.absolute).toBeNull();
    expect(v.frequentist.relative).toBeNull();
    expect(v.sequential).toBeNull();
    expect(v.bayesian).not.toBeNull();
    expect(v.notes.join(" ")).toContain("the control has no conversions (0 of 500 units)");
    const flat = analyzeMetric({ kind: "mean", arms: [{ n: 50, sum: 100, sumSq: 200 }, { n: 50, sum: 120, sumSq: 400 }] }, { sequential: {} });
    expect(flat.variants[0]!.frequentist.absolute).toBeNull();
    expect(flat.variants[0]!.bayesian).toBeNull();
    expect(flat.variants[0]!.notes).toEqual(["no test: every unit of the control has the same value (2), so its variance is 0 and no standard error can be estimated"]);
    const zeroMean = analyzeMetric({ kind: "mean", arms: [{ n: 4, sum: 0, sumSq: 8 }, { n: 4, sum: 4, sumSq: 10 }] });
    expect(zeroMean.variants[0]!.frequentist.absolute).not.toBeNull();
    expect(zeroMean.variants[0]!.notes).toEqual(["no relative lift: the control's mean is 0, so there is no lift relative to it (the absolute difference stands)"]);
    const small = analyzeMetric({ kind: "mean", arms: [{ n: 1, sum: 1, sumSq: 1 }, { n: 5, sum: 10, sumSq: 30 }] });
    expect(small.variants[0]!.notes[0]).toContain("the control has only 1 unit");
    const huge = analyzeMetric({ kind: "mean", arms: [{ n: 5, sum: 2e154, sumSq: Infinity }, { n: 5, sum: 10, sumSq: 30 }] });
    expect(huge.variants[0]!.notes[0]).toContain("too large for double precision");
    expect(JSON.stringify(huge)).not.toMatch(/NaN|Infinity/);
  });
});
