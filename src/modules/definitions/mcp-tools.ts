import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import { TOOLS } from "./importers/common";
import type { definitionsRoutes } from "./routes";

/** The definitions routes, typed from their own schemas. */
const admin = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof definitionsRoutes>>().api.admin;

const documentArg = z
  .object({ version: z.literal(1) })
  .passthrough()
  .describe("A definitions document as export_definitions returns it: {version: 1, attributes?, segments?, templates?, killswitches?, gates?, configs?, universes?}; a section left out is not touched");
const envArg = z.string().max(40).optional().describe("Comma-separated envs to consider (dev, staging, prod); default all three");

export const definitionTools = [
  defineTool({
    name: "export_definitions",
    title: "Export definitions",
    description: "The project's definitions as one document (flags as code): attributes, segments, gate templates, killswitches, gates, configs and universes by name, with per-env values and rules. No ids, salts or secrets.",
    input: { project_id: projectIdArg, env: envArg, only: z.string().max(200).optional().describe("Comma-separated sections to include") },
    annotations: READ_ONLY,
    async run({ project_id, env, only }, open) {
      return dataOf(admin(open, project_id).export.get({ query: { env: env || undefined, only: only || undefined } }));
    },
  }),
  defineTool({
    name: "plan_definitions",
    title: "Plan definitions",
    description: "What applying a definitions document would change (created, changed field by field, deleted with prune), every change checked as apply would check it; changes nothing.",
    input: { project_id: projectIdArg, document: documentArg, prune: z.boolean().optional().describe("Also plan deleting what a section lists no longer"), env: envArg },
    annotations: READ_ONLY,
    async run({ project_id, document, prune, env }, open) {
      return dataOf(admin(open, project_id).apply.post(document as never, { query: { dryRun: "true", prune: prune ? "true" : undefined, env: env || undefined } }));
    },
  }),
  defineTool({
    name: "import_definitions",
    title: "Import from another tool",
    description:
      "Converts another tool's export (Unleash feature export, GrowthBook features payload or API export, LaunchDarkly flags list, Flagsmith environment document) into a definitions document, as `svc import` does, and plans it: returns {document, unmapped (what could not be mapped and why), rebucketed (percentages whose units land in other buckets), plan}. Changes nothing; show the unmapped parts and the plan, then call apply_definitions with the document.",
    input: {
      project_id: projectIdArg,
      tool: z.enum(TOOLS).describe("The tool the export comes from"),
      export: z.record(z.string(), z.unknown()).describe("The tool's export, as JSON"),
      env: z.enum(["dev", "staging", "prod"]).optional().describe("The svc env an export of one environment goes to (GrowthBook payload, Flagsmith document); default prod"),
      env_map: z.string().max(400).optional().describe("Source environments to svc envs, e.g. qa=staging,live=prod"),
      keep_exact: z.boolean().optional().describe("Keep only 0% and 100% rules (no re-bucketing); partial percentages are listed as unmapped"),
      prune: z.boolean().optional().describe("Also plan deleting what a section lists no longer"),
    },
    annotations: READ_ONLY,
    async run({ project_id, tool, export: raw, env, env_map, keep_exact, prune }, open) {
      const api = admin(open, project_id);
      const converted = await dataOf(api.import({ tool }).post(raw, { query: { env, envMap: env_map || undefined, keepExact: keep_exact ? "true" : undefined } }));
      const plan = await dataOf(api.apply.post(converted.document as never, { query: { dryRun: "true", prune: prune ? "true" : undefined } }));
      return { ...converted, plan };
    },
  }),
  defineTool({
    name: "apply_definitions",
    title: "Apply definitions",
    description:
      "Applies a definitions document in one transaction: creates, changes and (with prune) deletes through the owning modules, audited; the first refusal changes nothing. Run plan_definitions first and show the plan. " +
      "When an env it publishes on requires approval, nothing is published: it opens one change request holding the document ({request, plan}); a person other than you must approve it (an agent never approves) before it is applied.",
    input: {
      project_id: projectIdArg,
      document: documentArg,
      prune: z.boolean().optional().describe("Delete what a section lists no longer"),
      env: envArg,
      title: z.string().min(1).max(200).optional().describe("The change request's title, when an env requires approval (default: svc apply: <counts>)"),
      reason: z.string().max(2000).optional().describe("Why, for the change request's approvers"),
    },
    annotations: DESTRUCTIVE,
    async run({ project_id, document, prune, env, title, reason }, open) {
      return dataOf(admin(open, project_id).apply.post(document as never, { query: { prune: prune ? "true" : undefined, env: env || undefined, title: title || undefined, reason: reason || undefined } }));
    },
  }),
];
