import type { ExperimentStatsQuery, Measure, VariantStats } from "../../lib/eventstore/types";
import type { ServiceContext } from "../../lib/module";
import { upstream } from "../analytics/service";
import type { Guardrail, Variant, WorseWhen } from "./checks";
import { lookAt } from "./looks";
import type { Experiment } from "./types";
import { type BayesianResult, type Comparison, type MetricArms, type SequentialResult, type SrmResult, analyzeMetric, finiteOrNull, sampleVariance, srmCheck } from "./stats";

/** CUPED's covariate: each unit's same metric over this long before its first exposure. */
export const PRE_PERIOD_DAYS = 7;
const DAY_MS = 86_400_000;

export type Direction = "increase" | "decrease" | "inconclusive";

export type TreatmentResult = {
  variant: string;
  frequentist: Comparison;
  bayesian: BayesianResult | null;
  sequential: SequentialResult | null;
  /** What the project's method reads from the results above (see `verdictOf`). */
  verdict: Direction;
  /** Guardrails: the verdict is the move named harmful. */
  harm?: boolean;
};

export type MetricResult = {
  metric: { id: string; name: string; kind: string };
  role: "primary" | "guardrail";
  worseWhen: WorseWhen | null;
  /** The per-unit statistic tested: mean (count, sum), proportion (unique: did it at all), ratio (delta method). */
  test: "mean" | "proportion" | "ratio";
  cuped: { theta: number; varianceReduction: number[]; preDays: number } | null;
  /**
   * Each variant's own value, unadjusted (the tests below compare CUPED-adjusted
   * means when `cuped` is set): units, mean per unit (a ratio: ΣX/ΣY), and the
   * per-unit standard deviation (null for a ratio or fewer than 2 units).
   */
  arms: { variant: string; n: number; mean: number | null; sd: number | null }[];
  treatments: TreatmentResult[];
  /** The statements that computed the sums. */
  sql: string;
};

export type Results = {
  experiment: { id: string; name: string; status: string; startedAt: string | null; stoppedAt: string | null };
  method: "frequentist" | "bayesian";
  alpha: number;
  minSampleDays: number;
  /** Days the experiment has run (to now, or to its stop). */
  sampleDays: number;
  /** True once sampleDays ≥ minSampleDays: before that, the frequentist verdict reads the always-valid sequential test only. */
  minimumReached: boolean;
  window: { from: string | null; to: string | null };
  /**
   * Units first exposed in the window, the units the metrics analyse (and the SRM check counts); `outside`, those
   * first exposed before the start or after the stop (a stale SDK still logging), counted nowhere else.
   */
  exposures: { total: number; firstAt: string | null; lastAt: string | null; outside: number; variants: { variant: string; n: number; expectedShare: number }[] };
  srm: SrmResult;
  metrics: MetricResult[];
  /** Problems worth a look: sample ratio mismatch, no exposures, a metric that could not be read, a result that is null and why. */
  warnings: string[];
};

export type AnalysisSettings = { method: "frequentist" | "bayesian"; significanceThreshold: number; minSampleDays: number };

/**
 * The verdict of one treatment under the project's method.
 * - frequentist: once the minimum sample days are reached, the fixed-horizon
 *   Welch test (absolute effect) decides; before, only the always-valid
 *   sequential test may, because looking early and often is exactly what
 *   inflates a fixed-horizon test's false positives;
 * - bayesian: a chance to beat control of at least 1 − α is an increase, at
 *   most α a decrease.
 */
export function verdictOf(t: Omit<TreatmentResult, "verdict" | "harm">, method: AnalysisSettings["method"], alpha: number, minimumReached: boolean): Direction {
  if (method === "bayesian") {
    const chance = t.bayesian?.chanceToBeatControl;
    if (chance === undefined) return "inconclusive";
    return chance >= 1 - alpha ? "increase" : chance <= alpha ? "decrease" : "inconclusive";
  }
  const effect = minimumReached ? t.frequentist.absolute : t.sequential;
  if (!effect || !effect.significant) return "inconclusive";
  return effect.estimate > 0 ? "increase" : effect.estimate < 0 ? "decrease" : "inconclusive";
}

