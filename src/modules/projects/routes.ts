import { Elysia } from "elysia";
import type { AppContext } from "../../app";
import { forbidden } from "../../lib/errors";
import { IdParam, describe, jsonBodyPlugin } from "../../lib/http";
import { ProjectPatchSchema, ProjectSchema } from "./model";

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
        if (params.id !== principal.projectId) throw forbidden("This credential is not allowed on that project", `id: ${params.id}`);
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
        if (params.id !== principal.projectId) throw forbidden("This credential is not allowed on that project", `id: ${params.id}`);
        return projects.update(params.id, body);
      },
      {
        admin: true,
        // Every field is optional: without it a form, `[]` or `null` body would pass as an empty patch and answer 200.
        jsonObjectBody: true,
        params: IdParam,
        body: ProjectPatchSchema,
        ...describe({
          summary: "Update project settings",
          tag: "Projects",
          auth: "admin",
          errors: [404],
          description: "Only the fields sent change. A new `domain` is stamped as the allowed browser origin into every live SDK key of the project, in the same transaction.",
          response: { 200: ProjectSchema },
        }),
      },
    );
}
