import { t } from "elysia";
import { BodyObject, QueryObject } from "../../lib/http";
import { STATES, STEPS_MAX } from "./types";

const State = t.Union([t.Literal("pending"), t.Literal("done"), t.Literal("failed"), t.Literal("cancelled")], { description: "pending → done | failed (with the error) | cancelled" });

const EXAMPLE_GATE_CHANGE = { kind: "gate.rules", name: "new-checkout", env: "prod", rules: [{ conditions: [], passPercentage: 25 }] };

/**
 * A change as data (src/lib/changes.ts): its kind and that kind's fields, flat. Each kind's fields are checked
 * by the service against the schema the kind's module declares (its contract.ts), naming the failing field.
 */
export const ChangeSchema = t.Object(
  { kind: t.String({ minLength: 1, maxLength: 64, description: "killswitch.set | config.publish | gate.rules | segment.update" }) },
  {
    additionalProperties: t.Unknown(),
    description:
      "`killswitch.set` {name, env, value, switchKey?} publishes a value (flat or of one sub-switch); `config.publish` {name, env, value, rules?} saves the value (and rules) as the env's draft and publishes it; " +
      "`gate.rules` {name, env, rules} publishes a rule list; `segment.update` {name, patch} patches a segment (the fields of PATCH /segments/{id}). " +
      "Change requests also carry `config.schema` {name, schema}, `rollout.start` (the body of POST /rollouts) and `killswitch.create`, `gate.create`, `config.create` (the bodies of their POSTs); an unknown kind's VALIDATION detail lists every kind.",
    examples: [EXAMPLE_GATE_CHANGE, { kind: "killswitch.set", name: "checkout", env: "prod", value: true }],
  },
);

const RunAt = t.String({ minLength: 1, maxLength: 64, description: "When to run it: ISO 8601 with its zone (2026-12-01T09:00:00Z); not in the past, at most a year ahead" });

const ramp = (percent: number, at: string) => ({ change: { ...EXAMPLE_GATE_CHANGE, rules: [{ conditions: [], passPercentage: percent }] }, runAt: at });

export const CreateScheduleBody = BodyObject(
  {
    change: t.Optional(ChangeSchema),
    runAt: t.Optional(RunAt),
    steps: t.Optional(t.Array(BodyObject({ change: ChangeSchema, runAt: RunAt }), { minItems: 1, maxItems: STEPS_MAX, description: "A ramp: the steps in order, each runAt at or after the one before" })),
  },
  {
    examples: [
      { change: { kind: "killswitch.set", name: "checkout", env: "prod", value: true }, runAt: "2026-12-01T09:00:00Z" },
      { steps: [ramp(5, "2026-12-01T09:00:00Z"), ramp(25, "2026-12-02T09:00:00Z"), ramp(100, "2026-12-03T09:00:00Z")] },
    ],
  },
);

export const ScheduleListQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over the id, the summary and who scheduled it" })),
  state: t.Optional(t.String({ description: `One of ${STATES.join(", ")}` })),
});

const StepSchema = t.Object({
  step: t.Number({ description: "1-based, in run order" }),
  change: t.Record(t.String(), t.Unknown(), { description: "The change as scheduled ({kind, ...fields})" }),
  kind: t.String(),
  target: t.Object({ type: t.String({ description: "killswitch | config | gate | segment" }), name: t.String() }),
  env: t.Union([t.String(), t.Null()], { description: "null: every env (a segment)" }),
  summary: t.String(),
  runAt: t.String(),
  state: State,
  ranAt: t.Union([t.String(), t.Null()]),
  lateByMs: t.Union([t.Number(), t.Null()], { description: "How long after runAt it ran" }),
  late: t.Boolean({ description: "It ran later than the servers' rounds explain: no server was running at its time (the audit row says so)" }),
  error: t.Union([t.String(), t.Null()], { description: "Why it failed, or why it was not run" }),
});

export const ScheduleSchema = t.Object(
  {
    id: t.String({ description: "sch_…" }),
    state: State,
    summary: t.String(),
    createdBy: t.String(),
    createdAt: t.String(),
    updatedAt: t.String(),
    nextRunAt: t.Union([t.String(), t.Null()]),
    steps: t.Array(StepSchema),
  },
  {
    title: "Schedule",
    examples: [
      {
        id: "sch_4kQ9vB2mLr7TzX1cNp8a",
        state: "pending",
        summary: "2 steps: new-checkout on prod: 1 rule: 5 % → new-checkout on prod: 1 rule: 100 %",
        createdBy: "ana@example.com",
        createdAt: "2026-11-28T20:00:00.000Z",
        updatedAt: "2026-12-01T09:00:01.204Z",
        nextRunAt: "2026-12-02T09:00:00.000Z",
        steps: [
          { step: 1, change: ramp(5, "").change, kind: "gate.rules", target: { type: "gate", name: "new-checkout" }, env: "prod", summary: "new-checkout on prod: 1 rule: 5 %", runAt: "2026-12-01T09:00:00.000Z", state: "done", ranAt: "2026-12-01T09:00:01.204Z", lateByMs: 1204, late: false, error: null },
          { step: 2, change: ramp(100, "").change, kind: "gate.rules", target: { type: "gate", name: "new-checkout" }, env: "prod", summary: "new-checkout on prod: 1 rule: 100 %", runAt: "2026-12-02T09:00:00.000Z", state: "pending", ranAt: null, lateByMs: null, late: false, error: null },
        ],
      },
    ],
  },
);
