import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { ConditionSchema } from "../gates/contract";
import { CONDITIONS_MAX } from "../gates/types";
import { CONFIG_RULES_MAX, SPLIT_VALUES_MAX } from "./rules";
import { ACTIVITY_MAX_LIMIT, DESCRIPTION_MAX, HISTORY_MAX_LIMIT, NAME_MAX } from "./service";

export const EnvSchema = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);

/** Any JSON (object, array, string, number, boolean or null); declared unknown so Elysia keeps it as sent. */
const JsonValue = (description: string) => t.Unknown({ description });

const UserSchema = t.Unknown({
  description:
    "A JSON Schema (object or boolean). Dialect from `$schema`: 2020-12 (default) or draft-07 (`http://json-schema.org/draft-07/schema#`). Formats (email, uri, date-time, ...) are checked; unknown keywords and formats are refused. At most 64 KiB, and refused when checking a value against it could cost too much (branches of anyOf/oneOf/allOf and $ref multiply; the detail names the schema path).",
});

export const CreateConfigBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; no '/', no leading/trailing spaces, no control or bidirectional formatting characters, not starting with cfg_" }),
    schema: UserSchema,
    value: t.Optional(JsonValue("Published on every env at version 1. Required unless the schema has a root `default`.")),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  },
  {
    examples: [
      {
        name: "checkout-banner",
        schema: {
          type: "object",
          properties: { enabled: { type: "boolean" }, message: { type: "string", maxLength: 140 } },
          required: ["enabled"],
          additionalProperties: false,
        },
        value: { enabled: true, message: "Free shipping on orders over €50" },
        description: "Banner above the checkout form",
      },
    ],
  },
);

export const PatchConfigBody = BodyObject(
  {
    value: t.Optional(JsonValue("New version on every env")),
    dev: t.Optional(JsonValue("New version on dev only; wins over `value` there")),
    staging: t.Optional(JsonValue("New version on staging only; wins over `value` there")),
    prod: t.Optional(JsonValue("New version on prod only; wins over `value` there")),
    schema: t.Optional(UserSchema),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  },
  {
    examples: [
      {
        value: { enabled: true, message: "Free shipping on orders over €50" },
        prod: { enabled: false },
        description: "Banner above the checkout form (off in prod until launch)",
      },
    ],
  },
);

// Which of value/split a rule has, weights summing to 100 and every value fitting the schema: the service checks (naming the field).
const SplitEntrySchema = t.Object(
  {
    value: JsonValue("Served to this share of the units; checked against the schema"),
    weight: Integer({ minimum: 0, maximum: 100, description: "Share of 100; a split's weights sum to 100" }),
  },
  { additionalProperties: false },
);

export const ConfigRuleSchema = t.Object(
  {
    name: t.Optional(t.String({ maxLength: 100, description: "Shown in explanations and as the variant (OFREP); no '/'" })),
    conditions: t.Array(ConditionSchema, { maxItems: CONDITIONS_MAX, description: "All must hold (the gate operators, in_segment included); empty holds for everyone" }),
    value: t.Optional(JsonValue("Served when the conditions hold (a rule has `value` or `split`)")),
    split: t.Optional(
      t.Array(SplitEntrySchema, {
        minItems: 1,
        maxItems: SPLIT_VALUES_MAX,
        description: "Values with weights, bucketed on `unit` by a stable hash: growing a weight only moves units into that value. A context without the unit passes the rule over.",
      }),
    ),
    unit: t.Optional(t.String({ description: "With split: the context attribute that identifies the unit; default user_id" })),
  },
  { additionalProperties: false },
);

const ConfigRules = t.Array(ConfigRuleSchema, {
  maxItems: CONFIG_RULES_MAX,
  description: "In order: the first rule whose conditions hold serves its value or split; none holding serves the default `value`",
});

