import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { projectRoutes } from "./routes";

/** The project routes, typed from their own schemas. */
const projects = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof projectRoutes>>().api.admin.projects;

const days = (what: string) => z.number().int().min(1).max(365).optional().describe(what);

export const projectTools = [
  defineTool({
    name: "get_project",
    title: "Get project settings",
    description:
      "The project's settings: name, slug, domain and allowedOrigins (the browser origins its SDK keys admit), defaultEnv, timezone, eventRetentionDays, staleAfterDays, the experiment analysis settings and which parts are on. list_projects lists the projects you reach.",
    input: { project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ project_id }, open) {
      return dataOf(projects(open, project_id).current.get());
    },
  }),
  defineTool({
    name: "update_project",
    title: "Change project settings",
    description:
      "Changes the project's settings; only the fields given change. A new domain or allowedOrigins (the whole list, replaced) is stamped into every live SDK key at once: browsers from other origins are then refused, so check the list with the user first. Needs an owner (or an admin key). Returns the project as stored.",
    input: {
      name: z.string().min(1).max(200).optional().describe("Display name"),
      slug: z.string().min(1).max(63).optional().describe("Slug, as in the dashboard's URLs"),
      domain: z.string().max(253).optional().describe('Host (example.com) or origin (https://app.example.com) browsers call from; "" clears it'),
      allowedOrigins: z.array(z.string().max(253)).max(20).optional().describe("Browser origins admitted besides the domain's, e.g. https://staging.example.com or http://localhost:5173; replaces the list"),
      defaultEnv: z.enum(["dev", "staging", "prod"]).optional().describe("The env used when a call or key names none"),
      timezone: z.string().min(1).max(64).optional().describe("IANA time zone, e.g. Europe/Berlin"),
      eventRetentionDays: days("Days raw analytics events are kept (1-365)"),
      staleAfterDays: days("Days after which a flag serving one value to everyone, or not evaluated, is listed stale (1-365)"),
      analysis: z
        .strictObject({
          method: z.enum(["frequentist", "bayesian"]).optional(),
          significanceThreshold: z.number().gt(0).lt(1).optional(),
          autoRollback: z.boolean().optional(),
          minSampleDays: z.number().int().min(0).max(365).optional(),
        })
        .optional()
        .describe("Any of the experiment analysis settings; the others keep their values"),
      publicTicketCreation: z.boolean().optional().describe("Whether client keys may file public bug reports and feature requests"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run({ project_id, ...fields }, open) {
      return dataOf(projects(open, project_id)({ id: "current" }).patch(fields));
    },
  }),
  defineTool({
    name: "create_project",
    title: "Create a project",
    description:
      "Creates a project in one of the signed-in person's organisations (editors and owners; an API token or key cannot). Returns the project; it does not become the active one: pass its id as project_id to act on it.",
    input: {
      name: z.string().min(1).max(200).describe("Display name"),
      organisation_id: z.string().min(1).max(128).optional().describe("Default: the active project's organisation (whoami lists yours)"),
      plan: z.enum(["pro", "free"]).optional().describe("Default pro"),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ name, organisation_id, plan }, open) {
      return dataOf(projects(open).post({ name, organisationId: organisation_id, plan }));
    },
  }),
];
