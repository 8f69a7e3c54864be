import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { DESCRIPTION_MAX, HISTORY_MAX_LIMIT, NAME_MAX, SWITCHES_MAX, SWITCH_KEY_MAX } from "./service";

const EnvSchema = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);

const Name = t.String({
  minLength: 1,
  maxLength: NAME_MAX,
  description: "Unique in the project; no '/' (flag keys address a sub-switch as name/switchKey), no leading or trailing whitespace, no control or bidirectional formatting characters, not starting with ksw_",
});
const SwitchKey = t.String({ minLength: 1, maxLength: SWITCH_KEY_MAX, description: "Sub-switch name" });
const SwitchMap = t.Record(t.String(), t.Boolean(), { maxProperties: SWITCHES_MAX, description: "Named sub-switches" });
/** An integer without Elysia's string coercion (t.Integer accepts "5" in bodies). */
const StrictPositiveInteger = t.Number({ minimum: 1, multipleOf: 1 });

export const CreateKillswitchBody = BodyObject({
  name: Name,
  value: t.Optional(t.Boolean({ description: "Flat value on every env at version 1; default false" })),
  switches: t.Optional(SwitchMap),
  description: t.Optional(t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()])),
}, { examples: [{ name: "checkout", value: false, switches: { eu: false } }] });

export const ToggleBody = BodyObject({
  env: t.Optional(EnvSchema),
  switchKey: t.Optional(SwitchKey),
  value: t.Optional(t.Union([t.Boolean(), t.Null()], { description: "Publish exactly this value; absent or null flips" })),
  reason: t.Optional(t.String({ minLength: 1, maxLength: 500, description: "Why, when this toggle bypasses approval on an env that requires it (the project allows killswitch bypass): recorded as a request.bypass audit row" })),
}, { examples: [{ env: "prod" }, { env: "prod", value: true, reason: "checkout is down, killing the new path" }] });

export const SetSwitchBody = BodyObject(
  { env: EnvSchema, switchKey: SwitchKey, value: t.Boolean() },
  { examples: [{ env: "prod", switchKey: "eu", value: true }] },
);

/** DELETE /switch takes these in the JSON body, or in the query for clients that cannot send DELETE bodies. */
export const SwitchRef = BodyObject(
  { env: t.Optional(EnvSchema), switchKey: t.Optional(SwitchKey) },
  { examples: [{ env: "prod", switchKey: "eu" }] },
);
export const SwitchRefQuery = QueryObject({ env: t.Optional(EnvSchema), switchKey: t.Optional(SwitchKey) });

export const SetValueBody = BodyObject({ env: EnvSchema, value: t.Boolean() }, { examples: [{ env: "prod", value: true }] });

export const RollbackBody = BodyObject({ env: EnvSchema, version: StrictPositiveInteger }, { examples: [{ env: "prod", version: 3 }] });

// `limit` is taken as text and checked by the service, so that its VALIDATION detail names `limit`
// (Elysia's coerced integer reports an out-of-range query value without its name).
export const HistoryQuery = QueryObject({
  env: t.Optional(EnvSchema),
  limit: t.Optional(t.String({ description: `Integer, 1 to ${HISTORY_MAX_LIMIT}; default 100` })),
});

const Published = t.Object({ value: t.Boolean(), switches: SwitchMap });

const EnvState = t.Object({
  value: t.Boolean(),
  switches: SwitchMap,
  version: Integer(),
  updatedAt: t.String(),
  updatedBy: t.String({ description: "Email of the last publisher" }),
});

export const KillswitchSchema = t.Object(
  {
    id: t.String({ description: "ksw_…" }),
    name: t.String(),
    description: t.Optional(t.String()),
    createdAt: t.String(),
    updatedAt: t.String(),
    envs: t.Object({ dev: EnvState, staging: EnvState, prod: EnvState }),
  },
  { title: "Killswitch" },
);

export const CreatedSchema = t.Object({ id: t.String(), name: t.String() });

export const ToggleResultSchema = t.Object(
  {
    id: t.String(),
    env: EnvSchema,
    switchKey: t.Union([t.String(), t.Null()]),
    previous: t.Boolean(),
    value: t.Boolean(),
    version: Integer(),
    published: Published,
  },
  { title: "KillswitchPublish" },
);

export const SetSwitchResultSchema = t.Object({ id: t.String(), env: EnvSchema, switchKey: t.String(), value: t.Boolean() });
export const DeleteSwitchResultSchema = t.Object({ id: t.String(), env: EnvSchema, switchKey: t.String(), version: Integer() });
export const SetValueResultSchema = t.Object({ id: t.String(), env: EnvSchema, value: t.Boolean(), version: Integer() });

export const HistoryEntrySchema = t.Object(
  {
    version: Integer(),
    env: EnvSchema,
    value: t.Boolean(),
    switches: SwitchMap,
    action: t.String({ description: "killswitch.create | .toggle | .switch.set | .switch.delete | .value.set | .rollback" }),
    actorEmail: t.String(),
    actorType: t.String(),
    createdAt: t.String(),
  },
  { title: "KillswitchVersion" },
);

/** The `killswitch.set` change (src/lib/changes.ts: scheduled changes, change requests): publish this value, flat or of one sub-switch. */
export const KillswitchSetChange = BodyObject(
  { name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "The killswitch's name (or id)" }), env: EnvSchema, value: t.Boolean(), switchKey: t.Optional(SwitchKey) },
  { examples: [{ name: "checkout", env: "prod", value: false }, { name: "checkout", env: "prod", switchKey: "eu", value: true }] },
);