const EXAMPLE_RULES = [
  { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }], value: { enabled: true, message: "Staff preview: free shipping on everything" } },
  { name: "beta", conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], split: [{ value: { enabled: true, message: "Free shipping over €40" }, weight: 50 }, { value: { enabled: true, message: "Free shipping over €30" }, weight: 50 }] },
];

export const SaveDraftBody = BodyObject(
  {
    env: EnvSchema,
    value: JsonValue("The default value (served when no rule holds); validated against the current schema; nothing is published"),
    rules: t.Optional(ConfigRules),
  },
  {
    examples: [
      { env: "prod", value: { enabled: true, message: "Free shipping on orders over €40" } },
      { env: "prod", value: { enabled: false }, rules: EXAMPLE_RULES },
    ],
  },
);

export const ExplainConfigBody = BodyObject(
  {
    env: t.Optional(EnvSchema),
    context: t.Record(t.String(), t.Unknown(), { description: "The evaluation context, as an SDK or OFREP client sends it (at most 64 KiB of JSON)" }),
    draft: t.Optional(t.Boolean({ description: "Evaluate the env's draft (value and rules) instead of what is published: a preview before publishing" })),
  },
  { examples: [{ env: "prod", context: { user_id: "u-1001", email: "ada@acme.com" } }, { env: "prod", context: { user_id: "u-42" }, draft: true }] },
);

const ConditionOutcome = t.Object({ attr: t.String(), op: t.String(), holds: t.Boolean(), why: t.String() });

export const ConfigExplanationSchema = t.Object(
  {
    config: t.String(),
    env: EnvSchema,
    version: Integer({ description: "The published version (with draft: the one the draft would follow)" }),
    draft: t.Boolean(),
    value: t.Unknown({ description: "What this context is served" }),
    variant: t.String({ description: "`default`, the deciding rule's name (else rule-N), or `<rule>/<M>` for the M-th value of its split" }),
    reason: t.Union([t.Literal("TARGETING_MATCH"), t.Literal("SPLIT"), t.Literal("DEFAULT")]),
    ruleIndex: t.Union([Integer(), t.Null()], { description: "The rule that decided (0-based); null when none did" }),
    bucket: t.Union([t.Number(), t.Null()], { description: "The unit's bucket in [0, 1) when a split decided" }),
    rules: t.Array(t.Object({ index: Integer(), name: t.Optional(t.String()), holds: t.Boolean(), conditions: t.Array(ConditionOutcome) }), {
      description: "Every rule up to the deciding one, with each condition's outcome and why",
    }),
  },
  {
    title: "ConfigExplanation",
    examples: [
      {
        config: "checkout-banner",
        env: "prod",
        version: 4,
        draft: false,
        value: { enabled: true, message: "Free shipping over €30" },
        variant: "beta/2",
        reason: "SPLIT",
        ruleIndex: 1,
        bucket: 0.7312,
        rules: [
          { index: 0, name: "staff", holds: false, conditions: [{ attr: "email", op: "ends_with", holds: false, why: 'email is "ada@example.org"' }] },
          { index: 1, name: "beta", holds: true, conditions: [{ attr: "user_id", op: "in_segment", holds: true, why: "in segment beta-testers" }] },
        ],
      },
    ],
  },
);

export const CheckValueBody = BodyObject(
  { value: JsonValue("Checked against the config's current schema and the value limits; nothing is stored") },
  { examples: [{ value: { enabled: true, message: "Free shipping on orders over €40" } }] },
);

export const CheckValueResultSchema = t.Object(
  {
    valid: t.Boolean(),
    problems: t.Array(t.String(), { description: "What does not match, one line per problem (path: message); empty when valid" }),
  },
  { examples: [{ valid: false, problems: ["value/max: must be >= 1"] }] },
);

export const PublishBody = BodyObject({ env: EnvSchema }, { examples: [{ env: "prod" }] });

export const RollbackBody = BodyObject(
  { env: EnvSchema, version: t.Number({ minimum: 1, multipleOf: 1, description: "The earlier version of that env whose value to publish again (GET …/history lists them)" }) },
  { examples: [{ env: "prod", version: 3 }] },
);

