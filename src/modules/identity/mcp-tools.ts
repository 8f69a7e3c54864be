import { z } from "zod";
import type { Me } from "../../cli/account";
import type { Member } from "./cli";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";

export const identityTools = [
  defineTool({
    name: "whoami",
    title: "Who am I",
    description: "The signed-in user, the server, the active project (and where it was chosen from: a project_id argument, the .service file, the login, or the credential's own) and every project the user can reach.",
    input: {},
    annotations: READ_ONLY,
    async run(_args, open) {
      const client = open();
      const me = await client.request<Me>("GET", "/api/admin/me");
      return { user: me.user, project: me.project, projectSource: client.projectSource, serverUrl: client.serverUrl, credential: me.credential, credentialSource: client.credentialSource };
    },
  }),
  defineTool({
    name: "list_projects",
    title: "List projects",
    description: "Every project the user can reach, across organisations; `active` marks the one calls use when no project_id is given.",
    input: {},
    annotations: READ_ONLY,
    async run(_args, open) {
      const me = await open().request<Me>("GET", "/api/admin/me");
      return me.projects.map((p) => ({ ...p, active: p.id === me.project?.id }));
    },
  }),
  defineTool({
    name: "list_members",
    title: "List members",
    description: "People of the project's organisation with their role (viewer reads; editor also writes; owner also manages keys, tokens, settings and members) and when they joined.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on email") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      const members = await open(project_id).request<Member[]>("GET", `/api/admin/members${q ? `?q=${encodeURIComponent(q)}` : ""}`);
      return members.map((m) => ({ email: m.email, role: m.role, joinedAt: m.joinedAt }));
    },
  }),
];
