import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, groupDigits, jsonBodyPlugin, numberParam } from "../../lib/http";
import { MAX_ARRAY_ITEMS, MAX_DEPTH, SCHEMA_MAX_BYTES } from "./json-schema";
import { CHECK_BUDGET_MS, COMPILE_BUDGET_MS } from "./schema-checker";
import { SCHEMA_COST_BUDGET } from "./schema-cost";
import { VALUE_MAX_BYTES } from "./service";
import {
  ActivityQuery,
  ActivitySchema,
  ConfigSchema,
  CreateConfigBody,
  CreatedSchema,
  DraftSavedSchema,
  DraftSchema,
  EnvParams,
  HistoryEntrySchema,
  HistoryQuery,
  IdOnlySchema,
  PatchConfigBody,
  CheckValueBody,
  CheckValueResultSchema,
  ConfigExplanationSchema,
  ExplainConfigBody,
  PublishBody,
  PublishedSchema,
  RollbackBody,
  SaveDraftBody,
} from "./contract";

const TAG = "Configs";
const PROJECT_REQUIRED = { projectHeader: "required" } as const;
/** What one value may cost: said on every route that takes one. */
const VALUE_LIMITS = `Limits of one value: at most ${VALUE_MAX_BYTES} bytes of JSON, ${MAX_DEPTH} levels of nesting and ${MAX_ARRAY_ITEMS} items in any array; a schema at most ${SCHEMA_MAX_BYTES} bytes, and refused (VALIDATION naming the schema path) when checking one value location against it could take more than ${groupDigits(SCHEMA_COST_BUDGET)} schema evaluations (anyOf/oneOf/allOf and $ref branches multiply). Values are validated off the request loop, before the write lock is taken, for at most ${CHECK_BUDGET_MS} ms (after at most ${COMPILE_BUDGET_MS} ms to compile a schema not compiled yet): a check that would take longer is VALIDATION.`;

