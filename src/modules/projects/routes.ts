import { Elysia } from "elysia";
import type { AppContext } from "../../app";
import { forbidden } from "../../lib/errors";
import { IdParam, describe, jsonBodyPlugin } from "../../lib/http";
import { ProjectPatchSchema, ProjectSchema } from "./model";

/** A path id naming another project than the one the credential resolved to. */
function notYours(id: string) {
  return forbidden(
    "The path names another project than the one this call is for",
    `id: ${id.slice(0, 128)} is not the caller's project; use its id or \`current\`, or select the project with X-Project-Id`,
  );
}

export function projectRoutes(ctx: AppContext) {
  const { projects } = ctx.services;
  return new Elysia({ name: "projects", seed: ctx, prefix: "/api/admin/projects" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("/current", ({ principal }) => projects.get(principal.projectId), {
      admin: true,
      ...describe({ summary: "The project the credential resolves to", tag: "Projects", auth: "admin", errors: [404], response: { 200: ProjectSchema } }),
    })
    .get(
      "/:id",
      ({ principal, params }) => {
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
      ({ principal, params, body }) => {
        // `current` is the caller's own project, as in GET /projects/current.
        const id = params.id === "current" ? principal.projectId : params.id;
        if (id !== principal.projectId) throw notYours(id);
        return projects.update(id, body);
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
            "Only the fields sent change. The path takes the project's id (or `current`); it must be the project the credential resolves to (X-Project-Id selects among a person's projects). A new `domain` is stamped as the allowed browser origin into every live SDK key of the project, in the same transaction. Needs the manage permission (an admin key or an owner).",
          response: { 200: ProjectSchema },
        }),
      },
    );
}
