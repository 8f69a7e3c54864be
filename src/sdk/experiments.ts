/**
 * Experiment assignment: which variant a unit gets. One implementation,
 * imported by the server (OFREP, analysis checks) and bundled into the SDK,
 * so every server and every SDK gives a unit the same variant.
 *
 * 1. The unit's segment in the experiment's universe (`segmentOf`): a unit
 *    in the universe's holdout, or outside the experiment's allocation, is in
 *    no variant. Allocations of running experiments never overlap, so a unit
 *    keeps its variant when other experiments start or stop.
 * 2. A targeting gate, when the experiment names one, must let the unit through.
 * 3. The variant: the experiment's own salted hash of the unit id over the
 *    variants' cumulative weights (independent of the segment, so a variant
 *    is not a contiguous slice of the allocation).
 */
import { bucketOf } from "./gates";
import { type PublishedUniverse, type SegmentRange, inRange, segmentOf } from "./universes";

export type ExperimentVariant = { key: string; weight: number; value: unknown };

/** An experiment as the snapshot publishes it (`experiments: {name: PublishedExperiment}`), running ones only. */
export type PublishedExperiment = {
  id: string;
  /** The universe's name (`universes` in the same snapshot). */
  universe: string;
  salt: string;
  /** `[start, end)` in the universe's segments. */
  allocation: SegmentRange;
  /** The control first. Weights are relative (they need not sum to 1). */
  variants: ExperimentVariant[];
  /** A gate the unit must pass to be in the experiment, or null. */
  gate: string | null;
};

export type Assignment = { variant: string; value: unknown; reason: "holdout" | "unallocated" | "targeting" | "assigned" };

const NOT_IN = (reason: Assignment["reason"]): Assignment => ({ variant: "", value: undefined, reason });

/**
 * The unit's variant, or why it has none (`variant` empty). `passesGate` is
 * asked only when the unit is in the allocation and the experiment names a
 * gate. No allocation, no string work beyond two hashes: well under 2 µs.
 */
export function assignVariant(
  experiment: PublishedExperiment,
  universe: Pick<PublishedUniverse, "salt" | "holdout_range">,
  unitId: string,
  passesGate?: (gate: string) => boolean,
): Assignment {
  const segment = segmentOf(universe.salt, unitId);
  if (inRange(segment, universe.holdout_range)) return NOT_IN("holdout");
  if (!inRange(segment, experiment.allocation)) return NOT_IN("unallocated");
  if (experiment.gate !== null && !(passesGate?.(experiment.gate) ?? false)) return NOT_IN("targeting");
  const variants = experiment.variants;
  let total = 0;
  for (const v of variants) total += v.weight > 0 ? v.weight : 0;
  if (total <= 0 || variants.length === 0) return NOT_IN("unallocated");
  const point = bucketOf(experiment.salt, unitId) * total;
  let cumulative = 0;
  for (const v of variants) {
    cumulative += v.weight > 0 ? v.weight : 0;
    if (point < cumulative) return { variant: v.key, value: v.value, reason: "assigned" };
  }
  // Floating-point edge at the very top: the last variant with weight.
  const last = [...variants].reverse().find((v) => v.weight > 0)!;
  return { variant: last.key, value: last.value, reason: "assigned" };
}
