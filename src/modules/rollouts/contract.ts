import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { DESCRIPTION_MAX } from "../gates/types";
import { DEFAULT_STAGES, STAGES_MAX, STAGE_MINUTES_MAX, STATUSES, TOLERANCE_MAX, WATCH_MAX } from "./types";

const Env = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);
const Status = t.Union([t.Literal("scheduled"), t.Literal("running"), t.Literal("paused"), t.Literal("completed"), t.Literal("rolled_back")]);
const Direction = t.Union([t.Literal("lower"), t.Literal("higher")], { description: "Which way is better" });
const OnRegression = t.Union([t.Literal("pause"), t.Literal("rollback")], { description: "What a detected regression does (default rollback)" });
const Interval = t.Tuple([t.Number(), t.Number()]);

const StageSchema = BodyObject({
  percent: t.Number({ exclusiveMinimum: 0, maximum: 100, description: "Units that get the change in this stage, percent (above the previous stage's)" }),
  minutes: Integer({ minimum: 0, maximum: STAGE_MINUTES_MAX, description: "Least time in the stage before it advances" }),
});

const WatchInputSchema = BodyObject({
  metric: t.String({ minLength: 1, maxLength: 128, description: "A metric of the project, by name or id" }),
  direction: Direction,
  tolerance: t.Optional(t.Number({ minimum: 0, maximum: TOLERANCE_MAX, description: "Regression tolerated, relative to the old group's mean (0.05 = 5 % worse); default 0" })),
});

export const CreateRolloutBody = BodyObject(
  {
    gate: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "The gate to roll out new rules of (name or id)" })),
    config: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "The config to roll out a new value, or new rules, of (name or id)" })),
    env: Env,
    rules: t.Optional(
      t.Array(t.Unknown(), {
        maxItems: 100,
        description: "The gate's new rules (the shape of PUT /api/admin/gates/{id}/rules), or the config's new rules (the shape of PUT /api/admin/configs/{id}/drafts `rules`; default: its draft's rules on the env)",
      }),
    ),
    value: t.Optional(t.Unknown({ description: "The config's new default value (default: its draft on the env, else the published one when rules are given); checked against the schema" })),
    stages: t.Optional(t.Array(StageSchema, { minItems: 1, maxItems: STAGES_MAX, description: `Growing percentages, the last 100. Default ${DEFAULT_STAGES.map((s) => `${s.percent} % (${s.minutes} min)`).join(", ")}` })),
    metrics: t.Optional(t.Array(WatchInputSchema, { maxItems: WATCH_MAX, description: "Metrics watched besides the error rate" })),
    errorTolerance: t.Optional(t.Number({ minimum: 0, maximum: TOLERANCE_MAX, description: "Rise of the error rate (tracked errors per unit) tolerated, relative; default 0" })),
    onRegression: t.Optional(OnRegression),
    notify: t.Optional(t.Boolean({ description: "Tell the project's connectors (rollout.* events); default true" })),
    falseAlarmRate: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 0.5, description: "Chance that a harmless change is stopped, over the whole rollout; default 0.05" })),
    startAt: t.Optional(t.String({ maxLength: 40, description: "ISO 8601 time to start at (scheduled until then); default now" })),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  },
  {
    examples: [
      {
        gate: "new-checkout",
        env: "prod",
        rules: [{ name: "everyone", conditions: [], passPercentage: 100 }],
        metrics: [{ metric: "checkout-conversion", direction: "higher", tolerance: 0.02 }],
        onRegression: "rollback",
      },
      { config: "search-limits", env: "prod", stages: [{ percent: 10, minutes: 30 }, { percent: 50, minutes: 60 }, { percent: 100, minutes: 0 }] },
    ],
  },
);

export const UpdateRolloutBody = BodyObject(
  {
    description: t.Optional(t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()])),
    notify: t.Optional(t.Boolean()),
    onRegression: t.Optional(OnRegression),
  },
  { minProperties: 1, examples: [{ onRegression: "pause" }] },
);

export const ReasonBody = BodyObject({ reason: t.Optional(t.String({ maxLength: 1000, description: "Why (kept in the outcome and the audit trail)" })) }, { examples: [{ reason: "Support reports broken checkout on Safari" }] });

export const RolloutListQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 200, description: "Substring of the gate's or config's name, the description or the id" })),
  status: t.Optional(t.String({ description: `One of ${STATUSES.join(", ")}` })),
  env: t.Optional(t.String({ description: "dev, staging or prod" })),
  kind: t.Optional(t.String({ description: "gate or config" })),
});

