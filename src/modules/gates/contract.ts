import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { GATE_OPS } from "../../sdk/gates";
import { CONDITIONS_MAX, DESCRIPTION_MAX, HISTORY_MAX_LIMIT, NAME_MAX, RULES_MAX } from "./types";

const EnvSchema = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);
const StrictPositiveInteger = t.Number({ minimum: 1, multipleOf: 1 });

const Name = t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; no '/', no leading or trailing whitespace, no control or bidirectional formatting characters, not starting with gate_" });

// Types of `value` depend on `op`: the service checks them and names the rule and field of any mistake.
export const ConditionSchema = t.Object(
  {
    attr: t.String({ description: "Context attribute, e.g. email, country, app_version" }),
    op: t.String({ description: `One of ${GATE_OPS.join(", ")}` }),
    value: t.Optional(
      t.Unknown({
        description:
          "eq/neq: text, number or boolean; in/not_in: a list; contains/starts_with/ends_with/regex (RE2): text; gt/gte/lt/lte: a number; semver_*: a version; before/after: an ISO date; passes_gate/fails_gate: a gate's name; in_segment/not_in_segment: a segment's name; exists/not_exists: none",
      }),
    ),
  },
  { additionalProperties: false },
);

export const RuleSchema = t.Object(
  {
    name: t.Optional(t.String({ maxLength: 100, description: "Shown in explanations" })),
    conditions: t.Array(ConditionSchema, { maxItems: CONDITIONS_MAX, description: "All must hold; empty holds for everyone" }),
    passPercentage: t.Number({ minimum: 0, maximum: 100, description: "Share of the units whose conditions hold that pass, by a stable hash of the unit" }),
    unit: t.Optional(t.String({ description: "Context attribute that identifies the unit to bucket; default user_id" })),
  },
  { additionalProperties: false },
);

const Rules = t.Array(RuleSchema, { maxItems: RULES_MAX, description: "In order: the first rule whose conditions hold decides; none holding means off" });

const EXAMPLE_RULES = [
  { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], passPercentage: 100 },
  { name: "new checkout, 20% of DE", conditions: [{ attr: "country", op: "in", value: ["de"] }, { attr: "app_version", op: "semver_gte", value: "2.4.0" }], passPercentage: 20 },
];

export const CreateGateBody = BodyObject(
  {
    name: Name,
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
    rules: t.Optional(Rules),
    template: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "Start from a template (id or name): one rule with its conditions" })),
    passPercentage: t.Optional(t.Number({ minimum: 0, maximum: 100, description: "That rule's pass percentage; default 100" })),
  },
  {
    examples: [
      { name: "new-checkout", description: "The redesigned checkout", rules: EXAMPLE_RULES },
      { name: "beta-search", template: "Beta opt-in", passPercentage: 50 },
    ],
  },
);

const TemplateConditions = t.Array(ConditionSchema, { maxItems: CONDITIONS_MAX, description: "Conditions {attr, op, value}, all of which must hold" });

export const CreateTemplateBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: 128 }),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
    category: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "Free text; `condition` (the default; `segment` for one built from a segment) and `rollout` are the built-ins' categories" })),
    rules: t.Optional(TemplateConditions),
    segment: t.Optional(
      t.String({ minLength: 1, maxLength: 128, description: "Instead of rules: a segment (id or name); the template is its one condition `{attr: <the segment's attribute>, op: in_segment, value: <its name>}`" }),
    ),
  },
  {
    examples: [
      { name: "Acme staff", description: "People at acme.com", category: "condition", rules: [{ attr: "email", op: "ends_with", value: "@acme.com" }] },
      { name: "Beta testers", description: "Everyone in the beta-testers segment", segment: "beta-testers" },
    ],
  },
);

export const UpdateTemplateBody = BodyObject(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
    category: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    rules: t.Optional(TemplateConditions),
  },
  { examples: [{ rules: [{ attr: "email", op: "ends_with", value: "@acme.io" }] }] },
);

