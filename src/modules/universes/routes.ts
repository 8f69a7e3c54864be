import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import { CreateUniverseBody, CreatedUniverseSchema, UniverseSchema, UpdateUniverseBody } from "./contract";

const TAG = "Universes";
/** SPEC: universe creation takes X-Project-Id as required (missing: 400 BAD_REQUEST). */
const PROJECT_REQUIRED = { projectHeader: "required" } as const;

export function universeRoutes(ctx: AppContext) {
  const { universes } = ctx.services;
  return new Elysia({ name: "universes", seed: ctx, prefix: "/api/admin/universes" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await universes.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Universes of the project (q over name)", tag: TAG, auth: "admin", response: { 200: t.Array(UniverseSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await universes.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a universe by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: UniverseSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await universes.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: PROJECT_REQUIRED,
        jsonObjectBody: true,
        body: CreateUniverseBody,
        ...describe({
          summary: "Create a universe",
          tag: TAG,
          auth: "admin+project",
          errors: [409],
          description:
            "A universe is the unit space experiments share: each unit id (`user_id`, or `account_id` for account-level experiments) is hashed with the universe's salt into one of 10,000 segments, experiments take disjoint ranges of segments, and the holdout range is given to none. " +
            "`holdout_range` is `[start, end)` in segments, 0 ≤ start < end ≤ 10000 (`[0, 500]`: 5 % of units held out); `null` or absent: none. " +
            "409 ALREADY_EXISTS when the name exists; 403 FORBIDDEN when a `holdout_range` (not null) is sent for a project whose plan is below pro (pro, business and enterprise may); VALIDATION naming the field for anything else.",
          response: { 201: CreatedUniverseSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await universes.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateUniverseBody,
      ...describe({
        summary: "Rename a universe or move its holdout",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Fields sent replace the stored ones: `name` (409 when taken), `holdout_range` (`[start, end)`, or null to remove it; a range needs plan pro or above, 403 otherwise, and may not cover the segments of an experiment running in the universe). " +
          "`unit_type` cannot change (VALIDATION): every unit would land in another segment and every experiment's assignments would change; create another universe instead. The salt never changes.",
        response: { 200: UniverseSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await universes.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Delete a universe",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Refused (VALIDATION naming them) while an experiment runs in the universe: stop it first.",
        }),
      },
    );
}