type MetricPlan = { id: string; name: string; kind: string; role: MetricResult["role"]; worseWhen: WorseWhen | null; measures: Measure[] };

/**
 * Reads the sums from the event store and runs the statistics. `only`
 * restricts the metrics (the guardrail check reads guardrails only).
 */
export async function analyze(ctx: ServiceContext, projectId: string, experiment: Experiment, settings: AnalysisSettings, nowMs: number, only?: "guardrails"): Promise<Results> {
  const store = ctx.services.analytics.eventStore;
  const alpha = settings.significanceThreshold;
  const fromMs = experiment.startedAt ? Date.parse(experiment.startedAt) : null;
  const toMs = experiment.stoppedAt ? Date.parse(experiment.stoppedAt) : nowMs;
  const sampleDays = fromMs === null ? 0 : Math.max(0, (toMs - fromMs) / DAY_MS);
  const minimumReached = fromMs !== null && sampleDays >= settings.minSampleDays;
  const warnings: string[] = [];
  const variants = experiment.variants;
  const weightSum = variants.reduce((s, v) => s + v.weight, 0);

  // The same units as the metrics: first exposed in the window experimentStats reads ([from, to + 1), see below).
  // Counted over all time, exposures a stale SDK logged after the stop flagged a mismatch the analysis never saw.
  const counts = fromMs === null ? { variants: [], firstAt: null, lastAt: null, outside: 0 } : await upstream(store.exposureCounts(projectId, experiment.id, { from: fromMs, to: toMs + 1 }));
  const outside = counts.outside ?? 0;
  const byVariant = new Map(counts.variants.map((c) => [c.variant, c.n]));
  const exposures = variants.map((v) => ({ variant: v.key, n: byVariant.get(v.key) ?? 0, expectedShare: v.weight / weightSum }));
  const total = counts.variants.reduce((s, c) => s + c.n, 0);
  const stray = counts.variants.filter((c) => !variants.some((v) => v.key === c.variant));
  if (stray.length > 0) warnings.push(`Exposures name variants the experiment does not have: ${stray.map((s) => `${s.variant} (${s.n})`).join(", ")}; they are left out`);
  const srm = srmCheck(exposures.map((e) => e.n), variants.map((v) => v.weight));
  if (srm.flagged) {
    warnings.push(`Sample ratio mismatch: exposures ${exposures.map((e) => e.n).join(" / ")} are unlikely under the weights ${variants.map((v) => v.weight).join(" / ")} (p = ${srm.pValue.toPrecision(3)} < ${srm.threshold}); check assignment and exposure logging before trusting any result`);
  }
  if (fromMs !== null && total === 0) warnings.push("No exposures yet: SDKs log one when getVariant assigns a unit");
  if (outside > 0) warnings.push(`${outside} units first exposed outside the experiment's window (before its start or after its stop) are left out of the analysis and the sample-ratio check`);

  const plans: MetricPlan[] = [];
  const { metrics } = ctx.services;
  const wanted: { id: string; role: MetricResult["role"]; worseWhen: WorseWhen | null }[] = [];
  if (only !== "guardrails" && experiment.primaryMetric) wanted.push({ id: experiment.primaryMetric, role: "primary", worseWhen: null });
  for (const g of experiment.guardrailMetrics as Guardrail[]) wanted.push({ id: g.metric, role: "guardrail", worseWhen: g.worseWhen });
  for (const w of wanted) {
    const metric = await metrics.get(projectId, w.id);
    plans.push({ id: metric.id, name: metric.name, kind: metric.kind, role: w.role, worseWhen: w.worseWhen, measures: await metrics.compiled(projectId, metric.id) });
  }

  const results: MetricResult[] = [];
  if (fromMs !== null) {
    for (const plan of plans) {
      results.push(await analyzePlan(ctx, { projectId, experimentId: experiment.id, from: fromMs, to: toMs + 1 }, plan, variants, { method: settings.method, alpha, minimumReached, nowMs }, warnings));
    }
  }
  return {
    experiment: { id: experiment.id, name: experiment.name, status: experiment.status, startedAt: experiment.startedAt, stoppedAt: experiment.stoppedAt },
    method: settings.method,
    alpha,
    minSampleDays: settings.minSampleDays,
    sampleDays,
    minimumReached,
    window: { from: experiment.startedAt, to: fromMs === null ? null : new Date(toMs).toISOString() },
    exposures: { total, firstAt: counts.firstAt === null ? null : new Date(counts.firstAt).toISOString(), lastAt: counts.lastAt === null ? null : new Date(counts.lastAt).toISOString(), outside, variants: exposures },
    srm,
    metrics: results,
    warnings,
  };
}

