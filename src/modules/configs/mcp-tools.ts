import { z } from "zod";
import { ENVS } from "../../lib/envs";
import { ruleCondition } from "../gates/mcp-tools";
import { CONDITIONS_MAX } from "../gates/types";
import { CONFIG_RULES_MAX, SPLIT_VALUES_MAX } from "./rules";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, envArg, projectIdArg } from "../../mcp/tool";
import type { configRoutes } from "./routes";

/** The config routes, typed from their own schemas. */
const configs = (open: OpenSession, projectId?: string, options: { requireProject?: boolean } = {}) => open(projectId).api<ReturnType<typeof configRoutes>>(options).api.admin.configs;
const configName = z.string().min(1).max(128).describe("Config name or id");

const configRule = z
  .strictObject({
    name: z.string().max(100).optional().describe("Shown in explanations and as the variant (OFREP); no '/'"),
    conditions: z.array(ruleCondition).max(CONDITIONS_MAX).describe("All must hold; an empty list holds for everyone"),
    value: z.unknown().optional().describe("Served when the conditions hold; give `value` or `split`, not both"),
    split: z
      .array(z.strictObject({ value: z.unknown().describe("A value, checked against the schema"), weight: z.number().int().min(0).max(100).describe("Share of 100") }))
      .min(1)
      .max(SPLIT_VALUES_MAX)
      .optional()
      .describe("Values with integer weights summing to 100, bucketed by a stable hash of the unit (growing a weight only moves units into that value); a context without the unit passes the rule over"),
    unit: z.string().min(1).max(128).optional().describe("With split: the context attribute that identifies the unit; default user_id"),
  })
  .describe("A rule serves `value`, or `split` among several values");

