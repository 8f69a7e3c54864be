/**
 * Inputs and outputs of the experiment statistics. Inputs are per-variant
 * sufficient statistics (sums the store computes in SQL), so nothing here
 * ever sees a raw row; outputs are plain JSON (no NaN or Infinity: a value
 * that cannot be computed is null), so a reply can carry them unchanged.
 */

/**
 * A per-unit numeric metric: count of units, Σx, and the sum of squares
 * Σ(x − shift)² about a shift (default 0: plain Σx²). Any shift gives the
 * same variance in exact arithmetic; one near the mean keeps its digits in
 * floating point, where Σx² − (Σx)²/n cancels catastrophically once the
 * mean dwarfs the spread (values 1e9 ± 1 gave a variance of 0). The event
 * stores centre on each arm's mean (see VariantStats).
 */
export type MeanStats = { n: number; sum: number; sumSq: number; shift?: number };

/** A per-unit 0/1 metric (converted or not). */
export type ProportionStats = { n: number; successes: number };

/**
 * A ratio metric (e.g. revenue per session): per unit a numerator X and a
 * denominator Y, aggregated as ΣX/ΣY. The cross sums are what the delta
 * method needs, because X and Y of one unit are correlated.
 */
export type RatioStats = { n: number; sumX: number; sumY: number; sumXX: number; sumYY: number; sumXY: number; shiftX?: number; shiftY?: number };

/**
 * The pre-period covariate of a unit (its same metric before exposure), for
 * CUPED: Σpre, Σpre² and Σ(x·pre) over the same units as the MeanStats it
 * goes with. A unit without pre-period data counts with pre = 0 (the store's
 * convention; it still reduces variance, just less). Second-order sums
 * about shifts as in MeanStats: Σ(pre − shiftPre)², Σ(x − shift)(pre − shiftPre).
 */
export type CovariateStats = { sumPre: number; sumPreSq: number; sumXPre: number; shiftPre?: number };

/**
 * What every test consumes: one arm's unit count, the mean of its estimator
 * and the per-unit variance, so that variance / n is the estimator's squared
 * standard error. Means, proportions, ratios and CUPED-adjusted means all
 * reduce to this, which is why one Welch routine serves them all.
 */
export type Moments = { n: number; mean: number; variance: number };

/** A two-sided interval [lower, upper]. */
export type Interval = [number, number];

/** One estimated effect (absolute or relative) with its frequentist test. */
export type Effect = {
  estimate: number;
  /** Standard error of the estimate. */
  se: number;
  /** Two-sided (1 − alpha) confidence interval. */
  ci: Interval;
  /** Two-sided p-value against "no effect". */
  pValue: number;
  significant: boolean;
};

/** An arm as the reply shows it (null where undefined, e.g. a ratio whose denominator sums to 0). */
export type ArmSummary = { n: number; mean: number | null; variance: number | null };

/** Fixed-horizon comparison of one treatment with the control. */
export type Comparison = {
  control: ArmSummary;
  treatment: ArmSummary;
  /** Treatment − control; null when undefined (an arm with n < 2, or both variances 0). */
  absolute: Effect | null;
  /** (Treatment − control) / |control|; null also when the control mean is 0. */
  relative: Effect | null;
  /** Welch–Satterthwaite degrees of freedom (null when the test is undefined). */
  df: number | null;
  alpha: number;
};

/** Chance to beat control and credible intervals (see bayesian.ts). */
export type BayesianResult = {
  /** P(treatment's true mean > control's | data). */
  chanceToBeatControl: number;
  /** Posterior mean and (1 − alpha) credible interval of treatment − control. */
  absolute: { estimate: number; sd: number; credibleInterval: Interval };
  /** Same for (treatment − control) / |control| (null when the control's posterior mean is 0). */
  relative: { estimate: number; sd: number; credibleInterval: Interval } | null;
  /** Expected loss (in metric units) of shipping the treatment, and of keeping the control. */
  risk: { treatment: number; control: number };
  alpha: number;
};

/** Always-valid result of the mixture sequential test (see sequential.ts). */
export type SequentialResult = {
  estimate: number;
  /** Always-valid p-value: may be read at any look and only ever decreases. */
  pValue: number;
  /** Always-valid (1 − alpha) confidence sequence of treatment − control; only ever narrows. */
  confidenceSequence: Interval;
  significant: boolean;
  /** The mixing variance τ² used (in squared metric units). */
  tau2: number;
  alpha: number;
};

/**
 * What a caller keeps from the previous look to make the sequential result monotone, and the mixing variance
 * it was read with: Ville's bound holds for one mixture, so the looks after the first keep its τ².
 */
export type SequentialState = { pValue: number; confidenceSequence: Interval; tau2?: number };

/** Sample-ratio-mismatch check (see srm.ts). */
export type SrmResult = {
  chiSquare: number;
  df: number;
  pValue: number;
  expected: number[];
  threshold: number;
  flagged: boolean;
};

/** A number, or null when it is NaN or infinite (JSON has neither). */
export function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}