export function configRoutes(ctx: AppContext) {
  const { configs } = ctx.services;
  return new Elysia({ name: "configs", seed: ctx, prefix: "/api/admin/configs" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await configs.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateConfigBody,
        ...describe({
          summary: "Create a config",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "Validates the schema, then the value (or the schema's root `default` when no value is sent) against it, and publishes it on every env at version 1. A value that fails its schema is VALIDATION with `detail` naming each JSON path. Schemas are JSON Schema 2020-12 (default) or draft-07 (`$schema`); `pattern` uses RE2 syntax (linear-time matching: no lookaround or backreferences). " +
            VALUE_LIMITS,
          response: { 201: CreatedSchema },
        }),
      },
    )
    .get("", async ({ principal, query }) => await configs.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "List configs (q over name and description)", tag: TAG, auth: "admin", response: { 200: t.Array(ConfigSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await configs.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a config by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: ConfigSchema } }),
    })
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({ id: (await configs.patch(principal.projectId, params.id, body, principal.actor)).id }),
      {
        admin: true,
        jsonObjectBody: true,
        params: IdParam,
        body: PatchConfigBody,
        ...describe({
          summary: "Update a config's values, schema or description",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "`value` publishes one new version on every env; `dev`/`staging`/`prod` publish on that env only and win over `value` there; `schema` replaces the schema once every resulting value and every draft fits it (new values are checked against the new schema). Any failure changes nothing: VALIDATION with `detail` like `prod /retries: must be <= 5` or `draft dev /url: must match format \"uri\"`. " +
            VALUE_LIMITS,
          response: { 200: IdOnlySchema },
        }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await configs.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a config (its activity stays readable by id)", tag: TAG, auth: "admin", errors: [404] }),
      },
    )
    .get(
      "/:id/history",
      async ({ principal, params, query }) => await configs.history(principal.projectId, params.id, { env: query.env, limit: numberParam(query.limit) }),
      {
        admin: true,
        params: IdParam,
        query: HistoryQuery,
        ...describe({
          summary: "Published versions, newest first",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Every version ever published; `env` keeps one env.",
          response: { 200: t.Array(HistoryEntrySchema) },
        }),
      },
    )
    .put(
      "/:id/drafts",
      async ({ principal, params, body }) => await configs.saveDraft(principal.projectId, params.id, body.env, body.value, principal.actor, body.rules),
      {
        admin: PROJECT_REQUIRED,
        jsonObjectBody: true,
        params: IdParam,
        body: SaveDraftBody,
        ...describe({
          summary: "Save the draft of one env",
          tag: TAG,
          auth: "admin+project",
          errors: [404],
          description: `Validated against the current schema and stored with \`baseVersion\`, the env's published version it forks from. Overwrites that env's draft. Publishes nothing. With \`rules\`, the draft holds the env's next rules too (publish promotes value and rules together; every value a rule serves is checked against the schema; the segments and gates they name must exist); without, publishing keeps the env's rules. ${VALUE_LIMITS}`,
          response: { 200: DraftSavedSchema },
        }),
      },
    )
    .get("/:id/drafts", async ({ principal, params }) => await configs.listDrafts(principal.projectId, params.id), {
      admin: PROJECT_REQUIRED,
      params: IdParam,
      ...describe({ summary: "List a config's drafts", tag: TAG, auth: "admin+project", errors: [404], response: { 200: t.Array(DraftSchema) } }),
    })
    .get("/:id/drafts/:env", async ({ principal, params }) => await configs.getDraft(principal.projectId, params.id, params.env), {
      admin: PROJECT_REQUIRED,
      params: EnvParams,
      ...describe({ summary: "Get one env's draft", tag: TAG, auth: "admin+project", errors: [404], response: { 200: DraftSchema } }),
    })
    .delete(
      "/:id/drafts/:env",
      async ({ principal, params, set }) => {
        await configs.deleteDraft(principal.projectId, params.id, params.env, principal.actor);
        set.status = 204;
      },
      {
        admin: PROJECT_REQUIRED,
        params: EnvParams,
        ...describe({ summary: "Discard one env's draft", tag: TAG, auth: "admin+project", errors: [404] }),
      },
    )
    .post("/:id/check", async ({ principal, params, body }) => await configs.checkValue(principal.projectId, params.id, body.value), {
      // Stores nothing, so reading is enough: a viewer's editor validates too.
      admin: "read",
      jsonObjectBody: true,
      params: IdParam,
      body: CheckValueBody,
      ...describe({
        summary: "Check a value against the config's schema (stores nothing)",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: `What the dashboard's editor calls as you type: the same validator as saving a draft. A value that does not match is a 200 with \`valid: false\` and the problems; a check that cannot run (a stored schema too costly to check against, or a check over its time budget) is VALIDATION. ${VALUE_LIMITS}`,
        response: { 200: CheckValueResultSchema },
      }),
    })
    .post("/:id/explain", async ({ principal, params, body }) => await configs.explain(principal.projectId, params.id, body.env ?? "prod", body.context, body.draft ?? false), {
      // Evaluates and stores nothing: reading is enough.
      admin: "read",
      jsonObjectBody: true,
      params: IdParam,
      body: ExplainConfigBody,
      ...describe({
        summary: "Explain what a config serves a context",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "The value the config serves this context on the env (default prod), its variant and reason (TARGETING_MATCH: a rule's value; SPLIT: a split's value, with the unit's bucket; DEFAULT: no rule decided), and for each rule up to the deciding one the conditions and why. The same evaluator as the SDK and OFREP. `draft: true` previews the env's draft (NOT_FOUND without one). " +
          "A context over 64 KiB of JSON is VALIDATION (`context: …`).",
        response: { 200: ConfigExplanationSchema },
      }),
    })
    .post(
      "/:id/publish",
      async ({ principal, params, body }) => await configs.publishDraft(principal.projectId, params.id, body.env, principal.actor),
      {
        admin: true,
        jsonObjectBody: true,
        params: IdParam,
        body: PublishBody,
        ...describe({
          summary: "Publish one env's draft",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Re-validates the draft against the current schema, publishes it as a new version on that env and removes it. No draft is NOT_FOUND.",
          response: { 200: PublishedSchema },
        }),
      },
    )
    .post(
      "/:id/rollback",
      async ({ principal, params, body }) => await configs.rollback(principal.projectId, params.id, body, principal.actor),
      {
        admin: true,
        jsonObjectBody: true,
        params: IdParam,
        body: RollbackBody,
        ...describe({
          summary: "Publish a new version equal to an earlier one",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "The value of `version` on `env` is published again as that env's next version (SDKs see it at once); other envs and drafts stay as they are. The value is checked against the current schema first: one that no longer fits is VALIDATION and nothing changes. A version that env never had is NOT_FOUND. Audited as `config.rollback`; the activity log shows it as `config.publish` with `rollbackOf`.",
          response: { 200: PublishedSchema },
        }),
      },
    )
    .get(
      "/:id/activity",
      async ({ principal, params, query }) => await configs.activity(principal.projectId, params.id, numberParam(query.limit)),
      {
        admin: PROJECT_REQUIRED,
        params: IdParam,
        query: ActivityQuery,
        ...describe({
          summary: "Config activity, newest first",
          tag: TAG,
          auth: "admin+project",
          errors: [404],
          description: "Actions: config.create, config.update, config.draft.save, config.publish (payload `{env, version}`, plus `rollbackOf` when a rollback published it), config.delete. A deleted config's activity is read by its id.",
          response: { 200: t.Array(ActivitySchema) },
        }),
      },
    );
}
