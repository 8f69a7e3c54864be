import type { Store } from "../../lib/store";
import type { MetricAnalysis, SequentialState } from "./stats";
import { looksOf, saveLook } from "./store";

/** Units every arm needs before a look is remembered (see lookAt). */
export const MIN_UNITS_PER_ARM = 300;

/**
 * Every read of an experiment's results is a look, and the always-valid
 * test is valid over all of them only if each look starts from the last
 * (sequential.ts: the p-value is the smallest over looks, the confidence
 * sequence the intersection). Without this memory each look's p was valid on
 * its own, but the value shown could rise between looks, which reads as the
 * evidence weakening when only the noise moved.
 *
 * A look's state counts only under the same basis: the same metric
 * definition (its compiled measures), the same test and the same settings
 * (the statistic, the significance threshold, CUPED or not). Another basis
 * starts the memory afresh: a p-value of one test is no bound for
 * another's. Later looks keep the first look's mixing variance τ²
 * (sequential.ts says why).
 *
 * Nothing is remembered until every arm has MIN_UNITS_PER_ARM units: the
 * test assumes a normal difference, which the first handfuls of units are
 * not, and a lucky early p would be kept for the experiment's life.
 *
 * The read, the statistics and the write are one transaction under a lock
 * per experiment and metric, so two looks at once (two dashboards, the
 * guardrail round) cannot both start from the same state and lose one.
 * The sums come from the event store before, outside the transaction: the
 * statistics themselves take well under a millisecond.
 */
export async function lookAt(
  store: Store,
  look: { experimentId: string; metricId: string; basis: string; at: string; variants: string[]; smallestArm: number },
  analyse: (previous: (SequentialState | null)[]) => MetricAnalysis,
): Promise<MetricAnalysis> {
  if (look.smallestArm < MIN_UNITS_PER_ARM) return analyse([]);
  return store.write(async (tx) => {
    await tx.lock(`experiment-looks:${look.experimentId}:${look.metricId}`);
    const kept = new Map((await looksOf(tx, look.experimentId, look.metricId)).filter((r) => r.basis === look.basis).map((r) => [r.variant, r]));
    // previous[k] belongs to the treatment in arm k + 1 (arm 0 is the control).
    const previous = look.variants.slice(1).map((variant): SequentialState | null => {
      const row = kept.get(variant);
      return row ? { pValue: row.p_value, confidenceSequence: [row.cs_low, row.cs_high], tau2: row.tau2 } : null;
    });
    const analysis = analyse(previous);
    for (const v of analysis.variants) {
      if (!v.sequential) continue;
      const variant = look.variants[v.arm]!;
      const [low, high] = v.sequential.confidenceSequence;
      const state = { variant, basis: look.basis, p_value: v.sequential.pValue, cs_low: low, cs_high: high, tau2: v.sequential.tau2, looks: (kept.get(variant)?.looks ?? 0) + 1 };
      await saveLook(tx, look.experimentId, look.metricId, state, look.at);
    }
    return analysis;
  });
}
