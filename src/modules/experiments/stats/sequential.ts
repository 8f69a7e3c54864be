/**
 * Always-valid inference for people who peek: the mixture sequential
 * probability ratio test (mSPRT) with a normal mixture, as in Johari,
 * Koomen, Pekelis and Walsh, "Always Valid Inference: Continuous Monitoring
 * of A/B Tests" (Operations Research 2022; the Optimizely Stats Engine).
 *
 * The difference estimate d = m_t − m_c is ~N(θ, V), V = v_t/n_t + v_c/n_c.
 * Mixing the likelihood ratio against θ = 0 over θ ~ N(0, τ²) gives
 *   Λ = sqrt(V / (V + τ²)) · exp(τ²·d² / (2·V·(V + τ²))),
 * a nonnegative martingale under the null, so by Ville's inequality
 * P(Λ ever reaches 1/α) ≤ α however often it is read. Hence:
 * - the always-valid p-value is min over looks of 1/Λ;
 * - the confidence sequence is the set of θ whose Λ(θ) < 1/α:
 *   d ± sqrt(V·(V + τ²)/τ² · (2·ln(1/α) + ln((V + τ²)/V))), intersected over
 *   looks.
 * Both are valid at every look at once, so a team may stop the first time
 * p < α (the A/A simulation in the test file checks it under 20 looks).
 *
 * "Over looks" needs memory, and these are pure functions: the caller keeps
 * the previous look's {pValue, confidenceSequence} (per experiment, metric
 * and variant, with unchanged settings) and passes it as `previous`
 * (experiments/looks.ts keeps it in the store: every read of the results is
 * a look). The state carries the τ² of the first look, and later looks mix
 * with it: the minimum over looks is bounded by Ville's inequality for one
 * fixed mixture, not for one re-chosen at every look. Without a state the
 * result is still valid at this look, just not monotone.
 *
 * The mixing variance τ², and why: any fixed τ² gives a valid test; it
 * only decides WHEN the test is most powerful. The half-width above, as a
 * function of r = τ²/V, is smallest where r = 2·ln(1/α) + ln(1 + r)
 * (r ≈ 8.2 at α = 0.05). So τ² is set to r·V_h, V_h being the variance of d
 * at a planned horizon of `horizonPerArm` units per arm: the sequence is
 * tightest when the experiment reaches its planned size, and only a little
 * wider (a log factor) before and after. V_h uses the current per-unit
 * variances (a plug-in, as Johari et al. do), which keeps τ² in the
 * metric's own units so one default fits revenue and conversion alike.
 * Default horizon: 10,000 units per arm, a typical experiment's size here;
 * `tau2` overrides it for anyone who wants to state an effect-size prior.
 *
 * The guarantee assumes d is normal with known V: sound from a few hundred
 * units per arm; the first looks of a tiny experiment are optimistic.
 */
import { checkAlpha } from "./dist";
import type { Interval, Moments, SequentialResult, SequentialState } from "./types";

export const DEFAULT_HORIZON_PER_ARM = 10_000;

export type SequentialOptions = {
  /** Two-sided level; the confidence sequence is (1 − alpha). Default 0.05. */
  alpha?: number;
  /** Planned units per arm at which the sequence should be tightest (see the header). */
  horizonPerArm?: number;
  /** Mixing variance in squared metric units; overrides horizonPerArm. */
  tau2?: number;
  /** The previous look's result for the same comparison and settings, to keep p and the sequence monotone (and its τ², unless `tau2` is given). */
  previous?: SequentialState | null;
};

/** The r = τ²/V that makes the confidence sequence narrowest at V: the fixed point of r = 2·ln(1/α) + ln(1 + r). */
export function optimalMixingRatio(alpha: number): number {
  const c = 2 * Math.log(1 / alpha);
  let r = c;
  // A contraction (derivative 1/(1 + r) < 1/2 here): 30 steps reach double precision.
  for (let i = 0; i < 30; i++) r = c + Math.log1p(r);
  return r;
}

/** Mixing variance τ² for two arms' per-unit variances and a planned horizon. */
export function mixingVariance(control: Moments, treatment: Moments, alpha: number, horizonPerArm = DEFAULT_HORIZON_PER_ARM): number {
  return (optimalMixingRatio(alpha) * (control.variance + treatment.variance)) / horizonPerArm;
}

/** mSPRT of treatment − control at this look; null when the difference has no spread (or an arm has n < 2). */
export function sequentialTest(control: Moments, treatment: Moments, options: SequentialOptions = {}): SequentialResult | null {
  const alpha = checkAlpha(options.alpha ?? 0.05);
  if (control.n < 2 || treatment.n < 2) return null;
  const V = control.variance / control.n + treatment.variance / treatment.n;
  const d = treatment.mean - control.mean;
  const tau2 = options.tau2 ?? options.previous?.tau2 ?? mixingVariance(control, treatment, alpha, options.horizonPerArm);
  if (!(V > 0) || !(tau2 > 0) || !Number.isFinite(d) || !Number.isFinite(tau2)) return null;
  // In logs: Λ overflows a double long before a strong effect stops growing.
  const logLambda = 0.5 * Math.log(V / (V + tau2)) + (tau2 * d * d) / (2 * V * (V + tau2));
  let pValue = Math.min(1, Math.exp(-logLambda));
  const half = Math.sqrt(((V * (V + tau2)) / tau2) * (2 * Math.log(1 / alpha) + Math.log((V + tau2) / V)));
  let cs: Interval = [d - half, d + half];
  const prev = options.previous;
  if (prev) {
    pValue = Math.min(pValue, prev.pValue);
    const lo = Math.max(cs[0], prev.confidenceSequence[0]);
    const hi = Math.min(cs[1], prev.confidenceSequence[1]);
    // An empty intersection happens with probability ≤ α under the model (or when the
    // effect drifted over time); rather than show an empty interval, show this look's.
    if (lo <= hi) cs = [lo, hi];
  }
  return { estimate: d, pValue, confidenceSequence: cs, significant: pValue < alpha, tau2, alpha };
}
