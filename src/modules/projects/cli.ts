/** `svc projects`: the projects you reach, and a new one (the shared sign-in side lives in src/cli/account.ts). */
import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { dataOf, writeBinding } from "../../cli/client";
import { CLIENT_FLAGS, emit, envFlag, intFlag, list, oneOf, openClient, str } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { projectRows, reachableProjects } from "../../cli/account";
import type { CreateProjectBody, ProjectPatchSchema, ProjectSchema } from "./contract";
import type { projectRoutes } from "./routes";

/** The parts `--enable` / `--disable` name, and the setting each is. */
const PART_FIELDS = {
  translations: "moduleTranslations",
  configs: "moduleConfigs",
  gates: "moduleGates",
  experiments: "moduleExperiments",
  feedback: "moduleFeedback",
  "public-tickets": "publicTicketCreation",
} as const;
const PARTS = Object.keys(PART_FIELDS) as (keyof typeof PART_FIELDS)[];

export const projectsCommand: Command = {
  name: "projects",
  summary: "Projects you can reach: list, create, get and update their settings",
  examples: ["svc projects list", "svc projects create Checkout --bind", "svc projects update --allowed-origin https://staging.shop.example.com --stale-after-days 45"],
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
    {
      name: "get",
      summary: "Show the active project's settings (or --project's): domain, origins, default env, analysis, stale-flag days",
      examples: ["svc projects get", "svc projects get --project 7c0e… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values }) {
        const project = await dataOf(projectsApi(values).current.get());
        emit(values.json, project, () => settingsText(project));
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change the active project's settings; only the flags given change (needs an owner or an admin key)",
      examples: [
        "svc projects update --domain https://shop.example.com --allowed-origin https://staging.shop.example.com --allowed-origin http://localhost:5173",
        "svc projects update --default-env staging --timezone Europe/Berlin --stale-after-days 45",
        "svc projects update --analysis-method bayesian --disable feedback --json",
      ],
      flags: {
        name: { type: "string", value: "NAME", help: "A new display name (1-200 characters)" },
        slug: { type: "string", value: "SLUG", help: "A new slug (1-63 characters), as shown in the dashboard's URLs" },
        domain: { type: "string", value: "ORIGIN", help: "Host or origin browsers call from (stamped into every live SDK key); \"\" clears it" },
        "allowed-origin": { type: "string", value: "ORIGIN", multiple: true, help: "A browser origin admitted besides the domain's; the flags given replace the whole list" },
        "clear-allowed-origins": { type: "boolean", help: "Empty the allowed-origins list (browsers then come from the domain only)" },
        "default-env": { type: "string", value: "ENV", help: "The env a key or call without one uses: dev, staging or prod" },
        timezone: { type: "string", value: "ZONE", help: "IANA time zone for schedules and daily figures, e.g. Europe/Berlin" },
        "event-retention-days": { type: "string", value: "DAYS", help: "Days raw analytics events are kept (1-365)" },
        "stale-after-days": { type: "string", value: "DAYS", help: "Days after which an unchanged or unevaluated flag is listed stale (1-365)" },
        "analysis-method": { type: "string", value: "METHOD", help: "How experiments are analysed: frequentist or bayesian" },
        significance: { type: "string", value: "P", help: "Significance threshold of experiment results, above 0 and below 1 (e.g. 0.05)" },
        "auto-rollback": { type: "string", value: "STATE", help: "on or off: roll back guarded rollouts automatically when a guardrail fails" },
        "min-sample-days": { type: "string", value: "DAYS", help: "Days an experiment runs before its results are called (0-365)" },
        enable: { type: "string", value: "PART", multiple: true, help: `Turn a part on: ${PARTS.join(", ")}` },
        disable: { type: "string", value: "PART", multiple: true, help: `Turn a part off: ${PARTS.join(", ")}` },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const body = patchFrom(values);
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give at least one flag (see `svc projects update --help`)");
        const project = await dataOf(projectsApi(values)({ id: "current" }).patch(body));
        emit(values.json, project, () => [`Updated ${Object.keys(body).join(", ")} of project ${project.name} (${project.id}).`, "", settingsText(project)].join("\n"));
        return 0;
      },
    },
  ],
};

