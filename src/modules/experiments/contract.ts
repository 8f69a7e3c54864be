import { t } from "elysia";
import { BodyObject, Integer, QueryObject, groupDigits } from "../../lib/http";
import { SEGMENTS } from "../../sdk/universes";
import { DESCRIPTION_MAX, GUARDRAILS_MAX, NAME_MAX, REASON_MAX, VARIANTS_MAX, VARIANTS_MIN, WEIGHT_MAX } from "./checks";

const Env = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "The env whose snapshot publishes the experiment while it runs (default prod)" });
const Status = t.Union([t.Literal("draft"), t.Literal("running"), t.Literal("stopped")], { description: "draft → running (POST …/start) → stopped (POST …/stop)" });

const Override = t.Object(
  {
    kind: t.Union([t.Literal("config"), t.Literal("gate")]),
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "The config or gate name" }),
    value: t.Optional(t.Unknown({ description: "config: the value it reads for this variant's units (checked against its schema); gate: true or false" })),
    rule: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 100,
        description: "config only: the name of one of its rules on the experiment's env; only units that rule serves take part (the others get the config as published). The same rule in every variant that overrides the config.",
      }),
    ),
  },
  { additionalProperties: false, description: "What the variant changes besides its own value: a config's value, or a gate's answer, for its units (SDK getConfig/isEnabled with a context, and OFREP)" },
);

const VariantIn = t.Object({
  key: t.String({ minLength: 1, maxLength: 64, description: "Letters, digits, _ . -; unique in the experiment. The SDK's getVariant answers it" }),
  name: t.Optional(t.String({ minLength: 1, maxLength: NAME_MAX, description: "Shown in the dashboard (default: the key)" })),
  weight: t.Number({ exclusiveMinimum: 0, maximum: WEIGHT_MAX, description: "Relative share of the allocation's units: [50, 50] and [1, 1] split alike" }),
  value: t.Optional(t.Unknown({ description: "Any JSON the SDK hands back with the variant (default null)" })),
  override: t.Optional(t.Union([Override, t.Null()])),
}, { additionalProperties: false });

const VariantOut = t.Object({ key: t.String(), name: t.String(), weight: t.Number(), value: t.Unknown(), override: t.Optional(Override) });

const Allocation = t.Array(t.Number(), {
  description: `[start, end) in the universe's ${groupDigits(SEGMENTS)} segments: two integers, 0 ≤ start < end ≤ ${SEGMENTS}. [0, 1000] takes 10 % of the universe's units. It may not overlap the holdout, nor (at start) another running experiment of the universe`,
  examples: [[0, 5000]],
});

const GuardrailOut = t.Object({
  metric: t.String({ description: "met_…" }),
  worseWhen: t.Union([t.Literal("increase"), t.Literal("decrease")], { description: "Which move of the metric is harm (auto-rollback watches for it)" }),
});
const GuardrailIn = t.Union([
  t.String({ minLength: 1, maxLength: 128, description: "A metric id or name (worseWhen: decrease)" }),
  t.Object({ metric: t.String({ minLength: 1, maxLength: 128 }), worseWhen: t.Optional(t.Union([t.Literal("increase"), t.Literal("decrease")])) }, { additionalProperties: false }),
]);

const Outcome = t.Object({
  decision: t.Union([t.Literal("ship"), t.Literal("rollback")]),
  variant: t.Union([t.String(), t.Null()], { description: "The variant shipped; null for a rollback" }),
  reason: t.Union([t.String(), t.Null()]),
  by: t.String({ description: "Who stopped it; `system` for an automatic rollback" }),
  auto: t.Boolean({ description: "Stopped by the guardrail check (project analysis.autoRollback)" }),
});

const EXAMPLE = {
  id: "exp_3hT9qLm2XcV8bN1aZr4K",
  name: "checkout-button",
  description: "Does a green checkout button sell more?",
  universe: "web-users",
  universeId: "uni_8fK2mQ7pLx0bN3cV9aZe",
  env: "prod",
  status: "running",
  variants: [
    { key: "control", name: "Blue button", weight: 50, value: "blue" },
    { key: "green", name: "Green button", weight: 50, value: "green", override: { kind: "config", name: "checkout", value: { buttonColor: "green" } } },
  ],
  allocation: [0, 5000],
  gate: "signed-in",
  primaryMetric: "met_5Jq8Lw2Nx4Vb7Cz1Ma3P",
  guardrailMetrics: [{ metric: "met_9Rt2Yp6Kd3Fg8Hs1Qw4E", worseWhen: "increase" }],
  salt: "Pz7Lq2Wx9Kc4Vb1N",
  startedAt: "2026-11-20T09:00:00.000Z",
  stoppedAt: null,
  outcome: null,
  createdAt: "2026-11-19T16:20:00.000Z",
  updatedAt: "2026-11-20T09:00:00.000Z",
};

