/**
 * CUPED (Deng, Xu, Kohavi, Walker, WSDM 2013): subtract from each unit's
 * metric x the part its own pre-period value explains, x − θ·(pre − μpre).
 * The pre-period happened before assignment, so it is independent of the
 * variant: the adjusted means stay unbiased for the same effect, and the
 * variance shrinks by the factor (1 − ρ²), ρ being the correlation of x
 * and pre. Everything then goes through the same Welch / Bayesian /
 * sequential code as plain means.
 *
 * Choices:
 * - θ = pooled within-arm cov(x, pre) / pooled within-arm var(pre), one θ for
 *   all arms, as in the paper: every arm is adjusted by the same function of
 *   its pre-period, which is easy to explain. (A per-arm θ, Lin 2013, gains
 *   a little only when the treatment changes the slope.) Pooling WITHIN
 *   arms keeps the treatment's shift of x out of the covariance.
 * - μpre is the grand mean over all arms, so the control and treatment are
 *   shifted towards the same point and the adjusted means stay on the
 *   metric's own scale (which the relative lift needs).
 * - θ is estimated from the same data and then treated as known, as in the
 *   paper: the error is O(1/n), and the A/A check in the test file shows
 *   the false-positive rate is unaffected.
 */
import { sampleCovariance, sampleVariance } from "./moments";
import type { CovariateStats, MeanStats, Moments } from "./types";

/** One arm of a mean metric with its pre-period covariate. */
export type CupedArm = MeanStats & CovariateStats;

export type CupedResult = {
  theta: number;
  /** Adjusted moments, in the order of the arms given. */
  arms: Moments[];
  /** Per arm, 1 − adjusted variance / raw variance (0 when nothing is explained). */
  varianceReduction: number[];
};

/** θ and the adjusted moments of every arm (control and all treatments together, so they share θ). */
export function cuped(arms: CupedArm[]): CupedResult {
  let cov = 0;
  let varPre = 0;
  let totalN = 0;
  let totalPre = 0;
  for (const a of arms) {
    if (a.n >= 2) {
      // Unnormalised within-arm co-moments; their sums are the pooled ones up to the common (N − k).
      // About the arm's shifts (see MeanStats), so nothing cancels when the means dwarf the spreads.
      const dx = a.sum - a.n * (a.shift ?? 0);
      const dp = a.sumPre - a.n * (a.shiftPre ?? 0);
      cov += a.sumXPre - (dx * dp) / a.n;
      varPre += a.sumPreSq - (dp * dp) / a.n;
    }
    totalN += a.n;
    totalPre += a.sumPre;
  }
  // A covariate without spread explains nothing: θ = 0 leaves the arms as they were.
  const theta = varPre > 0 && Number.isFinite(cov / varPre) ? cov / varPre : 0;
  const grandPre = totalN > 0 ? totalPre / totalN : 0;
  const adjusted = arms.map((a): Moments => {
    const mean = a.n > 0 ? a.sum / a.n - theta * (a.sumPre / a.n - grandPre) : NaN;
    const vx = sampleVariance(a.n, a.sum, a.sumSq, a.shift);
    const vp = sampleVariance(a.n, a.sumPre, a.sumPreSq, a.shiftPre);
    const cxp = sampleCovariance(a.n, a.sum, a.sumPre, a.sumXPre, a.shift, a.shiftPre);
    // var(x − θ·pre) = var x − 2θ·cov(x, pre) + θ²·var pre, per arm with its own moments.
    const v = vx - 2 * theta * cxp + theta * theta * vp;
    return { n: a.n, mean, variance: Number.isNaN(v) ? NaN : Math.max(0, v) };
  });
  const varianceReduction = arms.map((a, i) => {
    const raw = sampleVariance(a.n, a.sum, a.sumSq, a.shift);
    const reduction = 1 - adjusted[i].variance / raw;
    return raw > 0 && Number.isFinite(reduction) ? reduction : 0;
  });
  return { theta, arms: adjusted, varianceReduction };
}
