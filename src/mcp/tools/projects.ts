import type { Me } from "../../cli/account";
import { READ_ONLY, defineTool } from "../tool";

export const projectTools = [
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
];
