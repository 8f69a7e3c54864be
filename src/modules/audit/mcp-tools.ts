import { z } from "zod";
import { dataOf } from "../../cli/client";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { auditRoutes } from "./routes";

export const auditTools = [
  defineTool({
    name: "list_audit",
    title: "Read the audit trail",
    description:
      "Who changed what in the project, newest first: every toggle, publish, key, token and member change, every CLI sign-in for the organisation, with the person (or key or token), subject, env and time. Rows with projectId null belong to the organisation (members, CLI sign-ins). Filters combine: action (`killswitch.toggle`, or a prefix like `config.`), a name or email substring, one actor, a resource type or subject id, a time range.",
    input: {
      project_id: projectIdArg,
      action: z.string().max(100).optional().describe("One action, or a prefix ending in '.'"),
      q: z.string().max(200).optional().describe("Substring of the subject's name or the actor's email"),
      actor: z.string().max(320).optional().describe("Only this actor's rows: the whole email, case-insensitive (ana@example.com, admin-key:…@keys.local)"),
      resource: z.string().max(128).optional().describe("A resource type (killswitch, config, gate, key, token, member, session, device, project, alert_rule, …) or one subject's id (ksw_…)"),
      since: z.string().max(64).optional().describe("Rows at or after this ISO 8601 time (2026-11-23T10:00:00Z, an offset, or a date)"),
      until: z.string().max(64).optional().describe("Rows before this ISO 8601 time (exclusive)"),
      limit: z.number().int().min(1).max(500).optional().describe("Default 50"),
      before: z.number().int().min(1).optional().describe("nextBefore of the previous call, for older rows"),
    },
    annotations: READ_ONLY,
    untrusted: "subject names, which for queue items are the titles people outside the organisation filed through the public intake",
    async run({ project_id, action, q, actor, resource, since, until, limit, before }, open) {
      // Checked by the server: a bad time or resource comes back as its VALIDATION error naming the field.
      // Empty filters are left out, as before; numbers go as the text the query takes.
      const query = {
        action: action || undefined,
        q: q || undefined,
        actor: actor || undefined,
        resource: resource || undefined,
        since: since || undefined,
        until: until || undefined,
        limit: limit?.toString(),
        before: before?.toString(),
      };
      return dataOf(open(project_id).api<ReturnType<typeof auditRoutes>>().api.admin.audit.get({ query }));
    },
  }),
];