export const configTools = [
  defineTool({
    name: "list_configs",
    title: "List dynamic configs",
    description:
      "The project's dynamic configs: name, id, description, the published version on each env (dev, staging, prod) and which envs have an unpublished draft. Call get_config for a config's schema and values.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      const all = await dataOf(configs(open, project_id).get({ query: { q: q || undefined } }));
      return all.map((c) => ({
        name: c.name,
        id: c.id,
        description: c.description,
        versions: Object.fromEntries(ENVS.map((e) => [e, c.envs[e].version])),
        drafts: ENVS.filter((e) => c.drafts[e] !== undefined),
        updatedAt: c.updatedAt,
      }));
    },
  }),
  defineTool({
    name: "get_config",
    title: "Get a dynamic config",
    description: "A dynamic config: its JSON Schema, the published value and version on each env, and any unpublished drafts. With `env`, only that env.",
    input: { name: configName, env: envArg.optional(), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, env, project_id }, open) {
      const cfg = await dataOf(configs(open, project_id)({ id: seg(name) }).get());
      return env ? { id: cfg.id, name: cfg.name, env, ...cfg.envs[env], draft: cfg.drafts[env] ?? null } : cfg;
    },
  }),
  defineTool({
    name: "save_config_draft",
    title: "Save a config draft",
    description: "Validates `value` against the config's schema and stores it as the draft for one env (replacing an earlier draft there). Nothing is published: call publish_config to make it live.",
    input: { name: configName, env: envArg, value: z.unknown().describe("The new JSON value"), project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run({ name, env, value, project_id }, open) {
      return dataOf(configs(open, project_id, { requireProject: true })({ id: seg(name) }).drafts.put({ env, value }));
    },
  }),
  defineTool({
    name: "publish_config",
    title: "Publish a config draft",
    description: "Publishes the env's draft as a new live version of the config; SDKs see it at once. Fails when the env has no draft.",
    input: { name: configName, env: envArg, project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async run({ name, env, project_id }, open) {
      return dataOf(configs(open, project_id, { requireProject: true })({ id: seg(name) }).publish.post({ env }));
    },
  }),
  defineTool({
    name: "rollback_config",
    title: "Roll back a config",
    description:
      "Publishes the value of an earlier version of one env again, as that env's next version; SDKs see it at once. get_config shows each env's current version; the value must still match the config's current schema (else VALIDATION, nothing changes). A version the env never had is NOT_FOUND.",
    input: { name: configName, env: envArg, version: z.number().int().min(1).describe("The earlier version of that env whose value to publish again"), project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async run({ name, env, version, project_id }, open) {
      return dataOf(configs(open, project_id)({ id: seg(name) }).rollback.post({ env, version }));
    },
  }),
  defineTool({
    name: "set_config_schema",
    title: "Replace a config's JSON Schema",
    description:
      "Replaces the JSON Schema (2020-12 by default, or draft-07 by `$schema`) that every value of the config must match. Refused (VALIDATION naming the env or draft and JSON path) when a published value or draft does not fit it; nothing changes then. Publishes nothing. get_config shows the current schema.",
    input: { name: configName, schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]).describe("The new JSON Schema (an object, or true/false)"), project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run({ name, schema, project_id }, open) {
      await dataOf(configs(open, project_id)({ id: seg(name) }).patch({ schema }));
      const cfg = await dataOf(configs(open, project_id)({ id: seg(name) }).get());
      return { id: cfg.id, name: cfg.name, schema: cfg.schema };
    },
  }),
  defineTool({
    name: "get_config_rules",
    title: "Get a config's rules",
    description:
      "A dynamic config's targeting on one env (default prod): its default value, its ordered rules (the first whose conditions all hold serves its value, or a split of values by the unit's stable bucket; none holding serves the default) and the env's unpublished draft, if any, with its own value and rules (`rules: null` when the draft keeps the published rules).",
    input: { name: configName, env: envArg.optional().describe("Default prod"), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, env = "prod", project_id }, open) {
      const cfg = await dataOf(configs(open, project_id)({ id: seg(name) }).get());
      const live = cfg.envs[env];
      const draft = cfg.drafts[env];
      return {
        id: cfg.id,
        name: cfg.name,
        env,
        version: live.version,
        value: live.value,
        rules: live.rules,
        draft: draft ? { value: draft.value, rules: draft.rules ?? null, baseVersion: draft.baseVersion, updatedAt: draft.updatedAt } : null,
      };
    },
  }),
  defineTool({
    name: "save_config_rules",
    title: "Save a config's rules",
    description:
      "Saves the whole ordered rule list of a config on one env as that env's draft, with the default value (`value`, else the env's published value). Nothing is live until published: pass `publish: true` only when the user asked to publish now (SDKs then see it at once), else call publish_config later. Every value is checked against the config's schema; mistakes are refused (VALIDATION naming the rule and field) and change nothing. Call get_config_rules first to start from the current rules.",
    input: {
      name: configName,
      env: envArg,
      rules: z.array(configRule).max(CONFIG_RULES_MAX).describe("In order: the first rule whose conditions all hold serves; an empty list serves the default to everyone"),
      value: z.unknown().optional().describe("The default value, served when no rule holds; default: the env's published value"),
      publish: z.boolean().optional().describe("Publish the draft at once as the env's next version. Only when the user explicitly asked to publish; default false"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async run({ name, env, rules, value, publish, project_id }, open) {
      const api = configs(open, project_id, { requireProject: true })({ id: seg(name) });
      const defaultValue = value !== undefined ? value : (await dataOf(api.get())).envs[env].value;
      const draft = await dataOf(api.drafts.put({ env, value: defaultValue, rules }));
      if (publish !== true) return { draft, published: null };
      return { draft, published: await dataOf(api.publish.post({ env })) };
    },
  }),
  defineTool({
    name: "explain_config",
    title: "Explain a config's value for a context",
    description:
      "What a dynamic config serves an evaluation context on one env (default prod): the value, its variant (`default`, the deciding rule's name or rule-N, `<rule>/<M>` for the M-th value of a split) and reason (TARGETING_MATCH, SPLIT, DEFAULT), the deciding rule (0-based ruleIndex), the unit's bucket for a split, and each earlier rule's conditions with why. `draft: true` previews the env's saved draft. Reads only; the same evaluator as the SDKs and OFREP.",
    input: {
      name: configName,
      env: envArg.optional().describe("Default prod"),
      context: z.record(z.string(), z.unknown()).describe('The evaluation context: user_id and any attributes, e.g. {"user_id":"user-42","email":"ana@acme.com","country":"de"}'),
      draft: z.boolean().optional().describe("Evaluate the env's draft instead of what is published"),
      project_id: projectIdArg,
    },
    annotations: READ_ONLY,
    async run({ name, env, context, draft, project_id }, open) {
      return dataOf(configs(open, project_id)({ id: seg(name) }).explain.post({ env, context, draft }));
    },
  }),
];
