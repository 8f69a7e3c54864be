import { z } from "zod";
import { ENVS } from "../../lib/envs";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, envArg, projectIdArg } from "../../mcp/tool";
import type { configRoutes } from "./routes";

/** The config routes, typed from their own schemas. */
const configs = (open: OpenSession, projectId?: string, options: { requireProject?: boolean } = {}) => open(projectId).api<ReturnType<typeof configRoutes>>(options).api.admin.configs;
const configName = z.string().min(1).max(128).describe("Config name or id");

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
];
