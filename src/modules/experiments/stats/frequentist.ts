/**
 * Fixed-horizon tests: Welch's t-test of the absolute difference and the
 * delta-method test of the relative lift, over Moments. Means, proportions,
 * ratios and CUPED-adjusted means all come through welch(), so they share
 * one set of edge rules (n < 2, zero variance, a zero control mean).
 *
 * Formulations, pinned by the NOTES.md vectors (test/modules/experiment-stats.test.ts):
 * - absolute: Δ = m_t − m_c, se² = v_t/n_t + v_c/n_c, Student t with the
 *   Welch–Satterthwaite df, two-sided (Welch vector: Δ 0.29,
 *   CI (0.04538, 0.53462), p 0.02016; a normal instead of t gives 0.02012).
 * - relative: r = (m_t − m_c)/|m_c| with the delta-method variance
 *   v_t/(n_t·m_c²) + m_t²·v_c/(n_c·m_c⁴), read against the SAME Student t
 *   with the Welch df (Welch vector: r 0.70732, p 0.06191; the normal gives
 *   0.06186, and the log-ratio formulation 0.01591). This is GrowthBook's
 *   gbstats formulation.
 * - proportions: the same two, with the Bernoulli variance p(1 − p)
 *   (moments.ts). The NOTES binomial vector's Δ 0.06667 is the RELATIVE lift
 *   (16/30)/(14/28) − 1 and its p 0.80707 the relative test above. None of the
 *   classic absolute tests gives it: pooled z 0.79960, unpooled z 0.79951,
 *   Welch on 0/1 data (Bessel-corrected) 0.80385.
 *
 * Why two p-values: absolute and relative test the same null (no difference)
 * with different Wald statistics. The absolute one is Welch's exact-form
 * test and is the one calibrated in the A/A simulation; the relative one is
 * a first-order approximation that is conservative when the control mean is
 * noisy (the Welch vector: 0.020 vs 0.062). They converge as n grows. The
 * decision (`significant` of the comparison) should be read from absolute;
 * relative is for reading the size of the effect.
 */
import { checkAlpha, tCritical, tTwoSidedP } from "./dist";
import { meanMoments, proportionMoments, ratioMoments } from "./moments";
import { type ArmSummary, type Comparison, type Effect, type MeanStats, type Moments, type ProportionStats, type RatioStats, finiteOrNull } from "./types";

export type TestOptions = {
  /** Two-sided significance level (the project's significanceThreshold); intervals are (1 − alpha). Default 0.05. */
  alpha?: number;
};

/** Squared standard error of one arm's estimator, NaN when it cannot be estimated. */
function sq(m: Moments): number {
  return m.n >= 2 && Number.isFinite(m.variance) ? m.variance / m.n : NaN;
}

/**
 * Welch–Satterthwaite degrees of freedom. When one arm has zero variance the
 * formula reduces to the other arm's n − 1, as it should.
 */
export function welchDf(c: Moments, t: Moments): number {
  const a = sq(c);
  const b = sq(t);
  const den = (a * a) / (c.n - 1) + (b * b) / (t.n - 1);
  return den > 0 ? (a + b) ** 2 / den : NaN;
}

function effect(estimate: number, se: number, df: number, alpha: number): Effect | null {
  if (!(se > 0) || !Number.isFinite(se) || !Number.isFinite(estimate) || !Number.isFinite(df)) return null;
  const half = tCritical(alpha, df) * se;
  const pValue = tTwoSidedP(estimate / se, df);
  const ci: [number, number] = [estimate - half, estimate + half];
  // Finite inputs can still overflow at the edges of double precision: JSON has no Infinity, so no result.
  if (!ci.every(Number.isFinite) || !Number.isFinite(pValue)) return null;
  return { estimate, se, ci, pValue, significant: pValue < alpha };
}

export function summarize(m: Moments): ArmSummary {
  return { n: m.n, mean: finiteOrNull(m.mean), variance: finiteOrNull(m.variance) };
}

/**
 * The delta-method relative lift r = (m_t − m_c)/|m_c| and its standard
 * error, shared with the Bayesian side (which only swaps the variances for
 * posterior ones). `vc` and `vt` are the squared standard errors of the two
 * means. Undefined (NaN) when the control mean is 0.
 *
 * Dividing by |m_c|, not m_c, keeps the lift's sign the difference's: with a
 * negative control mean (net revenue, refunds) m_t/m_c − 1 is negative when
 * the treatment is higher (−40 → −30 gave −25 % beside "increase"). This is
 * gbstats' frequentist_diff. The variance is unchanged: r is ±(m_t/m_c − 1),
 * the sign fixed by m_c's, and the delta method of m_t/m_c (gbstats'
 * variance_of_ratios with no covariance) gives
 * v_t/m_c² + m_t²·v_c/m_c⁴, in which m_c's sign cancels.
 */
