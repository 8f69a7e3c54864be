import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { McpSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { identityRoutes } from "./routes";

/** The people routes (/api/admin/me, /members), typed from their own schemas. */
const admin = (session: McpSession) => session.api<ReturnType<typeof identityRoutes>>().api.admin;

export const identityTools = [
  defineTool({
    name: "whoami",
    title: "Who am I",
    description: "The signed-in user, the server, the active project (and where it was chosen from: a project_id argument, the .service file, the login, or the credential's own) and every project the user can reach.",
    input: {},
    annotations: READ_ONLY,
    async run(_args, open) {
      const client = open();
      const me = await dataOf(admin(client).me.get());
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
      const me = await dataOf(admin(open()).me.get());
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
      // An empty q is left out, as before.
      const members = await dataOf(admin(open(project_id)).members.get({ query: { q: q || undefined } }));
      return members.map((m) => ({ email: m.email, role: m.role, joinedAt: m.joinedAt }));
    },
  }),
];
