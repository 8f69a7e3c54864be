/**
 * Sufficient statistics → Moments ({n, mean, variance per unit}), the one
 * shape every test consumes. Each metric kind decides here how its variance
 * is estimated; the tests downstream do not know which kind they are reading.
 */
import type { MeanStats, Moments, ProportionStats, RatioStats } from "./types";

/**
 * Sample variance from sums, with Bessel's correction: Σx and Σ(x − shift)²
 * (see MeanStats). With d = Σ(x − shift) = Σx − n·shift it is
 * (Σ(x − shift)² − d²/n)/(n − 1): with the shift near the mean d is small,
 * so nothing cancels (computing d from Σx costs rounding of order
 * ε·|Σx|, which enters squared, negligibly). With shift 0 it is the raw
 * formula, which loses every digit once mean/sd passes about 1e7. Clamped
 * at 0 so rounding never yields a negative variance.
 */
export function sampleVariance(n: number, sum: number, sumSq: number, shift = 0): number {
  if (n < 2) return NaN;
  const d = sum - n * shift;
  return Math.max(0, (sumSq - (d * d) / n) / (n - 1));
}

/** Sample covariance from sums, with Bessel's correction; Σ(x − shiftX)(y − shiftY) about the shifts as in sampleVariance. */
export function sampleCovariance(n: number, sumX: number, sumY: number, sumXY: number, shiftX = 0, shiftY = 0): number {
  if (n < 2) return NaN;
  return (sumXY - ((sumX - n * shiftX) * (sumY - n * shiftY)) / n) / (n - 1);
}

/** A per-unit numeric metric: the sample mean and the sample variance. */
export function meanMoments(s: MeanStats): Moments {
  return { n: s.n, mean: s.n > 0 ? s.sum / s.n : NaN, variance: sampleVariance(s.n, s.sum, s.sumSq, s.shift) };
}

/**
 * A 0/1 metric: p and the Bernoulli variance p(1 − p), without Bessel's
 * correction. That is the formulation that reproduces the NOTES.md binomial
 * vector (14/28 vs 16/30 → relative Δ 0.06667, p 0.80707) through the Welch
 * routine; with n/(n − 1) it gives 0.81038. The two agree to 1/n, which is
 * nothing at the sample sizes an experiment reads.
 */
export function proportionMoments(s: ProportionStats): Moments {
  const p = s.n > 0 ? s.successes / s.n : NaN;
  return { n: s.n, mean: p, variance: p * (1 - p) };
}

/**
 * A ratio metric ΣX/ΣY by the delta method. The unit, not the event, is
 * what is randomized, so X and Y of one unit are correlated and the
 * naive variance (events as independent) is too small. First-order Taylor
 * expansion of X̄/Ȳ around (μx, μy) gives the per-unit variance
 *   var(X)/μy² − 2·μx·cov(X,Y)/μy³ + μx²·var(Y)/μy⁴,
 * which divided by n is the estimator's squared standard error (Deng et al.,
 * "Applying the Delta Method in Metric Analytics", KDD 2018).
 */
export function ratioMoments(s: RatioStats): Moments {
  const { n } = s;
  if (n < 1) return { n, mean: NaN, variance: NaN };
  const mx = s.sumX / n;
  const my = s.sumY / n;
  const vx = sampleVariance(n, s.sumX, s.sumXX, s.shiftX);
  const vy = sampleVariance(n, s.sumY, s.sumYY, s.shiftY);
  const cxy = sampleCovariance(n, s.sumX, s.sumY, s.sumXY, s.shiftX, s.shiftY);
  // my = 0 (no denominator at all) leaves mean and variance NaN: reported as null, never thrown.
  const variance = vx / my ** 2 - (2 * mx * cxy) / my ** 3 + (mx ** 2 * vy) / my ** 4;
  // Math.max(0, NaN) is NaN: an undefined variance stays undefined (reported as null), never 0.
  return { n, mean: mx / my, variance: Number.isNaN(variance) ? NaN : Math.max(0, variance) };
}