export const EnvParams = t.Object({ id: t.String({ minLength: 1, maxLength: 128 }), env: EnvSchema });

// `limit` is taken as text and checked by the service, so that its VALIDATION detail names `limit`.
export const ActivityQuery = QueryObject({
  limit: t.Optional(t.String({ description: `Integer, 1 to ${ACTIVITY_MAX_LIMIT}; default 20` })),
});

export const HistoryQuery = QueryObject({
  env: t.Optional(EnvSchema),
  limit: t.Optional(t.String({ description: `Integer, 1 to ${HISTORY_MAX_LIMIT}; default 100` })),
});

const EnvValueSchema = t.Object({ value: t.Unknown({ description: "The default value" }), rules: ConfigRules, version: Integer(), updatedAt: t.String() });
const DraftValueSchema = t.Object({
  value: t.Unknown(),
  rules: t.Optional(t.Array(ConfigRuleSchema, { description: "The env's next rules; absent: publishing keeps the published rules" })),
  baseVersion: Integer(),
  updatedAt: t.String(),
});

export const ConfigSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    description: t.String(),
    schema: t.Unknown(),
    envs: t.Object({ dev: EnvValueSchema, staging: EnvValueSchema, prod: EnvValueSchema }),
    drafts: t.Object({ dev: t.Optional(DraftValueSchema), staging: t.Optional(DraftValueSchema), prod: t.Optional(DraftValueSchema) }),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  { title: "Config" },
);

export const CreatedSchema = t.Object({ id: t.String(), name: t.String() });
export const IdOnlySchema = t.Object({ id: t.String() });

export const DraftSavedSchema = t.Object({ id: t.String(), env: EnvSchema, baseVersion: Integer(), updatedAt: t.String() });

export const DraftSchema = t.Object(
  { id: t.String(), env: EnvSchema, value: t.Unknown(), rules: t.Optional(t.Array(ConfigRuleSchema)), baseVersion: Integer(), updatedAt: t.String() },
  { title: "ConfigDraft" },
);

export const PublishedSchema = t.Object({ id: t.String(), env: EnvSchema, version: Integer(), value: t.Unknown() });

export const ActivitySchema = t.Object(
  {
    id: t.String(),
    action: t.String({ description: "config.create | config.update | config.draft.save | config.publish | config.delete" }),
    actorEmail: t.String(),
    actorName: t.Union([t.String(), t.Null()], { description: "The name of the key or token that acted; null for a person or an unnamed key" }),
    actorType: t.String({ description: "user for people; key or token for credentials" }),
    payload: t.Record(t.String(), t.Unknown(), { description: "For config.publish: {env, version}" }),
    createdAt: t.String(),
  },
  { title: "ConfigActivity" },
);

export const HistoryEntrySchema = t.Object(
  {
    env: EnvSchema,
    version: Integer(),
    value: t.Unknown(),
    rules: ConfigRules,
    actorEmail: t.String(),
    actorType: t.String(),
    createdAt: t.String(),
  },
  { title: "ConfigVersion" },
);

/** The `config.publish` change (src/lib/changes.ts: scheduled changes, change requests): save this value (and rules) as the env's draft and publish it. */
export const ConfigPublishChange = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "The config's name (or id)" }),
    env: EnvSchema,
    value: JsonValue("The default value to publish; validated against the config's schema"),
    rules: t.Optional(ConfigRules),
  },
  { examples: [{ name: "shipping", env: "prod", value: { enabled: true, message: "Free shipping on orders over €40" } }] },
);

/** `config.schema`: a new schema for the config (every env's values and drafts must fit it, as on PATCH). */
export const ConfigSchemaChange = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "The config's name (or id)" }),
    schema: UserSchema,
  },
  { examples: [{ name: "shipping", schema: { type: "object", properties: { enabled: { type: "boolean" } } } }] },
);
