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
 * - relative: r = m_t/m_c − 1 with the delta-method variance
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
  if (!(se > 0) || !Number.isFinite(estimate) || !Number.isFinite(df)) return null;
  const half = tCritical(alpha, df) * se;
  const pValue = tTwoSidedP(estimate / se, df);
  return { estimate, se, ci: [estimate - half, estimate + half], pValue, significant: pValue < alpha };
}

export function summarize(m: Moments): ArmSummary {
  return { n: m.n, mean: finiteOrNull(m.mean), variance: finiteOrNull(m.variance) };
}

/**
 * The delta-method relative lift r = m_t/m_c − 1 and its standard error,
 * shared with the Bayesian side (which only swaps the variances for
 * posterior ones). Undefined (NaN) when the control mean is 0.
 */
export function relativeLift(mc: number, vc: number, mt: number, vt: number): { estimate: number; se: number } {
  if (mc === 0 || !Number.isFinite(mc)) return { estimate: NaN, se: NaN };
  return { estimate: mt / mc - 1, se: Math.sqrt(vt / mc ** 2 + (mt ** 2 * vc) / mc ** 4) };
}

/** Welch's test of treatment against control, absolute and relative. */
export function welch(control: Moments, treatment: Moments, options: TestOptions = {}): Comparison {
  const alpha = checkAlpha(options.alpha ?? 0.05);
  const a = sq(control);
  const b = sq(treatment);
  const df = welchDf(control, treatment);
  const absolute = effect(treatment.mean - control.mean, Math.sqrt(a + b), df, alpha);
  const rel = relativeLift(control.mean, a, treatment.mean, b);
  const relative = effect(rel.estimate, rel.se, df, alpha);
  return { control: summarize(control), treatment: summarize(treatment), absolute, relative, df: absolute ? df : null, alpha };
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