async function analyzePlan(
  ctx: ServiceContext,
  window: Omit<ExperimentStatsQuery, "measures" | "preMs">,
  plan: MetricPlan,
  variants: Variant[],
  reading: { method: AnalysisSettings["method"]; alpha: number; minimumReached: boolean; nowMs: number },
  warnings: string[],
): Promise<MetricResult> {
  const store = ctx.services.analytics.eventStore;
  const ratio = plan.measures.length === 2;
  const test: MetricResult["test"] = ratio ? "ratio" : plan.measures[0]!.kind === "unique" ? "proportion" : "mean";
  const query: ExperimentStatsQuery = { ...window, measures: plan.measures as ExperimentStatsQuery["measures"], preMs: ratio ? undefined : PRE_PERIOD_DAYS * DAY_MS };
  const { sql, variants: sums } = await upstream(store.experimentStats(query));
  const byKey = new Map(sums.map((s) => [s.variant, s]));
  const arms: VariantStats[] = variants.map((v) => byKey.get(v.key) ?? { variant: v.key, n: 0, sumX: 0, sumXX: 0, sumY: 0, sumYY: 0, sumXY: 0, sumPre: 0, sumPreSq: 0, sumXPre: 0 });
  // CUPED only when some unit has a pre-period value: a covariate of zeros adjusts nothing.
  const withPre = !ratio && arms.some((a) => (a.sumPreSq ?? 0) > 0);
  // The store's second-order sums are about its shifts (VariantStats): passed on with them, so nothing cancels.
  const cov = (a: VariantStats) => (withPre ? { sumPre: a.sumPre ?? 0, sumPreSq: a.sumPreSq ?? 0, sumXPre: a.sumXPre ?? 0, shiftPre: a.shiftPre ?? 0 } : {});
  const input: MetricArms =
    test === "ratio"
      ? { kind: "ratio", arms: arms.map((a) => ({ n: a.n, sumX: a.sumX, sumY: a.sumY ?? 0, sumXX: a.sumXX, sumYY: a.sumYY ?? 0, sumXY: a.sumXY ?? 0, shiftX: a.shiftX ?? 0, shiftY: a.shiftY ?? 0 })) }
      : test === "proportion"
        ? // With CUPED a proportion is read as a mean of 0/1 values (index.ts): Σx = successes, Σ(x − shift)² as stored.
          { kind: "proportion", arms: arms.map((a) => ({ n: a.n, successes: a.sumX, ...cov(a), ...(withPre ? { sumSq: a.sumXX, shift: a.shiftX ?? 0 } : {}) })) }
        : { kind: "mean", arms: arms.map((a) => ({ n: a.n, sum: a.sumX, sumSq: a.sumXX, shift: a.shiftX ?? 0, ...cov(a) })) };
  // A look: the sequential result goes on from the last one under the same basis (looks.ts).
  const basis = `${test}|alpha=${reading.alpha}|${withPre ? "cuped" : "plain"}|measures=${Bun.hash(JSON.stringify(plan.measures)).toString(36)}`;
  const look = {
    experimentId: window.experimentId,
    metricId: plan.id,
    basis,
    at: new Date(reading.nowMs).toISOString(),
    variants: variants.map((v) => v.key),
    smallestArm: Math.min(...arms.map((a) => a.n)),
  };
  const analysis = await lookAt(ctx.store, look, (previous) => analyzeMetric(input, { alpha: reading.alpha, cuped: withPre, sequential: { previous } }));
  const treatments = analysis.variants.map((v): TreatmentResult => {
    const base = { variant: variants[v.arm]!.key, ...finiteParts(v) };
    const verdict = verdictOf(base, reading.method, reading.alpha, reading.minimumReached);
    // Why a result is null: said, so that an "inconclusive" is never silent (without any units, "No exposures yet" says it).
    if (arms.some((a) => a.n > 0)) for (const note of [...v.notes, ...base.dropped]) warnings.push(`${plan.name}, ${base.variant}: ${note}`);
    const { dropped: _, ...shown } = base;
    return plan.worseWhen ? { ...shown, verdict, harm: verdict === plan.worseWhen } : { ...shown, verdict };
  });
  const cuped = analysis.cuped ? { theta: analysis.cuped.theta, varianceReduction: analysis.cuped.varianceReduction.map((r) => finiteOrNull(r) ?? 0), preDays: PRE_PERIOD_DAYS } : null;
  return {
    metric: { id: plan.id, name: plan.name, kind: plan.kind },
    role: plan.role,
    worseWhen: plan.worseWhen,
    test,
    cuped: cuped && Number.isFinite(cuped.theta) ? cuped : null,
    arms: arms.map((a, i) => rawArm(variants[i]!.key, a, test)),
    treatments,
    sql,
  };
}

