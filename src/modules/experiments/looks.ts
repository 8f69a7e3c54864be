import type { Store } from "../../lib/store";
import type { MetricAnalysis, SequentialState } from "./stats";
import { looksOf, saveLook } from "./store";

/**
 * Every read of an experiment's results is a look, and the always-valid
 * test is valid over all of them only if each look starts from the last
 * (sequential.ts: the p-value is the smallest over looks, the confidence
 * sequence the intersection). Without this memory each look's p was valid on
 * its own, but the value shown could rise between looks, which reads as the
 * evidence weakening when only the noise moved.
 *
 * A look's state counts only under the same basis: the same test over the
 * same settings (the statistic, the significance threshold, CUPED or not).
 * Another basis starts the memory afresh: a p-value of one test is no bound
 * for another's.
 *
 * The read, the statistics and the write are one transaction under a lock
 * per experiment and metric, so two looks at once (two dashboards, the
 * guardrail round) cannot both start from the same state and lose one.
 * The sums come from the event store before, outside the transaction: the
 * statistics themselves take well under a millisecond.
 */
export async function lookAt(
  store: Store,
  look: { experimentId: string; metricId: string; basis: string; at: string; variants: string[] },
  analyse: (previous: (SequentialState | null)[]) => MetricAnalysis,
): Promise<MetricAnalysis> {
  return store.write(async (tx) => {
    await tx.lock(`experiment-looks:${look.experimentId}:${look.metricId}`);
    const kept = new Map((await looksOf(tx, look.experimentId, look.metricId)).filter((r) => r.basis === look.basis).map((r) => [r.variant, r]));
    // previous[k] belongs to the treatment in arm k + 1 (arm 0 is the control).
    const previous = look.variants.slice(1).map((variant): SequentialState | null => {
      const row = kept.get(variant);
      return row ? { pValue: row.p_value, confidenceSequence: [row.cs_low, row.cs_high] } : null;
    });
    const analysis = analyse(previous);
    for (const v of analysis.variants) {
      if (!v.sequential) continue;
      const variant = look.variants[v.arm]!;
      const [low, high] = v.sequential.confidenceSequence;
      await saveLook(tx, look.experimentId, look.metricId, { variant, basis: look.basis, p_value: v.sequential.pValue, cs_low: low, cs_high: high, looks: (kept.get(variant)?.looks ?? 0) + 1 }, look.at);
    }
    return analysis;
  });
}
