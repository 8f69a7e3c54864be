/**
 * The statistics of a guarded rollout, pure (no store, no clock), so that
 * the A/A simulation can run them hundreds of times.
 *
 * Each stage compares the units that got the new value with those that kept
 * the old one, by the always-valid sequential test the experiments use
 * (mSPRT, stats/sequential.ts): the monitor may look every minute without
 * inflating false alarms. A regression is a confidence sequence lying wholly
 * on the worse side of the tolerated change.
 *
 * The false alarm rate is for the whole rollout: it is split evenly over the
 * stages that have both groups and over the watched metrics (Bonferroni),
 * and each test is two-sided while only one side stops the rollout, so the
 * chance that a harmless change is stopped is at most the rate.
 */
import type { VariantStats } from "../../lib/eventstore/types";
import { meanMoments, proportionMoments, ratioMoments } from "../experiments/stats/moments";
import { sequentialTest } from "../experiments/stats/sequential";
import type { Moments, SequentialState } from "../experiments/stats/types";
import { MIN_UNITS_PER_GROUP, type MetricCheck, type Stage, type WatchedMetric } from "./types";

/** Stages with a control group: those between 0 % and 100 %. */
export function comparedStages(stages: Stage[]): number {
  return stages.filter((s) => s.percent > 0 && s.percent < 100).length;
}

/** The level of each test: the rollout's false alarm rate over its compared stages and metrics. */
export function testAlpha(falseAlarmRate: number, stages: Stage[], metrics: number): number {
  return falseAlarmRate / Math.max(1, comparedStages(stages)) / Math.max(1, metrics);
}

const EMPTY: VariantStats = { variant: "", n: 0, sumX: 0, sumXX: 0, sumY: 0, sumYY: 0, sumXY: 0 };

/** The store's second-order sums are about its shifts (VariantStats), passed on so that nothing cancels. */
function momentsOf(test: MetricCheck["test"], s: VariantStats): Moments {
  if (test === "ratio") return ratioMoments({ n: s.n, sumX: s.sumX, sumY: s.sumY ?? 0, sumXX: s.sumXX, sumYY: s.sumYY ?? 0, sumXY: s.sumXY ?? 0, shiftX: s.shiftX, shiftY: s.shiftY });
  if (test === "proportion") return proportionMoments({ n: s.n, successes: s.sumX });
  return meanMoments({ n: s.n, sum: s.sumX, sumSq: s.sumXX, shift: s.shiftX });
}

const finite = (v: number) => (Number.isFinite(v) ? v : null);

/**
 * One watched metric at one look: the old and new groups' sums in, the
 * difference (new − old) with its confidence sequence and whether it is a
 * regression out. `previous` is the same stage's and metric's last look, so
 * the p-value and the sequence stay monotone from look to look.
 */
export function judgeMetric(
  watch: WatchedMetric,
  test: MetricCheck["test"],
  sums: { old?: VariantStats; new?: VariantStats },
  alpha: number,
  previous?: SequentialState | null,
): MetricCheck {
  const old = momentsOf(test, sums.old ?? EMPTY);
  const neu = momentsOf(test, sums.new ?? EMPTY);
  const check: MetricCheck = {
    metric: watch.metric,
    direction: watch.direction,
    tolerance: watch.tolerance,
    test,
    old: { n: old.n, mean: finite(old.mean) },
    new: { n: neu.n, mean: finite(neu.mean) },
    estimate: null,
    interval: null,
    pValue: null,
    alpha,
    regression: false,
  };
  if (old.n < MIN_UNITS_PER_GROUP || neu.n < MIN_UNITS_PER_GROUP) return check;
  const seq = sequentialTest(old, neu, { alpha, previous });
  if (!seq) return check;
  check.estimate = seq.estimate;
  check.interval = seq.confidenceSequence;
  check.pValue = seq.pValue;
  const tolerated = watch.tolerance * Math.abs(old.mean);
  check.regression = watch.direction === "lower" ? seq.confidenceSequence[0] > tolerated : seq.confidenceSequence[1] < -tolerated;
  return check;
}

/** The previous look's state of one metric, when it was in the same stage at the same level. */
export function previousState(last: { stage: number; metrics: MetricCheck[] } | null, stage: number, metric: string, alpha: number): SequentialState | null {
  if (!last || last.stage !== stage) return null;
  const m = last.metrics.find((x) => x.metric === metric);
  if (!m || m.pValue === null || m.interval === null || m.alpha !== alpha) return null;
  return { pValue: m.pValue, confidenceSequence: m.interval };
}

/** The first regression, said so a person can check it; null when none. */
export function regressionOf(metrics: MetricCheck[]): { check: MetricCheck; reason: string } | null {
  for (const m of metrics) {
    if (!m.regression || m.estimate === null || m.interval === null) continue;
    const rel = m.old.mean ? ` (${m.estimate >= 0 ? "+" : ""}${((m.estimate / Math.abs(m.old.mean)) * 100).toFixed(1)} %)` : "";
    const fmt = (v: number) => Number(v.toPrecision(3)).toString();
    const reason =
      `${m.metric} got ${m.direction === "lower" ? "higher" : "lower"} with the change: ${fmt(m.new.mean ?? 0)} against ${fmt(m.old.mean ?? 0)} per unit, ` +
      `difference ${fmt(m.estimate)}${rel}, ${((1 - m.alpha) * 100).toPrecision(4)} % interval [${fmt(m.interval[0])}, ${fmt(m.interval[1])}], ` +
      `beyond the tolerated ${(m.tolerance * 100).toFixed(1)} % (${m.new.n} units with it, ${m.old.n} without)`;
    return { check: m, reason };
  }
  return null;
}
