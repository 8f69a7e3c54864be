import { t } from "elysia";

// The reply of GET /api/admin/experiments/{id}/results (analysis.ts `Results`). Numbers that cannot be computed are null.

const Num = t.Union([t.Number(), t.Null()]);
const Interval = t.Array(t.Number(), { minItems: 2, maxItems: 2, description: "[lower, upper]" });

const Arm = t.Object({ n: t.Number(), mean: Num, variance: Num });

const Effect = t.Object({
  estimate: t.Number(),
  se: t.Number({ description: "Standard error" }),
  ci: Interval,
  pValue: t.Number(),
  significant: t.Boolean(),
});

const Frequentist = t.Object(
  {
    control: Arm,
    treatment: Arm,
    absolute: t.Union([Effect, t.Null()], {
      description: "Treatment − control (Welch). Null, with a warning saying why, when an arm has < 2 units, no variation (e.g. no conversions) or values beyond double precision",
    }),
    relative: t.Union([Effect, t.Null()], {
      description: "Lift: (treatment − control) / |control| (so a negative control mean keeps the difference's sign), its interval by the delta method; null when the control's mean is 0",
    }),
    df: Num,
    alpha: t.Number(),
  },
  { description: "Fixed-horizon test" },
);

const Credible = t.Object({ estimate: t.Number(), sd: t.Number(), credibleInterval: Interval });
const Bayesian = t.Object(
  {
    chanceToBeatControl: t.Number(),
    absolute: Credible,
    relative: t.Union([Credible, t.Null()], { description: "(treatment − control) / |control| by the delta method; null when the control's posterior mean is 0" }),
    risk: t.Object({ treatment: t.Number(), control: t.Number() }, { description: "Expected loss of shipping the treatment, of keeping the control" }),
    alpha: t.Number(),
  },
  { description: "Posterior of the difference (flat priors)" },
);

const Sequential = t.Object(
  {
    estimate: t.Number(),
    pValue: t.Number({ description: "Always valid: may be read at every look. The smallest over every look at these results so far (each read is a look), so it never rises" }),
    confidenceSequence: t.Array(t.Number(), { minItems: 2, maxItems: 2, description: "Always-valid interval of treatment − control: the intersection over the looks so far (this look's own where they do not meet)" }),
    significant: t.Boolean(),
    tau2: t.Number(),
    alpha: t.Number(),
  },
  { description: "Mixture sequential probability ratio test (mSPRT): safe under continuous peeking" },
);

const Direction = t.Union([t.Literal("increase"), t.Literal("decrease"), t.Literal("inconclusive")]);

const Treatment = t.Object({
  variant: t.String(),
  frequentist: Frequentist,
  bayesian: t.Union([Bayesian, t.Null()], { description: "Null, with a warning saying why, where the test is (proportions keep their Beta posteriors)" }),
  sequential: t.Union([Sequential, t.Null()], { description: "Null, with a warning saying why, where the fixed-horizon test is" }),
  verdict: t.Union([Direction], { description: "What the project's method reads: frequentist (sequential before the minimum sample days) or bayesian" }),
  harm: t.Optional(t.Boolean({ description: "Guardrails: the verdict is the move named harmful (worseWhen)" })),
});

const MetricResult = t.Object({
  metric: t.Object({ id: t.String(), name: t.String(), kind: t.String() }),
  role: t.Union([t.Literal("primary"), t.Literal("guardrail")]),
  worseWhen: t.Union([t.Literal("increase"), t.Literal("decrease"), t.Null()]),
  test: t.Union([t.Literal("mean"), t.Literal("proportion"), t.Literal("ratio")], { description: "mean: count and sum metrics per unit (Welch); proportion: unique metrics, converted or not; ratio: ΣX/ΣY by the delta method" }),
  cuped: t.Union([t.Object({ theta: t.Number(), varianceReduction: t.Array(t.Number()), preDays: t.Number() }), t.Null()], { description: "Set when units had a pre-period (the metric over the days before their first exposure)" }),
  arms: t.Array(t.Object({ variant: t.String(), n: t.Number(), mean: Num, sd: Num }), { description: "Each variant's own value per unit, unadjusted (a ratio: ΣX/ΣY)" }),
  treatments: t.Array(Treatment, { description: "Each treatment against the control" }),
  sql: t.String({ description: "The statements that computed the per-variant sums in the event store" }),
});

const Srm = t.Object(
  { chiSquare: t.Number(), df: t.Number(), pValue: t.Number(), expected: t.Array(t.Number()), threshold: t.Number(), flagged: t.Boolean() },
  { description: "Sample-ratio-mismatch χ² test of exposures against the weights; flagged below the threshold (0.001)" },
);

export const ResultsSchema = t.Object(
  {
    experiment: t.Object({ id: t.String(), name: t.String(), status: t.String(), startedAt: t.Union([t.String(), t.Null()]), stoppedAt: t.Union([t.String(), t.Null()]) }),
    method: t.Union([t.Literal("frequentist"), t.Literal("bayesian")]),
    alpha: t.Number({ description: "The project's significanceThreshold" }),
    minSampleDays: t.Number(),
    sampleDays: t.Number(),
    minimumReached: t.Boolean(),
    window: t.Object({ from: t.Union([t.String(), t.Null()]), to: t.Union([t.String(), t.Null()]) }),
    exposures: t.Object({
      total: t.Number(),
      firstAt: t.Union([t.String(), t.Null()]),
      lastAt: t.Union([t.String(), t.Null()]),
      outside: t.Number({ description: "Units first exposed outside the window (before the start or after the stop): in neither the metrics nor the SRM check" }),
      variants: t.Array(t.Object({ variant: t.String(), n: t.Number({ description: "Units first exposed in the window, the units the metrics analyse (first exposure counts)" }), expectedShare: t.Number() })),
    }),
    srm: Srm,
    metrics: t.Array(MetricResult),
    warnings: t.Array(t.String(), { description: "Sample ratio mismatch, no exposures, units outside the window, and each result that is null and why (`metric, variant: …`)" }),
  },
  {
    title: "ExperimentResults",
    examples: [
      {
        experiment: { id: "exp_3hT9qLm2XcV8bN1aZr4K", name: "checkout-button", status: "running", startedAt: "2026-11-09T09:00:00.000Z", stoppedAt: null },
        method: "frequentist",
        alpha: 0.05,
        minSampleDays: 7,
        sampleDays: 14.2,
        minimumReached: true,
        window: { from: "2026-11-09T09:00:00.000Z", to: "2026-11-23T14:00:00.000Z" },
        exposures: { total: 20000, firstAt: "2026-11-09T09:00:02.000Z", lastAt: "2026-11-23T13:59:40.000Z", outside: 0, variants: [{ variant: "control", n: 10046, expectedShare: 0.5 }, { variant: "green", n: 9954, expectedShare: 0.5 }] },
        srm: { chiSquare: 0.42, df: 1, pValue: 0.516, expected: [10000, 10000], threshold: 0.001, flagged: false },
        metrics: [],
        warnings: [],
      },
    ],
  },
);
