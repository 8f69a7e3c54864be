import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { BATCH_COUNT_MAX, BATCH_NAMES_MAX, USAGE_DAYS } from "./types";

const Env = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);

export const EvaluationsBody = BodyObject(
  {
    env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "The env the flags were evaluated on; default a browser key's env, else the project's `defaultEnv`" })),
    counts: t.Record(t.String(), Integer({ minimum: 1, maximum: BATCH_COUNT_MAX }), {
      maxProperties: BATCH_NAMES_MAX,
      description: `Evaluations per flag name since the last batch (at most ${BATCH_NAMES_MAX} names, each 1 to ${BATCH_COUNT_MAX}); names the env does not have are ignored`,
    }),
  },
  { examples: [{ env: "prod", counts: { checkout: 1840, "new-checkout": 912, limits: 77 } }] },
);

export const EvaluationsReply = t.Object(
  { accepted: Integer({ description: "Names counted" }), ignored: Integer({ description: "Names the env has no flag of (not stored)" }) },
  { title: "EvaluationsAccepted", examples: [{ accepted: 3, ignored: 0 }] },
);

export const FlagNameParam = t.Object({ name: t.String({ minLength: 1, maxLength: 256, description: "The flag's name (killswitch, gate, config or experiment)" }) });

export const UsageQuery = QueryObject({ env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "One env's series; default every env added up" })) });

const LastEvaluated = t.Union([t.String(), t.Null()], { description: "ISO time of the latest counted evaluation; null: none kept" });

export const FlagUsageSchema = t.Object(
  {
    name: t.String(),
    env: t.Union([Env, t.Null()]),
    days: t.Array(t.Object({ day: t.String({ description: "UTC day, YYYY-MM-DD" }), count: Integer() }), { description: `The last ${USAGE_DAYS} UTC days, oldest first, today last` }),
    total: Integer(),
    lastEvaluatedAt: t.Object({ dev: LastEvaluated, staging: LastEvaluated, prod: LastEvaluated }),
  },
  {
    title: "FlagUsage",
    examples: [{ name: "new-checkout", env: "prod", days: [{ day: "2026-10-30", count: 0 }, { day: "2026-10-31", count: 1840 }], total: 1840, lastEvaluatedAt: { dev: null, staging: "2026-11-20T08:00:00.000Z", prod: "2026-11-28T09:14:03.120Z" } }],
  },
);

export const StaleQuery = QueryObject({ env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "One env; default every env" })) });

export const StaleFlagSchema = t.Object({
  name: t.String(),
  kind: t.Union([t.Literal("killswitch"), t.Literal("gate"), t.Literal("config")]),
  env: Env,
  reasons: t.Array(t.Union([t.Literal("one_value"), t.Literal("not_evaluated")]), {
    description: "one_value: it served one value to everyone since its last publish, staleAfterDays ago or more; not_evaluated: no evaluation counted on this env for staleAfterDays days (and it is older than that)",
  }),
  lastEvaluatedAt: LastEvaluated,
  lastChangedAt: t.String({ description: "Its last publish on this env" }),
});

export const StaleListSchema = t.Object(
  { staleAfterDays: Integer({ description: "The project's setting (PATCH /api/admin/projects/{id})" }), flags: t.Array(StaleFlagSchema) },
  {
    title: "StaleFlags",
    examples: [{ staleAfterDays: 30, flags: [{ name: "old-banner", kind: "killswitch", env: "prod", reasons: ["one_value", "not_evaluated"], lastEvaluatedAt: null, lastChangedAt: "2026-09-01T10:00:00.000Z" }] }],
  },
);
