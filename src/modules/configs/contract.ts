import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
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

export const SaveDraftBody = BodyObject(
  { env: EnvSchema, value: JsonValue("Validated against the current schema; nothing is published") },
  { examples: [{ env: "prod", value: { enabled: true, message: "Free shipping on orders over €40" } }] },
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

const EnvValueSchema = t.Object({ value: t.Unknown(), version: Integer(), updatedAt: t.String() });
const DraftValueSchema = t.Object({ value: t.Unknown(), baseVersion: Integer(), updatedAt: t.String() });

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
  { id: t.String(), env: EnvSchema, value: t.Unknown(), baseVersion: Integer(), updatedAt: t.String() },
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
    actorEmail: t.String(),
    actorType: t.String(),
    createdAt: t.String(),
  },
  { title: "ConfigVersion" },
);