const allFinite = (value: unknown): boolean =>
  typeof value === "number" ? Number.isFinite(value) : Array.isArray(value) ? value.every(allFinite) : typeof value === "object" && value !== null ? Object.values(value).every(allFinite) : true;

/**
 * The last guard before the reply (whose schema, like JSON, has no NaN or Infinity): a result with a number that
 * is not finite is null, and `dropped` says which. The statistics already answer null where they cannot compute;
 * this keeps a value at the edge of double precision they missed from failing the whole reply.
 */
function finiteParts(v: { frequentist: Comparison; bayesian: BayesianResult | null; sequential: SequentialResult | null }) {
  const dropped: string[] = [];
  const keep = <T>(value: T | null, what: string): T | null => {
    if (value === null || allFinite(value)) return value;
    dropped.push(`no ${what}: a number in it is beyond double precision`);
    return null;
  };
  const f = v.frequentist;
  const arm = (a: Comparison["control"]) => ({ n: a.n, mean: a.mean === null ? null : finiteOrNull(a.mean), variance: a.variance === null ? null : finiteOrNull(a.variance) });
  const absolute = keep(f.absolute, "fixed-horizon test");
  const frequentist: Comparison = { ...f, control: arm(f.control), treatment: arm(f.treatment), absolute, relative: keep(f.relative, "relative lift"), df: absolute && f.df !== null ? finiteOrNull(f.df) : null };
  return { frequentist, bayesian: keep(v.bayesian, "Bayesian reading"), sequential: keep(v.sequential, "sequential test"), dropped };
}

function rawArm(variant: string, a: VariantStats, test: MetricResult["test"]): MetricResult["arms"][number] {
  if (test === "ratio") return { variant, n: a.n, mean: (a.sumY ?? 0) > 0 ? finiteOrNull(a.sumX / a.sumY!) : null, sd: null };
  const mean = a.n > 0 ? finiteOrNull(a.sumX / a.n) : null;
  // About the store's shift (VariantStats): values 1e9 ± 1 keep their spread.
  const variance = a.n > 1 ? finiteOrNull(sampleVariance(a.n, a.sumX, a.sumXX, a.shiftX ?? 0)) : null;
  return { variant, n: a.n, mean, sd: variance === null ? null : Math.sqrt(variance) };
}
