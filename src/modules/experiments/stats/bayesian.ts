/**
 * Bayesian reading: the chance that the treatment beats the control, the
 * credible intervals of the difference and of the lift, and the expected
 * loss of each choice.
 *
 * The model, and why:
 * - Each arm's true mean gets its own posterior, independent of the other.
 *   Means and ratios: a flat prior, so the posterior is normal with the
 *   sample mean and variance/n (CLT; the same approximation every
 *   frequentist test here makes). Proportions: a uniform Beta(1, 1) prior,
 *   so the posterior is Beta(1 + successes, 1 + failures), which stays
 *   sensible at 0/n and n/n where the normal's variance p(1 − p) collapses.
 * - The DIFFERENCE of the two posteriors is then approximated by a normal
 *   with the summed moments (for Beta posteriors this is the normal
 *   approximation of the difference; the test file checks it against exact
 *   quadrature of the two Betas). Chance to beat control is P(D > 0) of that
 *   normal: no delta method is involved, so it is exact for normal
 *   posteriors.
 * - The relative lift (μt − μc)/|μc| gets the delta-method normal, as in
 *   frequentist.ts, with the posterior variances (dividing by |μc| keeps
 *   its sign the difference's when the control's mean is negative).
 * - Normal posteriors need spread in both arms: an arm whose units all
 *   have the same value has variance/n = 0, a point posterior that only
 *   says the data are too few (frequentist.ts, degenerateReason). Beta
 *   posteriors are proper at 0/n and n/n, so proportions keep theirs.
 * - Expected loss reads the normal loss function (dist.ts), which stays
 *   positive and accurate far in the tails.
 * - No informative prior: with flat priors the credible intervals coincide
 *   numerically with z intervals, which is the honest default when the
 *   project has not stated a prior belief. A proper prior (e.g. N(0, 0.3²)
 *   on the lift) is a later option.
 */
import { checkAlpha, normalCdf, normalLoss, zCritical } from "./dist";
import { degenerateReason, relativeLift } from "./frequentist";
import type { BayesianResult, Moments, ProportionStats } from "./types";

/** A normal posterior of one arm's true mean: its mean and variance. */
export type Posterior = { mean: number; variance: number };

export type BayesianOptions = {
  /** Credible intervals are (1 − alpha). Default 0.05. */
  alpha?: number;
};

/** Flat prior: N(sample mean, variance / n). */
export function normalPosterior(m: Moments): Posterior {
  return { mean: m.mean, variance: m.n >= 2 ? m.variance / m.n : NaN };
}

/** Uniform prior: Beta(a = 1 + successes, b = 1 + failures), by its mean and variance. */
export function betaPosterior(s: ProportionStats): Posterior {
  const a = 1 + s.successes;
  const b = 1 + s.n - s.successes;
  return { mean: a / (a + b), variance: (a * b) / ((a + b) ** 2 * (a + b + 1)) };
}

/** The Bayesian result from two posteriors; null when the difference has no spread (or no data). */
export function bayesian(control: Posterior, treatment: Posterior, options: BayesianOptions = {}): BayesianResult | null {
  const alpha = checkAlpha(options.alpha ?? 0.05);
  const d = treatment.mean - control.mean;
  const sd = Math.sqrt(control.variance + treatment.variance);
  if (!(sd > 0) || !Number.isFinite(sd) || !Number.isFinite(d)) return null;
  const z = zCritical(alpha);
  const chanceToBeatControl = normalCdf(d / sd);
  // Expected loss E[max(loss, 0)] for D ~ N(d, sd²): shipping the treatment
  // loses −D when D < 0, keeping the control loses D when D > 0; each is
  // sd·L(±d/sd) with L the normal loss E[max(Z − z, 0)].
  const risk = { treatment: sd * normalLoss(d / sd), control: sd * normalLoss(-d / sd) };
  const rel = relativeLift(control.mean, control.variance, treatment.mean, treatment.variance);
  const relInterval: [number, number] = [rel.estimate - z * rel.se, rel.estimate + z * rel.se];
  const relative = Number.isFinite(rel.estimate) && rel.se > 0 && relInterval.every(Number.isFinite) ? { estimate: rel.estimate, sd: rel.se, credibleInterval: relInterval } : null;
  const absolute = { estimate: d, sd, credibleInterval: [d - z * sd, d + z * sd] as [number, number] };
  // Finite inputs can still overflow at the edges of double precision: JSON has no Infinity, so no result.
  if (![...absolute.credibleInterval, risk.treatment, risk.control].every(Number.isFinite)) return null;
  return { chanceToBeatControl, absolute, relative, risk, alpha };
}

/** Means, ratios or CUPED-adjusted means (anything already in Moments form); null where degenerateReason names a reason. */
export function bayesianFromMoments(control: Moments, treatment: Moments, options?: BayesianOptions): BayesianResult | null {
  if (degenerateReason(control, treatment) !== null) return null;
  return bayesian(normalPosterior(control), normalPosterior(treatment), options);
}

/** Proportions with Beta posteriors. */
export function bayesianProportions(control: ProportionStats, treatment: ProportionStats, options?: BayesianOptions): BayesianResult | null {
  if (control.n < 1 || treatment.n < 1) return null;
  return bayesian(betaPosterior(control), betaPosterior(treatment), options);
}
