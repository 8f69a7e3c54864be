import { Elysia, t } from "elysia";
import { badRequest, forbidden } from "../../lib/errors";
import { IdParam, ListQuery, describe, filterByQuery, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { CreateProjectBody, ProjectPatchSchema, ProjectSchema } from "./contract";

/** A path id naming another project than the one the credential resolved to. */
function notYours(id: string) {
  return forbidden(
    "The path names another project than the one this call is for",
    `id: ${id.slice(0, 128)} is not the caller's project; use its id or \`current\`, or select the project with X-Project-Id`,
  );
}

export function projectRoutes(ctx: AppContext) {
  const { projects, identity } = ctx.services;
  /** The caller of an organisation-level route; a project it names with X-Project-Id must be one it reaches. */
  const callerOf = async (request: Request, headers: Record<string, string | undefined>) => {
    const caller = await ctx.authenticator.identify(request, headers);
    const named = headers["x-project-id"];
    if (named && !(await caller.access(named))) throw forbidden("This credential is not allowed on that project", `X-Project-Id: ${named.slice(0, 128)}`);
    return caller;
  };
  const personOf = async (request: Request, headers: Record<string, string | undefined>) => {
    const caller = await callerOf(request, headers);
    if (!caller.userId) throw forbidden("Projects are created by people", "Sign in with `svc login` (an SDK key or API token belongs to one project)");
    return { ...caller, userId: caller.userId };
  };
  return new Elysia({ name: "projects", seed: ctx, prefix: "/api/admin/projects" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get(
      "",
      async ({ headers, request, query }) => {
        // A person lists every project they reach, with or without one selected (like /me); a named one must be theirs.
        const caller = await callerOf(request, headers);
        const reached = caller.userId
          ? await projects.listForUser(caller.userId)
          : [await projects.get((await ctx.authenticator.forProject(caller, headers, request.method, true)).projectId)];
        return filterByQuery(reached, query.q, (p) => [p.name, p.slug]);
      },
      {
        transform: async ({ headers, request }) => {
          await callerOf(request, headers);
        },
        query: ListQuery,
        ...describe({
          summary: "Projects the caller reaches",
          tag: "Projects",
          auth: "admin",
          description: "A person: every project of every organisation they belong to, with or without one selected. An admin key or API token: its one project. `q` filters name and slug.",
          response: { 200: t.Array(ProjectSchema) },
        }),
      },
    )
    .post(
      "",
      async ({ headers, request, body, set }) => {
        // Organisation-level: the project header does not limit it, the person's role in the organisation does.
        const caller = await personOf(request, headers);
        const selected = headers["x-project-id"] || caller.defaultProjectId;
        const organisationId = body.organisationId ?? (selected && (await caller.access(selected)) ? (await projects.get(selected)).organisationId : null);
        if (!organisationId) throw badRequest("Which organisation?", "organisationId: send it (see GET /api/admin/me), or select a project of that organisation with X-Project-Id");
        const role = await identity.roleInOrganisation(caller.userId, organisationId);
        if (!role) throw forbidden("You are not a member of that organisation", `organisationId: ${organisationId.slice(0, 128)}`);
        if (role === "viewer") throw forbidden("Your role (viewer) cannot create projects", "Ask an owner of the organisation to make you editor or owner");
        const project = await projects.createProject(organisationId, {
          name: body.name,
          ownerEmail: caller.actor.email,
          plan: body.plan,
          publicTicketCreation: body.publicTicketCreation,
          actor: caller.actor,
        });
        set.status = 201;
        return project;
      },
      {
        // The credential is checked before the body (as the admin macro does), so a caller without one learns nothing.
        transform: async ({ headers, request }) => {
          await personOf(request, headers);
        },
        body: CreateProjectBody,
        ...describe({
          summary: "Create a project in one of your organisations",
          tag: "Projects",
          auth: "admin",
          errors: [404],
          description:
            "For people (device-flow access token) with the editor or owner role in the organisation; SDK keys and API tokens cannot. The organisation is `organisationId`, else the selected project's. Mint its keys afterwards with `POST /api/admin/keys` and `X-Project-Id: <new id>`.",
          response: { 201: ProjectSchema },
        }),
      },
    )
    .get("/current", async ({ principal }) => projects.get(principal.projectId), {
      admin: true,
      ...describe({ summary: "The project the credential resolves to", tag: "Projects", auth: "admin", errors: [404], response: { 200: ProjectSchema } }),
    })
    .get(
      "/:id",
      async ({ principal, params }) => {
        if (params.id !== principal.projectId) throw notYours(params.id);
        return projects.get(params.id);
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Get the full project record", tag: "Projects", auth: "admin", errors: [404], response: { 200: ProjectSchema } }),
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => {
        // `current` is the caller's own project, as in GET /projects/current.
        const id = params.id === "current" ? principal.projectId : params.id;
        if (id !== principal.projectId) throw notYours(id);
        return projects.update(id, body, principal.actor);
      },
      {
        admin: "manage",
        // Every field is optional: without it a form, `[]` or `null` body would pass as an empty patch and answer 200.
        jsonObjectBody: true,
        params: IdParam,
        body: ProjectPatchSchema,
        ...describe({
          summary: "Update project settings",
          tag: "Projects",
          auth: "admin",
          errors: [404],
          description:
            "Only the fields sent change. The path takes the project's id (or `current`); it must be the project the credential resolves to (X-Project-Id selects among a person's projects). A new `domain` or `allowedOrigins` is stamped into every live SDK key of the project, in the same transaction: a browser (`Origin` header) may then call the SDK paths from the domain's origin or a listed one only (none set: any), and CORS preflights are approved for those origins; every server hears of it at once. Needs the manage permission (an admin key or an owner).",
          response: { 200: ProjectSchema },
        }),
      },
    );
}