export const ChecksQuery = QueryObject({ limit: t.Optional(t.String({ description: "1 to 3000; default 500" })) });

const MetricCheckSchema = t.Object({
  metric: t.String({ description: "`errors` (tracked errors per unit) or a metric's name" }),
  direction: Direction,
  tolerance: t.Number(),
  test: t.Union([t.Literal("mean"), t.Literal("proportion"), t.Literal("ratio")]),
  old: t.Object({ n: Integer(), mean: t.Union([t.Number(), t.Null()]) }),
  new: t.Object({ n: Integer(), mean: t.Union([t.Number(), t.Null()]) }),
  estimate: t.Union([t.Number(), t.Null()], { description: "new − old per unit; null until both groups have 200 units" }),
  interval: t.Union([Interval, t.Null()], { description: "Always-valid confidence sequence of the difference" }),
  pValue: t.Union([t.Number(), t.Null()]),
  alpha: t.Number({ description: "This test's level: the false alarm rate over the compared stages and metrics" }),
  regression: t.Boolean(),
});

export const CheckSchema = t.Object(
  {
    at: t.String(),
    stage: Integer(),
    percent: t.Number(),
    ingestLagMs: t.Number({ description: "How far the event data is behind; over 2 minutes the stage never advances" }),
    stale: t.Boolean(),
    metrics: t.Array(MetricCheckSchema),
    decision: t.Union([t.Literal("none"), t.Literal("wait"), t.Literal("advance"), t.Literal("complete"), t.Literal("pause"), t.Literal("rollback"), t.Literal("start")]),
    problems: t.Array(t.String()),
  },
  { title: "RolloutCheck" },
);

export const RolloutSchema = t.Object(
  {
    id: t.String(),
    env: Env,
    kind: t.Union([t.Literal("gate"), t.Literal("config")]),
    subject: t.String({ description: "The gate's or config's name" }),
    subjectId: t.String(),
    description: t.Union([t.String(), t.Null()]),
    change: t.Object({ rules: t.Optional(t.Array(t.Unknown())), value: t.Optional(t.Unknown()) }),
    previous: t.Object({ rules: t.Optional(t.Array(t.Unknown())), value: t.Optional(t.Unknown()), version: Integer() }),
    stages: t.Array(t.Object({ percent: t.Number(), minutes: Integer() })),
    stage: Integer({ description: "Index of the current stage" }),
    percent: t.Number({ description: "Units that get the change now, percent" }),
    stageStartedAt: t.Union([t.String(), t.Null()]),
    status: Status,
    startAt: t.Union([t.String(), t.Null()]),
    watch: t.Array(t.Object({ metric: t.String(), metricId: t.Union([t.String(), t.Null()]), direction: Direction, tolerance: t.Number() })),
    onRegression: OnRegression,
    notify: t.Boolean(),
    falseAlarmRate: t.Number(),
    outcome: t.Union([
      t.Object({
        kind: t.Union([t.Literal("completed"), t.Literal("paused"), t.Literal("rolled_back")]),
        by: t.String(),
        auto: t.Boolean(),
        reason: t.Union([t.String(), t.Null()]),
        metric: t.Optional(t.String()),
        estimate: t.Optional(t.Number()),
        interval: t.Optional(Interval),
        at: t.String(),
      }),
      t.Null(),
    ]),
    lastCheck: t.Union([CheckSchema, t.Null()]),
    createdBy: t.String(),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "Rollout",
    examples: [
      {
        id: "rol_4Kd8Qm2Lx9Pz7Vb1Nc3R",
        env: "prod",
        kind: "gate",
        subject: "new-checkout",
        subjectId: "gat_7Hq2Lm9Xc4Rt8Kp1Vz6B",
        description: "New checkout for everyone",
        change: { rules: [{ name: "everyone", conditions: [], passPercentage: 100 }] },
        previous: { rules: [], version: 3 },
        stages: DEFAULT_STAGES,
        stage: 1,
        percent: 5,
        stageStartedAt: "2026-11-24T10:00:00.000Z",
        status: "running",
        startAt: null,
        watch: [{ metric: "errors", metricId: null, direction: "lower", tolerance: 0 }],
        onRegression: "rollback",
        notify: true,
        falseAlarmRate: 0.05,
        outcome: null,
        lastCheck: null,
        createdBy: "ana@example.com",
        createdAt: "2026-11-24T09:00:00.000Z",
        updatedAt: "2026-11-24T10:00:00.000Z",
      },
    ],
  },
);
