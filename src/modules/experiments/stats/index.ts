/**
 * Experiment statistics: pure functions over per-variant sufficient
 * statistics (no HTTP, no store). analyzeMetric() is the one entry point the
 * experiments module needs per metric; srmCheck() runs once per experiment
 * on the exposure counts. The pieces are exported for tests and for anyone
 * who wants one number. README.md in this folder lists every formulation and
 * the vector that pins it.
 */
import { type BayesianOptions, bayesianFromMoments, bayesianProportions } from "./bayesian";
import { type CupedArm, cuped } from "./cuped";
import { degenerateReason, relativeReason, welch } from "./frequentist";
import { meanMoments, proportionMoments, ratioMoments } from "./moments";
import { type SequentialOptions, sequentialTest } from "./sequential";
import type { BayesianResult, Comparison, CovariateStats, MeanStats, Moments, ProportionStats, RatioStats, SequentialResult, SequentialState } from "./types";

export * from "./types";
export { bayesian, bayesianFromMoments, bayesianProportions, betaPosterior, normalPosterior } from "./bayesian";
export { cuped, type CupedArm, type CupedResult } from "./cuped";
export { compareMeans, compareProportions, compareRatios, degenerateReason, relativeLift, relativeReason, welch, welchDf } from "./frequentist";
export { chiSquareSf, normalCdf, normalLoss, normalSf } from "./dist";
export { meanMoments, proportionMoments, ratioMoments, sampleCovariance, sampleVariance } from "./moments";
export { DEFAULT_HORIZON_PER_ARM, mixingVariance, optimalMixingRatio, sequentialTest } from "./sequential";
export { SRM_THRESHOLD, srmCheck } from "./srm";

/** One metric's sufficient statistics for every arm, the control first. Covariate sums are optional per arm. */
export type MetricArms =
  | { kind: "mean"; arms: (MeanStats & Partial<CovariateStats>)[] }
  /** With covariates, `sumSq` and `shift` may carry Σ(x − shift)² of the 0/1 values (MeanStats); absent, Σx² = successes. */
  | { kind: "proportion"; arms: (ProportionStats & Partial<CovariateStats> & { sumSq?: number; shift?: number })[] }
  | { kind: "ratio"; arms: RatioStats[] };

export type AnalysisOptions = {
  /** The project's significanceThreshold: two-sided level of tests, and (1 − alpha) intervals. Default 0.05. */
  alpha?: number;
  /** Apply CUPED when every arm carries covariate sums (mean and proportion metrics). Default true. */
  cuped?: boolean;
  /**
   * Compute the always-valid result too. `previous[k]` is the state the
   * last look returned for variants[k] (arms[k + 1]), see sequential.ts;
   * omit the object to skip the sequential test.
   */
  sequential?: Omit<SequentialOptions, "alpha" | "previous"> & { previous?: (SequentialState | null | undefined)[] };
};

export type VariantAnalysis = {
  /** Index of the treatment in the arms given (1 = first treatment). */
  arm: number;
  frequentist: Comparison;
  bayesian: BayesianResult | null;
  sequential: SequentialResult | null;
  /**
   * Why a result above is null, in words (empty when all are computed): the
   * caller shows them as warnings, so that "inconclusive" is never silent.
   */
  notes: string[];
};

export type MetricAnalysis = {
  kind: MetricArms["kind"];
  /** Null when CUPED was not applied (off, a ratio metric, or an arm without covariate sums). */
  cuped: { theta: number; varianceReduction: number[] } | null;
  /** One entry per treatment, each against the control (arms[0]). */
  variants: VariantAnalysis[];
};

function hasCovariate(a: Partial<CovariateStats>): a is CovariateStats {
  return typeof a.sumPre === "number" && typeof a.sumPreSq === "number" && typeof a.sumXPre === "number";
}

/**
 * Frequentist, Bayesian and (if asked) sequential results of every
 * treatment against the control. All three are computed whatever the
 * project's `analysis.method`, because they cost microseconds and the
 * dashboard may show one beside the other; the method decides which one
 * the verdict reads.
 */
export function analyzeMetric(metric: MetricArms, options: AnalysisOptions = {}): MetricAnalysis {
  if (metric.arms.length < 2) throw new RangeError("analyzeMetric needs a control and at least one treatment");
  const alpha = options.alpha ?? 0.05;
  let moments: Moments[];
  let cupedInfo: MetricAnalysis["cuped"] = null;
  const withCovariates = (options.cuped ?? true) && metric.kind !== "ratio" && metric.arms.every(hasCovariate);
  if (withCovariates) {
    // A proportion is the mean of a 0/1 value: Σx = Σx² = successes.
    const arms: CupedArm[] =
      metric.kind === "mean"
        ? (metric.arms as (MeanStats & CovariateStats)[])
        : (metric.arms as (ProportionStats & CovariateStats & { sumSq?: number; shift?: number })[]).map((a) => ({
            n: a.n,
            sum: a.successes,
            sumSq: a.sumSq ?? a.successes,
            shift: a.shift ?? 0,
            sumPre: a.sumPre,
            sumPreSq: a.sumPreSq,
            sumXPre: a.sumXPre,
            shiftPre: a.shiftPre,
          }));
    const result = cuped(arms);
    moments = result.arms;
    cupedInfo = { theta: result.theta, varianceReduction: result.varianceReduction };
  } else if (metric.kind === "mean") {
    moments = metric.arms.map(meanMoments);
  } else if (metric.kind === "proportion") {
    moments = metric.arms.map(proportionMoments);
  } else {
    moments = metric.arms.map(ratioMoments);
  }
  const bayesOptions: BayesianOptions = { alpha };
  const variants: VariantAnalysis[] = [];
  for (let i = 1; i < moments.length; i++) {
    // Beta posteriors only for unadjusted proportions; CUPED-adjusted values are no longer 0/1.
    const beta = metric.kind === "proportion" && !withCovariates;
    const bayes = beta ? bayesianProportions(metric.arms[0], metric.arms[i], bayesOptions) : bayesianFromMoments(moments[0], moments[i], bayesOptions);
    const seq = options.sequential;
    // The sequential test rests on the same two variances as Welch's: where those are degenerate it is too.
    const degenerate = degenerateReason(moments[0], moments[i], metric.kind === "proportion" && !withCovariates);
    const frequentist = welch(moments[0], moments[i], { alpha });
    const sequential = seq && degenerate === null ? sequentialTest(moments[0], moments[i], { alpha, horizonPerArm: seq.horizonPerArm, tau2: seq.tau2, previous: seq.previous?.[i - 1] ?? null }) : null;
    const notes: string[] = [];
    if (degenerate !== null) {
      const tests = [frequentist.absolute, bayes, sequential].every((r) => r === null) ? "no test" : "no fixed-horizon or sequential test";
      notes.push(`${tests}: ${degenerate}${bayes && beta ? " (the Bayesian reading of Beta posteriors still applies)" : ""}`);
    } else {
      if (frequentist.absolute === null) notes.push("no fixed-horizon test: the difference is beyond double precision");
      else if (frequentist.relative === null) notes.push(`no relative lift: ${relativeReason(moments[0]) ?? "it is beyond double precision"}`);
      if (bayes === null) notes.push("no Bayesian reading: the posterior of the difference cannot be computed (no spread, or beyond double precision)");
      if (seq && sequential === null) notes.push("no sequential test: the difference has no spread or is beyond double precision");
    }
    variants.push({ arm: i, frequentist, bayesian: bayes, sequential, notes });
  }
  return { kind: metric.kind, cuped: cupedInfo, variants };
}