type Project = Static<typeof ProjectSchema>;
type ProjectPatch = Static<typeof ProjectPatchSchema>;

const projectsApi = (values: Parameters<typeof openClient>[0]) => openClient(values).api<ReturnType<typeof projectRoutes>>().api.admin.projects;


function patchFrom(values: Parameters<typeof openClient>[0]): ProjectPatch {
  const body: ProjectPatch = {};
  const name = str(values, "name");
  if (name !== undefined) body.name = name;
  const slug = str(values, "slug");
  if (slug !== undefined) body.slug = slug;
  const domain = str(values, "domain");
  if (domain !== undefined) body.domain = domain;
  const origins = list(values, "allowed-origin");
  if (origins.length > 0 && values["clear-allowed-origins"]) throw new UsageError("--allowed-origin and --clear-allowed-origins contradict each other: give one");
  if (origins.length > 0) body.allowedOrigins = origins;
  if (values["clear-allowed-origins"]) body.allowedOrigins = [];
  const defaultEnv = envFlag(values["default-env"], "--default-env");
  if (defaultEnv) body.defaultEnv = defaultEnv;
  const timezone = str(values, "timezone");
  if (timezone !== undefined) body.timezone = timezone;
  const retention = intFlag(values["event-retention-days"], "event-retention-days", 1, 365);
  if (retention !== undefined) body.eventRetentionDays = retention;
  const stale = intFlag(values["stale-after-days"], "stale-after-days", 1, 365);
  if (stale !== undefined) body.staleAfterDays = stale;
  const analysis: NonNullable<ProjectPatch["analysis"]> = {};
  const method = str(values, "analysis-method");
  if (method !== undefined) analysis.method = oneOf(method, ["frequentist", "bayesian"] as const, "--analysis-method");
  const significance = str(values, "significance");
  if (significance !== undefined) {
    const p = Number(significance);
    if (!(significance.trim() !== "" && p > 0 && p < 1)) throw new UsageError(`--significance must be a number above 0 and below 1 (got "${significance}")`);
    analysis.significanceThreshold = p;
  }
  const rollback = str(values, "auto-rollback");
  if (rollback !== undefined) analysis.autoRollback = oneOf(rollback, ["on", "off"] as const, "--auto-rollback") === "on";
  const days = intFlag(values["min-sample-days"], "min-sample-days", 0, 365);
  if (days !== undefined) analysis.minSampleDays = days;
  if (Object.keys(analysis).length > 0) body.analysis = analysis;
  const enable = list(values, "enable").map((p) => oneOf(p, PARTS, "--enable"));
  const disable = list(values, "disable").map((p) => oneOf(p, PARTS, "--disable"));
  const both = enable.find((p) => disable.includes(p));
  if (both) throw new UsageError(`--enable ${both} and --disable ${both} contradict each other: give one`);
  for (const p of enable) body[PART_FIELDS[p]] = true;
  for (const p of disable) body[PART_FIELDS[p]] = false;
  return body;
}

function settingsText(p: Project): string {
  const on = PARTS.filter((part) => p[PART_FIELDS[part]]);
  const off = PARTS.filter((part) => !p[PART_FIELDS[part]]);
  return [
    `${p.name} (${p.id}), slug ${p.slug}, organisation ${p.organisationId}, plan ${p.plan}`,
    `  domain            ${p.domain || "(none: browsers from any origin)"}`,
    `  allowed origins   ${p.allowedOrigins.length ? p.allowedOrigins.join(", ") : "(none besides the domain's)"}`,
    `  default env       ${p.defaultEnv}`,
    `  time zone         ${p.timezone}`,
    `  events kept       ${p.eventRetentionDays} days`,
    `  stale after       ${p.staleAfterDays} days`,
    `  analysis          ${p.analysis.method}, significance ${p.analysis.significanceThreshold}, auto-rollback ${p.analysis.autoRollback ? "on" : "off"}, at least ${p.analysis.minSampleDays} days`,
    `  on                ${on.join(", ") || "(none)"}`,
    `  off               ${off.join(", ") || "(none)"}`,
  ].join("\n");
}