export function relativeLift(mc: number, vc: number, mt: number, vt: number): { estimate: number; se: number } {
  if (mc === 0 || !Number.isFinite(mc)) return { estimate: NaN, se: NaN };
  return { estimate: (mt - mc) / Math.abs(mc), se: Math.sqrt(vt / mc ** 2 + (mt ** 2 * vc) / mc ** 4) };
}

/**
 * Why the tests of two arms are not computed (null) when they are not, in
 * words for the reply's warnings; null when they are. The order is the
 * order of the checks, the first that fails decides:
 * - an arm with fewer than 2 units has no variance estimate;
 * - a mean or variance that is not finite: sums beyond double precision
 *   (values of about 1.3e154 already square to infinity);
 * - an arm without variation (every unit the same value, e.g. no
 *   conversions at all): its estimated standard error is 0, which is not
 *   evidence of certainty but of too little data, and a test resting on the
 *   other arm alone is overconfident. gbstats refuses the same cases
 *   (ZERO_NEGATIVE_VARIANCE).
 * `proportion` words the last case as conversions.
 */
export function degenerateReason(control: Moments, treatment: Moments, proportion = false): string | null {
  const arms: [string, Moments][] = [
    ["the control", control],
    ["the treatment", treatment],
  ];
  for (const [name, m] of arms) {
    if (m.n < 2) return `${name} has ${m.n === 0 ? "no units" : "only 1 unit"}; a test needs at least 2 in each arm`;
  }
  for (const [name, m] of arms) {
    if (!Number.isFinite(m.mean) || !Number.isFinite(m.variance)) {
      return Number.isNaN(m.mean) && Number.isFinite(m.variance)
        ? `${name}'s mean is undefined (a ratio whose denominator sums to 0)`
        : `${name}'s values are too large for double precision (their sums or squares overflow; values from about 1.3e154 on), so its mean or variance cannot be computed`;
    }
  }
  for (const [name, m] of arms) {
    if (m.variance > 0) continue;
    if (proportion) return m.mean === 0 ? `${name} has no conversions (0 of ${m.n} units), so its variance is 0 and no standard error can be estimated` : `every unit of ${name} converted (${m.n} of ${m.n}), so its variance is 0 and no standard error can be estimated`;
    return `every unit of ${name} has the same value (${Number(m.mean.toPrecision(6))}), so its variance is 0 and no standard error can be estimated`;
  }
  return null;
}

/** Why the relative lift alone is not computed, when the absolute test is; null when it is. */
export function relativeReason(control: Moments): string | null {
  return control.mean === 0 ? "the control's mean is 0, so there is no lift relative to it (the absolute difference stands)" : null;
}

/**
 * Welch's test of treatment against control, absolute and relative. Both
 * are null where degenerateReason names a reason (and the relative one where
 * relativeReason does): a test on a zero variance would read as certainty.
 */
export function welch(control: Moments, treatment: Moments, options: TestOptions = {}): Comparison {
  const alpha = checkAlpha(options.alpha ?? 0.05);
  const base = { control: summarize(control), treatment: summarize(treatment), alpha };
  if (degenerateReason(control, treatment) !== null) return { ...base, absolute: null, relative: null, df: null };
  const a = sq(control);
  const b = sq(treatment);
  const df = welchDf(control, treatment);
  const absolute = effect(treatment.mean - control.mean, Math.sqrt(a + b), df, alpha);
  const rel = relativeLift(control.mean, a, treatment.mean, b);
  const relative = effect(rel.estimate, rel.se, df, alpha);
  return { ...base, absolute, relative, df: absolute ? df : null };
}

/** Two means from {n, Σx, Σx²}. */
export function compareMeans(control: MeanStats, treatment: MeanStats, options?: TestOptions): Comparison {
  return welch(meanMoments(control), meanMoments(treatment), options);
}

/** Two proportions from {n, successes}: unpooled Bernoulli variances, Welch df (see the header). */
export function compareProportions(control: ProportionStats, treatment: ProportionStats, options?: TestOptions): Comparison {
  return welch(proportionMoments(control), proportionMoments(treatment), options);
}

/** Two ratio metrics by the delta method (moments.ts). */
export function compareRatios(control: RatioStats, treatment: RatioStats, options?: TestOptions): Comparison {
  return welch(ratioMoments(control), ratioMoments(treatment), options);
}
