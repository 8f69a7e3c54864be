import { t } from "elysia";
import { Integer, QueryObject } from "../../lib/http";

const Env = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);

export const EnvQuery = QueryObject({
  env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "Defaults to the project's `defaultEnv`" })),
});

const Section = t.Record(t.String(), t.Unknown());

export const SnapshotSchema = t.Object(
  {
    projectId: t.String(),
    env: Env,
    epoch: t.String({ description: "The database's epoch: a restored or copied database starts a new one; revisions compare within one epoch" }),
    revision: Integer({ description: "Bumped by every publish on this env; 0 before the first" }),
    killswitches: t.Record(t.String(), t.Object({ value: t.Boolean(), switches: t.Record(t.String(), t.Boolean()), version: Integer() })),
    configs: t.Record(t.String(), t.Object({ value: t.Unknown(), version: Integer() })),
    gates: Section,
    universes: Section,
    experiments: Section,
    translations: Section,
    rollouts: t.Record(t.String(), t.Unknown(), {
      description: "Running guarded rollouts by id: {kind: gate|config, name, salt, stage, percent, rules (gate) or value (config)}. A unit (user_id) whose bucket under the salt is below percent gets the rules or value instead of the published one, and logs the exposure `$exposure:<id>_<stage>` with variant new or old",
    }),
  },
  { title: "Snapshot" },
);

export const OfrepRequestSchema = t.Object(
  { context: t.Optional(t.Record(t.String(), t.Unknown(), { description: "`env` picks the environment (default: the project's `defaultEnv`)" })) },
  { title: "OfrepEvaluationRequest", examples: [{ context: { targetingKey: "user-1234", env: "prod" } }] },
);

export const OfrepSuccessSchema = t.Object(
  {
    key: t.String(),
    value: t.Unknown(),
    reason: t.Union([t.Literal("STATIC"), t.Literal("TARGETING_MATCH"), t.Literal("SPLIT"), t.Literal("DEFAULT")], {
      description: "STATIC: killswitches and configs; gates: TARGETING_MATCH (a rule decided), SPLIT (a percentage decided) or DEFAULT (no rule held); experiments: SPLIT (the unit's variant) or DEFAULT (not in the experiment: the control's value); an override of a running experiment: SPLIT; a gate or config in a guarded rollout: SPLIT for a unit in its stage, else as published",
    }),
    variant: t.Optional(t.String({ description: "Boolean flags: on/off; experiments: the variant key" })),
    metadata: t.Object({ version: t.Optional(Integer({ description: "The published version (experiments have none)" })) }),
  },
  { title: "OfrepEvaluationSuccess" },
);

export const OfrepFailureSchema = t.Object(
  {
    key: t.Optional(t.String({ description: "Single evaluation only" })),
    errorCode: t.Union([t.Literal("PARSE_ERROR"), t.Literal("INVALID_CONTEXT"), t.Literal("FLAG_NOT_FOUND")]),
    errorDetails: t.Optional(t.String()),
  },
  { title: "OfrepEvaluationFailure" },
);

export const OfrepBulkSchema = t.Object({ flags: t.Array(OfrepSuccessSchema) }, { title: "OfrepBulkEvaluation" });

export const SdkKeyInfoSchema = t.Object(
  {
    id: t.String({ description: "The key's id (as `GET /api/admin/keys` lists it)" }),
    projectId: t.String(),
    type: t.String({ description: "server, client or browser" }),
    scopes: t.Array(t.String()),
    allowedOrigin: t.Union([t.String(), t.Null()], { description: "The browser origin the key is limited to; null allows any" }),
    allowedOrigins: t.Optional(t.Union([t.Array(t.String()), t.Null()], { description: "Every browser origin the key admits (the project's domain and its allowed origins); null admits any" })),
    env: t.Optional(t.String({ description: "The env a browser key is bound to" })),
    defaultEnv: t.String({ description: "The project's `defaultEnv`: what a request naming no env gets" }),
  },
  {
    title: "SdkKeyInfo",
    examples: [{ id: "key_3k9QpL2mX8vR", projectId: "prj_7Hd2kQ9sLm4p", type: "server", scopes: [], allowedOrigin: null, defaultEnv: "prod" }],
  },
);
