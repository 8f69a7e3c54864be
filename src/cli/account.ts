import type { Static } from "elysia";
import { UsageError } from "../lib/config";
import type { MeSchema } from "../modules/identity/contract";
import type { identityRoutes } from "../modules/identity/routes";
import { type SvcClient, dataOf, writeBinding } from "./client";
import { CLIENT_FLAGS, JSON_FLAG, URL_FLAG, emit, openClient, table } from "./client-command";
import type { Command } from "./command";
import { CliError } from "./errors";

/** GET /api/admin/me, typed from its route's schema. */
export type Me = Static<typeof MeSchema>;
export type ReachableProject = Me["projects"][number];

/** GET /api/admin/me through the typed client (`withoutProject`: no X-Project-Id, whatever is selected). */
const whoIs = (client: SvcClient, withoutProject = false) => dataOf(client.api<ReturnType<typeof identityRoutes>>({ withoutProject }).api.admin.me.get());

/** Every project the caller reaches, asked without X-Project-Id so that an unreachable selection cannot hide them. */
export async function reachableProjects(client: SvcClient): Promise<Me> {
  return whoIs(client, true);
}

export function projectRows(projects: ReachableProject[], active?: string | null): string {
  return table(
    ["", "ID", "NAME", "ORGANISATION"],
    projects.map((p) => [p.id === active ? "*" : " ", p.id, p.name, p.organisationName]),
    { full: ["ID", "NAME", "ORGANISATION"] },
  );
}

/** A few projects, one per line, for a hint. */
export function projectList(projects: ReachableProject[]): string {
  const shown = projects.slice(0, 10).map((p) => `\n      ${p.id}  ${p.name}  (${p.organisationName})`);
  return shown.join("") + (projects.length > 10 ? `\n      … and ${projects.length - 10} more` : "");
}

/**
 * The project `wanted` names among those the caller reaches: its id, else
 * its exact name, else its name in any case. Unknown or ambiguous: exit 1
 * with the projects to choose from.
 */
export function findProject(me: Me, wanted: string, serverUrl: string): ReachableProject {
  const byId = me.projects.find((p) => p.id === wanted);
  if (byId) return byId;
  let matches = me.projects.filter((p) => p.name === wanted);
  if (matches.length === 0) matches = me.projects.filter((p) => p.name.toLowerCase() === wanted.toLowerCase());
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new CliError(`${matches.length} projects you can reach are named "${wanted}"`, "AMBIGUOUS", `give the id of the one you mean:${projectList(matches)}`);
  }
  const who = me.user.email ? ` as ${me.user.email}` : "";
  throw new CliError(
    `no project "${wanted}" among the projects you can reach${who} on ${serverUrl}; nothing was written`,
    "NOT_FOUND",
    me.projects.length
      ? `bind one of these by id or name (\`svc projects list\` shows them all):${projectList(me.projects)}`
      : "you reach no project yet: create one with `svc projects create <name>`, or ask an owner to invite you (`svc members invite`).",
  );
}

export const whoamiCommand: Command = {
  name: "whoami",
  summary: "Show who you are signed in as, the active project and every project you can reach",
  examples: ["svc whoami", "svc whoami --json"],
  flags: { ...CLIENT_FLAGS },
  async run({ values }) {
    const client = openClient(values);
    const me = await whoIs(client);
    const result = { ...me, projectSource: client.projectSource, credentialSource: client.credentialSource, serverUrl: client.serverUrl };
    emit(values.json, result, () => {
      const readOnly = me.credential?.readOnly ? ", read-only" : "";
      const lines = [`Signed in to ${client.serverUrl} as ${me.user.email} (${client.credentialSource}${readOnly})`];
      const from = {
        "--project": "--project",
        ".service": client.bindingPath,
        login: "login",
        "config.json": "config.json",
        credential: client.credentialSource === "SERVICE_CLI_TOKEN" ? "the API token's own project" : "the credential",
      }[client.projectSource];
      lines.push(me.project ? `Active project: ${me.project.name} (${me.project.id}), from ${from}` : "Active project: none (`svc bind <project>` picks one for this directory)");
      lines.push("", "Projects:", projectRows(me.projects, me.project?.id));
      return lines.join("\n");
    });
    return 0;
  },
};

export const bindCommand: Command = {
  name: "bind",
  summary: "Bind the current directory to one of your projects (writes ./.service)",
  args: ["<project>"],
  details: [
    "<project> is a project id or name; it is checked with the server first, so only a project you can reach is bound (else exit 1, nothing written, and the projects you can reach are listed). Commands run in this directory or below then act on it, unless --project says otherwise.",
  ],
  examples: ["svc bind 6f1c2d3e-…", 'svc bind "Main project"', "svc projects list"],
  flags: { json: JSON_FLAG, url: URL_FLAG },
  async run({ values, positionals }) {
    const wanted = positionals[0]!.trim();
    if (wanted === "" || wanted.length > 200) throw new UsageError("<project> must be a project id or name (1-200 characters)");
    // The .service file here (perhaps broken, perhaps naming an unreachable project) is what this replaces: it is not read.
    const client = openClient(values, { ignoreBinding: true });
    const me = await reachableProjects(client);
    const project = findProject(me, wanted, client.serverUrl);
    const path = writeBinding(process.cwd(), project.id);
    emit(values.json, { project_id: project.id, name: project.name, organisationName: project.organisationName, path }, () =>
      `Bound ${process.cwd()} to project ${project.name} (${project.id}) of ${project.organisationName}; wrote ${path}.`,
    );
    return 0;
  },
};

