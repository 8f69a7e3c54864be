/** `svc projects`: the projects you reach, and a new one (the shared sign-in side lives in src/cli/account.ts). */
import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { dataOf, writeBinding } from "../../cli/client";
import { CLIENT_FLAGS, emit, openClient, str } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { projectRows, reachableProjects } from "../../cli/account";
import type { CreateProjectBody } from "./contract";
import type { projectRoutes } from "./routes";

export const projectsCommand: Command = {
  name: "projects",
  summary: "Projects you can reach: list, create",
  examples: ["svc projects list", "svc projects create Checkout --bind"],
  subcommands: [
    {
      name: "list",
      summary: "List every project you can reach, across your organisations; * marks the active one",
      examples: ["svc projects list", "svc projects list --query shop --json"],
      flags: { query: { type: "string", value: "TEXT", help: "Only projects whose name, id or organisation contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const client = openClient(values);
        const me = await reachableProjects(client);
        const active = client.projectId ?? me.project?.id ?? null;
        const q = str(values, "query")?.toLowerCase();
        const projects = me.projects
          .filter((p) => !q || [p.id, p.name, p.organisationName].some((t) => t.toLowerCase().includes(q)))
          .map((p) => ({ ...p, active: p.id === active }));
        emit(values.json, projects, () => {
          const lines = [projects.length ? projectRows(projects, active) : q ? `No projects match "${q}".` : "You reach no project yet; create one with `svc projects create <name>`."];
          if (active && !me.projects.some((p) => p.id === active)) {
            const from = client.projectSource === ".service" ? client.bindingPath : client.projectSource;
            lines.push("", `note: ${from} selects project ${active}, which you cannot reach; \`svc bind <project>\` picks another.`);
          }
          return lines.join("\n");
        });
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a project in one of your organisations (editors and owners; not API tokens)",
      args: ["<name>"],
      examples: ["svc projects create Checkout", "svc projects create Checkout --organisation org_… --plan free --bind"],
      flags: {
        organisation: { type: "string", value: "ID", help: "Organisation to create it in (default: the active project's; `svc whoami` lists yours)" },
        plan: { type: "string", value: "PLAN", help: "pro (default) or free" },
        "public-tickets": { type: "boolean", help: "Let client keys file public tickets (bug reports, feature requests) into it" },
        bind: { type: "boolean", help: "Also bind the current directory to the new project (writes ./.service)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!.trim();
        if (name === "" || name.length > 200) throw new UsageError("<name> must be 1-200 characters");
        const plan = str(values, "plan");
        if (plan !== undefined && plan !== "pro" && plan !== "free") throw new UsageError(`--plan must be pro or free (got "${plan}")`);
        const body: Static<typeof CreateProjectBody> = { name };
        const organisation = str(values, "organisation");
        if (organisation !== undefined) body.organisationId = organisation;
        if (plan) body.plan = plan;
        if (values["public-tickets"]) body.publicTicketCreation = true;
        const project = await dataOf(openClient(values).api<ReturnType<typeof projectRoutes>>().api.admin.projects.post(body));
        const bound = values.bind ? writeBinding(process.cwd(), project.id) : null;
        emit(values.json, bound ? { ...project, boundPath: bound } : project, () =>
          [
            `Created project ${project.name} (${project.id}) in organisation ${project.organisationId}, plan ${project.plan}.`,
            bound ? `Bound ${process.cwd()} to it (${bound}).` : `Bind a directory to it with \`svc bind ${project.id}\`.`,
            `Next: its SDK keys, with \`svc sdk keys create --type server --project ${project.id}\`.`,
          ].join("\n"),
        );
        return 0;
      },
    },
  ],
};
