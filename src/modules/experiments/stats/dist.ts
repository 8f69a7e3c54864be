/**
 * The doors to the distributions, so that every test reads its tails the
 * same way. Central quantiles (interval multipliers) and Student's t come
 * from jStat; the tails that decide p-values, chances and losses far out
 * are computed here, because jStat's are `1 − cdf` or lose their digits:
 * its normal cdf is 2 % off at z = −8 and 0 below −8.5, and its χ² upper
 * tail (1 − cdf) is 0 beyond χ² ≈ 72 (one degree of freedom).
 *
 * - Normal tail: Φ̄(z) = φ(z)·R(z) with R the Mills ratio, by its continued
 *   fraction R(z) = 1/(z + 1/(z + 2/(z + 3/(z + …)))) for z ≥ 3 (evaluated
 *   from the bottom up, which is stable), and from the all-positive series
 *   erf(x) = 2x/√π·e^(−x²)·Σ (2x²)ⁿ/(1·3·…·(2n + 1)) below. Relative error
 *   about 1e-15 everywhere; 0 only where the true value is below the
 *   smallest double (z > 38.5).
 * - χ² tail: the regularized upper incomplete gamma Q(df/2, x/2), by its
 *   series (1 − P) below x = a + 1 and its continued fraction (modified
 *   Lentz) above, where Q is small: the fraction gives Q itself, not 1 − P
 *   (Numerical Recipes §6.2). ln Γ of the half-integers df/2 is exact.
 */
import type jStatType from "jstat";

let loaded: typeof jStatType | undefined;
/** jStat, loaded on the first test rather than at every server start (evaluating it costs milliseconds of the start). */
function jStat(): typeof jStatType {
  // A CommonJS module: require() gives what `import jStat from "jstat"` did, its module.exports.
  loaded ??= require("jstat") as typeof jStatType;
  return loaded;
}

/**
 * Above this many degrees of freedom Student's t is the normal to 1e-7 and
 * jStat's t quantile drifts (at 1e9 df it answers 1.95698 for 1.95996; at
 * Infinity, NaN), so the normal stands in.
 */
const NORMAL_DF = 1e6;

const SQRT_2PI = Math.sqrt(2 * Math.PI);
const SQRT_PI = Math.sqrt(Math.PI);

/** Standard normal density. */
export function normalPdf(z: number): number {
  return Math.exp(-0.5 * z * z) / SQRT_2PI;
}

/** Depth of the continued fractions below: at z = 3 (the slowest case used) 400 levels agree with 800 to 1e-16. */
const CF_DEPTH = 400;

/** c(z) = 1/(z + 2/(z + 3/(z + …))): the tail of the Mills ratio's fraction, R(z) = 1/(z + c(z)). For z ≥ 3. */
function millsTail(z: number): number {
  let t = 0;
  for (let k = CF_DEPTH; k >= 2; k--) t = k / (z + t);
  return 1 / (z + t);
}

/** erfc(x) for 0 ≤ x < 3/√2 by the positive series of erf (no cancellation inside; erfc ≥ 0.0027 here, so 1 − erf keeps its digits). */
function erfcSmall(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 0; n < 200; n++) {
    term *= (2 * x2) / (2 * n + 3);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return 1 - ((2 / SQRT_PI) * Math.exp(-x2) * sum);
}

/** Upper tail P(Z > z) of the standard normal, with its relative accuracy kept far out (see the header). */
export function normalSf(z: number): number {
  if (Number.isNaN(z)) return NaN;
  if (z < 0) return 1 - normalSf(-z);
  if (z >= 3) return z > 40 ? 0 : normalPdf(z) / (z + millsTail(z));
  return 0.5 * erfcSmall(z / Math.SQRT2);
}

/** Standard normal distribution function P(Z ≤ z) = Φ̄(−z): accurate in the lower tail too. */
export function normalCdf(z: number): number {
  return normalSf(-z);
}

/**
 * The normal loss E[max(Z − z, 0)] = φ(z) − z·Φ̄(z). Far in the upper tail
 * both terms are nearly equal and their difference loses every digit (it
 * went negative for z in 8–8.5 with jStat's cdf); there it is
 * φ(z)·c/(z + c) with c the Mills fraction's tail (1 − z·R = c·R), a
 * product of positive numbers. Never negative.
 */
export function normalLoss(z: number): number {
  if (z >= 3) {
    if (z > 40) return 0;
    const c = millsTail(z);
    return (normalPdf(z) * c) / (z + c);
  }
  return Math.max(0, normalPdf(z) - z * normalSf(z));
}

/** Two-sided p-value of a t statistic: 2·F(−|t|), the tail itself, so small p-values keep their digits. */
export function tTwoSidedP(t: number, df: number): number {
  const x = -Math.abs(t);
  const tail = df > NORMAL_DF ? normalCdf(x) : jStat().studentt.cdf(x, df);
  return Math.min(1, 2 * tail);
}

/** The (1 − alpha/2) quantile of Student's t: the half-width multiplier of a two-sided interval. */
export function tCritical(alpha: number, df: number): number {
  return df > NORMAL_DF ? jStat().normal.inv(1 - alpha / 2, 0, 1) : jStat().studentt.inv(1 - alpha / 2, df);
}

/** The (1 − alpha/2) standard normal quantile. */
export function zCritical(alpha: number): number {
  return jStat().normal.inv(1 - alpha / 2, 0, 1);
}

/** ln Γ(a) for a a positive multiple of 1/2 (what χ² needs), exactly by the recurrence from Γ(1) = 1 and Γ(1/2) = √π. */
function lnGammaHalf(a: number): number {
  let x = Number.isInteger(a) ? 1 : 0.5;
  let out = Number.isInteger(a) ? 0 : Math.log(SQRT_PI);
  for (; x < a; x++) out += Math.log(x);
  return out;
}

/** Regularized upper incomplete gamma Q(a, x) for a a multiple of 1/2 (see the header). */
function gammaQ(a: number, x: number): number {
  if (!(x > 0)) return 1;
  if (!Number.isFinite(x)) return 0;
  const front = Math.exp(-x + a * Math.log(x) - lnGammaHalf(a));
  if (x < a + 1) {
    // P by its series Σ xⁿ/(a(a+1)…(a+n)), then Q = 1 − P (Q is not small here).
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 10_000; n++) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return Math.max(0, 1 - front * sum);
  }
  // Q by its continued fraction 1/(x + 1 − a − 1·(1 − a)/(x + 3 − a − 2·(2 − a)/(x + 5 − a − …))), modified Lentz.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return front * h;
}

/** Upper tail P(χ²_df ≥ x), the survival function itself (accurate far out: 1.5e-23 at x = 100, df = 1). */
export function chiSquareSf(x: number, df: number): number {
  if (!(df > 0) || !Number.isInteger(2 * df)) throw new RangeError(`chiSquareSf: df must be a positive multiple of 1/2, got ${df}`);
  return gammaQ(df / 2, x / 2);
}

/** Refuses an alpha that would make intervals meaningless (a programming error upstream, not user data). */
export function checkAlpha(alpha: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  return alpha;
}