export const ExperimentSchema = t.Object(
  {
    id: t.String({ description: "exp_…" }),
    name: t.String(),
    description: t.Union([t.String(), t.Null()]),
    universe: t.String({ description: "The universe's name" }),
    universeId: t.String(),
    env: Env,
    status: Status,
    variants: t.Array(VariantOut, { description: "The control first" }),
    allocation: t.Array(Integer(), { minItems: 2, maxItems: 2, description: "[start, end) in the universe's segments" }),
    gate: t.Union([t.String(), t.Null()], { description: "Units must pass this gate (in the experiment's env) to be in it" }),
    primaryMetric: t.Union([t.String(), t.Null()]),
    guardrailMetrics: t.Array(GuardrailOut),
    salt: t.String({ description: "Hashed with the unit id to pick the variant; fixed for the experiment's life" }),
    startedAt: t.Union([t.String(), t.Null()]),
    stoppedAt: t.Union([t.String(), t.Null()]),
    outcome: t.Union([Outcome, t.Null()]),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  { title: "Experiment", examples: [EXAMPLE] },
);

const Name = t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; usable in place of the id" });
const Description = t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()]);
const Variants = t.Array(VariantIn, { minItems: VARIANTS_MIN, maxItems: VARIANTS_MAX, description: `${VARIANTS_MIN} to ${VARIANTS_MAX} variants; the first is the control` });
const Gate = t.Union([t.String({ minLength: 1, maxLength: NAME_MAX }), t.Null()], { description: "A gate name: only units it lets through are in the experiment; null: everyone in the allocation" });
const Metric = t.Union([t.String({ minLength: 1, maxLength: 128 }), t.Null()], { description: "Metric id or name: the decision metric" });
const Guardrails = t.Array(GuardrailIn, { maxItems: GUARDRAILS_MAX, description: "Metrics that must not get worse; a string is a metric whose decrease is harm" });

export const CreateExperimentBody = BodyObject(
  {
    name: Name,
    description: t.Optional(Description),
    universe: t.String({ minLength: 1, maxLength: 128, description: "Universe id or name" }),
    env: t.Optional(Env),
    variants: Variants,
    allocation: Allocation,
    gate: t.Optional(Gate),
    primaryMetric: t.Optional(Metric),
    guardrailMetrics: t.Optional(Guardrails),
  },
  {
    examples: [
      {
        name: "checkout-button",
        description: "Does a green checkout button sell more?",
        universe: "web-users",
        variants: [
          { key: "control", weight: 50, value: "blue" },
          { key: "green", weight: 50, value: "green" },
        ],
        allocation: [0, 5000],
        primaryMetric: "purchases-per-user",
        guardrailMetrics: [{ metric: "checkout-errors", worseWhen: "increase" }],
      },
    ],
  },
);

export const UpdateExperimentBody = BodyObject(
  {
    name: t.Optional(Name),
    description: t.Optional(Description),
    universe: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
    env: t.Optional(Env),
    variants: t.Optional(Variants),
    allocation: t.Optional(Allocation),
    gate: t.Optional(Gate),
    primaryMetric: t.Optional(Metric),
    guardrailMetrics: t.Optional(Guardrails),
  },
  { examples: [{ allocation: [0, 2000] }, { description: "Green vs blue, signed-in users only", gate: "signed-in" }, { guardrailMetrics: ["revenue"] }] },
);

export const StopBody = BodyObject(
  {
    decision: t.Union([t.Literal("ship"), t.Literal("rollback")], { description: "ship: a variant won (name it); rollback: keep what was there before" }),
    variant: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 64 }), t.Null()])),
    reason: t.Optional(t.Union([t.String({ maxLength: REASON_MAX }), t.Null()])),
  },
  { examples: [{ decision: "ship", variant: "green", reason: "+4.1 % purchases, p = 0.003" }, { decision: "rollback", reason: "errors up" }] },
);

export const ExperimentListQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 200, description: "Case-insensitive substring of the name or description" })),
  status: t.Optional(t.String({ description: "draft, running or stopped" })),
});