export const TemplateSchema = t.Object(
  {
    id: t.String({ description: "gtpl_…" }),
    name: t.String(),
    description: t.String(),
    category: t.String(),
    rules: TemplateConditions,
    builtIn: t.Boolean({ description: "Built-ins are the same in every project and read-only" }),
    createdAt: t.Union([t.String(), t.Null()]),
    updatedAt: t.Union([t.String(), t.Null()]),
  },
  { title: "GateTemplate" },
);

export const SetRulesBody = BodyObject({ env: EnvSchema, rules: Rules }, { examples: [{ env: "prod", rules: EXAMPLE_RULES }] });
export const UpdateGateBody = BodyObject({ description: t.String({ maxLength: DESCRIPTION_MAX }) }, { examples: [{ description: "The redesigned checkout, DE first" }] });
export const RollbackBody = BodyObject({ env: EnvSchema, version: StrictPositiveInteger }, { examples: [{ env: "prod", version: 3 }] });
export const ExplainBody = BodyObject(
  {
    env: t.Optional(EnvSchema),
    context: t.Record(t.String(), t.Unknown(), { description: "The evaluation context: user_id and any attributes" }),
  },
  { examples: [{ env: "prod", context: { user_id: "user-42", email: "ana@example.com", country: "de", app_version: "2.5.0" } }] },
);

export const HistoryQuery = QueryObject({
  env: t.Optional(EnvSchema),
  limit: t.Optional(t.String({ description: `Integer, 1 to ${HISTORY_MAX_LIMIT}; default 100` })),
});

const EnvState = t.Object({ rules: Rules, version: Integer(), updatedAt: t.String(), updatedBy: t.String() });

export const GateSchema = t.Object(
  {
    id: t.String({ description: "gate_…" }),
    name: t.String(),
    description: t.String(),
    salt: t.String({ description: "Bucketing salt, fixed at creation" }),
    createdAt: t.String(),
    updatedAt: t.String(),
    envs: t.Object({ dev: EnvState, staging: EnvState, prod: EnvState }),
  },
  { title: "Gate" },
);

export const CreatedSchema = t.Object({ id: t.String(), name: t.String() });
const Warnings = t.Array(t.String(), { description: "Attributes the rules name that nobody declared or saw, or that are deprecated (the rules are published anyway)" });
export const CreatedGateSchema = t.Object({ id: t.String(), name: t.String(), warnings: Warnings });
export const PublishedSchema = t.Object({ id: t.String(), env: EnvSchema, version: Integer(), rules: Rules, warnings: t.Optional(Warnings) });

export const HistoryEntrySchema = t.Object({
  env: EnvSchema,
  version: Integer(),
  rules: Rules,
  action: t.String({ description: "gate.create | gate.rules.set | gate.rollback" }),
  actorEmail: t.String(),
  actorType: t.String(),
  createdAt: t.String(),
});

const ConditionOutcome = t.Object({ attr: t.String(), op: t.String(), holds: t.Boolean(), why: t.String() });

export const ExplanationSchema = t.Object(
  {
    gate: t.String(),
    env: EnvSchema,
    version: Integer(),
    value: t.Boolean(),
    ruleIndex: t.Union([Integer(), t.Null()], { description: "The rule that decided (0-based); null when none held" }),
    bucket: t.Union([t.Number(), t.Null()], { description: "The unit's bucket in [0, 1) when a percentage decided" }),
    reason: t.Union([t.Literal("TARGETING_MATCH"), t.Literal("SPLIT"), t.Literal("DEFAULT")]),
    rules: t.Array(t.Object({ index: Integer(), name: t.Optional(t.String()), holds: t.Boolean(), conditions: t.Array(ConditionOutcome) }), {
      description: "Every rule up to the deciding one, with each condition's outcome and why",
    }),
  },
  { title: "GateExplanation" },
);

/** The `gate.rules` change (src/lib/changes.ts: scheduled changes, change requests): publish this rule list on one env. */
export const GateRulesChange = BodyObject(
  { name: t.String({ minLength: 1, maxLength: 128, description: "The gate's name (or id)" }), env: EnvSchema, rules: Rules },
  { examples: [{ name: "new-checkout", env: "prod", rules: [{ conditions: [], passPercentage: 25 }] }] },
);
