/**
 * The only doors to jStat's distributions, so that every test reads its
 * tails the same way. Nothing here is a hand-written distribution: these
 * wrap jStat's Student-t, normal and χ² functions and guard their edges.
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

/** Two-sided p-value of a t statistic. Computed as 2·F(−|t|), not 2·(1 − F(|t|)), so small p-values keep their digits. */
export function tTwoSidedP(t: number, df: number): number {
  const x = -Math.abs(t);
  const tail = df > NORMAL_DF ? jStat().normal.cdf(x, 0, 1) : jStat().studentt.cdf(x, df);
  return Math.min(1, 2 * tail);
}

/** The (1 − alpha/2) quantile of Student's t: the half-width multiplier of a two-sided interval. */
export function tCritical(alpha: number, df: number): number {
  return df > NORMAL_DF ? jStat().normal.inv(1 - alpha / 2, 0, 1) : jStat().studentt.inv(1 - alpha / 2, df);
}

/** Standard normal distribution function. */
export function normalCdf(z: number): number {
  return jStat().normal.cdf(z, 0, 1);
}

/** Standard normal density. */
export function normalPdf(z: number): number {
  return jStat().normal.pdf(z, 0, 1);
}

/** The (1 − alpha/2) standard normal quantile. */
export function zCritical(alpha: number): number {
  return jStat().normal.inv(1 - alpha / 2, 0, 1);
}

/** Upper tail P(χ²_df ≥ x). */
export function chiSquareUpper(x: number, df: number): number {
  if (!(x > 0)) return 1;
  if (!Number.isFinite(x)) return 0;
  return Math.max(0, 1 - jStat().chisquare.cdf(x, df));
}

/** Refuses an alpha that would make intervals meaningless (a programming error upstream, not user data). */
export function checkAlpha(alpha: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  return alpha;
}
