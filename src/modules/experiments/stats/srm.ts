/**
 * Sample-ratio mismatch: Pearson's χ² goodness of fit of the units counted
 * per variant against the configured weights. A mismatch means assignment
 * or logging is broken (a redirect that drops one arm, a bot filter that
 * hits one variant...), and then no effect estimate can be trusted, which
 * is why every result carries this check.
 *
 * Vector (NOTES.md): [5100, 4900] at 50/50 → χ² 4, p 0.0455: NOT flagged.
 *
 * Why flag at p < 0.001 and not at the experiment's alpha: the check runs on
 * every result of every experiment at every refresh, so at 0.05 one healthy
 * experiment in twenty would cry wolf on any given look, and people learn
 * to ignore the banner. Real mismatches are rarely subtle at experiment
 * sizes (a 51/49 split of 100,000 units meant to be 50/50 is χ² 40,
 * p ≈ 3e-10), so the strict threshold loses almost nothing. 0.001 is also
 * GrowthBook's default (DEFAULT_SRM_THRESHOLD), so numbers compare across
 * tools; it is a parameter so a project can tighten or loosen it.
 */
import { chiSquareSf } from "./dist";
import type { SrmResult } from "./types";

export const SRM_THRESHOLD = 0.001;

/**
 * counts[i] units were seen in variant i, configured with weights[i] (any
 * non-negative scale; they are normalised). A variant with weight 0 that
 * received units is an infinite mismatch (p 0); one that received none is
 * left out of the test and its degrees of freedom.
 */
export function srmCheck(counts: number[], weights: number[], threshold = SRM_THRESHOLD): SrmResult {
  if (counts.length !== weights.length) throw new RangeError(`srmCheck: ${counts.length} counts for ${weights.length} weights`);
  if (weights.some((w) => !(w >= 0) || !Number.isFinite(w))) throw new RangeError("srmCheck: weights must be finite and non-negative");
  if (counts.some((c) => !(c >= 0) || !Number.isFinite(c))) throw new RangeError("srmCheck: counts must be finite and non-negative");
  const total = counts.reduce((s, c) => s + c, 0);
  const weightSum = weights.reduce((s, w) => s + w, 0);
  const expected = weights.map((w) => (weightSum > 0 ? (total * w) / weightSum : 0));
  let chiSquare = 0;
  let cells = 0;
  for (let i = 0; i < counts.length; i++) {
    if (expected[i] > 0) {
      chiSquare += (counts[i] - expected[i]) ** 2 / expected[i];
      cells++;
    } else if (counts[i] > 0) {
      chiSquare = Infinity;
      cells++;
    }
  }
  const df = Math.max(0, cells - 1);
  // No units, or a single variant, leave nothing to test: p 1, not flagged. The survival function itself, not
  // 1 − cdf, which is 0 beyond χ² ≈ 72 (and the warning printed p = 0.00).
  const pValue = df === 0 || total === 0 ? 1 : chiSquareSf(chiSquare, df);
  return { chiSquare: Number.isFinite(chiSquare) ? chiSquare : Number.MAX_VALUE, df, pValue, expected, threshold, flagged: pValue < threshold };
}
