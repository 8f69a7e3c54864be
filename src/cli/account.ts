import { UsageError } from "../lib/config";
import { writeBinding } from "./client";
import { CLIENT_OPTIONS, clientCommand, emit, expectPositionals, openClient, table } from "./client-command";

/** GET /api/admin/me */
export type Me = {
  user: { email: string };
  project: { id: string; name: string } | null;
  projects: { id: string; name: string; organisationId: string; organisationName: string }[];
  credential?: { kind: string; readOnly: boolean };
};

export const whoamiCommand = clientCommand({
  name: "whoami",
  summary: "Show who you are signed in as, the active project and every project you can reach",
  usage: "svc whoami [--project ID] [--url URL] [--json]",
  examples: ["svc whoami", "svc whoami --json"],
  options: CLIENT_OPTIONS,
  async run({ values }) {
    const client = openClient(values);
    const me = await client.request<Me>("GET", "/api/admin/me");
    const result = { ...me, projectSource: client.projectSource, credentialSource: client.credentialSource, serverUrl: client.serverUrl };
    emit(values.json, result, () => {
      const readOnly = me.credential?.readOnly ? ", read-only" : "";
      const lines = [`Signed in to ${client.serverUrl} as ${me.user.email} (${client.credentialSource}${readOnly})`];
      lines.push(me.project ? `Active project: ${me.project.name} (${me.project.id}), from ${client.projectSource}` : "Active project: none");
      lines.push("", "Projects:");
      lines.push(
        table(
          ["", "ID", "NAME", "ORGANISATION"],
          me.projects.map((p) => [p.id === me.project?.id ? "*" : " ", p.id, p.name, p.organisationName]),
        ),
      );
      return lines.join("\n");
    });
    return 0;
  },
});

export const bindCommand = clientCommand({
  name: "bind",
  summary: "Bind the current directory to a project (writes ./.service)",
  usage: "svc bind <project_id> [--json]",
  examples: ["svc bind 6f1c2d3e-…"],
  options: { json: { type: "boolean" } },
  positionals: true,
  async run({ values, positionals }) {
    const [projectId] = expectPositionals(positionals, 1, "svc bind <project_id>");
    if (projectId!.length > 128 || !/^\S+$/.test(projectId!)) throw new UsageError("<project_id> must be 1-128 characters without spaces");
    const path = writeBinding(process.cwd(), projectId!);
    emit(values.json, { project_id: projectId, path }, () => `Bound ${process.cwd()} to project ${projectId} (${path}).`);
    return 0;
  },
});
