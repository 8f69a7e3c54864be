import { z } from "zod";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { AuditPageSchema } from "./contract";

export const auditTools = [
  defineTool({
    name: "list_audit",
    title: "Read the audit trail",
    description: "Who changed what in the project, newest first: every toggle, publish, key, token and member change, with the person (or key or token), subject, env and time. Filter by action (`killswitch.toggle`, or a prefix like `config.`) or by a name or email.",
    input: {
      project_id: projectIdArg,
      action: z.string().max(100).optional().describe("One action, or a prefix ending in '.'"),
      q: z.string().max(200).optional().describe("Substring of the subject's name or the actor's email"),
      limit: z.number().int().min(1).max(500).optional().describe("Default 50"),
      before: z.number().int().min(1).optional().describe("nextBefore of the previous call, for older rows"),
    },
    annotations: READ_ONLY,
    async run({ project_id, action, q, limit, before }, open) {
      const params = new URLSearchParams();
      if (action) params.set("action", action);
      if (q) params.set("q", q);
      if (limit) params.set("limit", String(limit));
      if (before) params.set("before", String(before));
      const query = params.size ? `?${params}` : "";
      return open(project_id).request<(typeof AuditPageSchema)["static"]>("GET", `/api/admin/audit${query}`);
    },
  }),
];
