import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import { t } from "elysia";
import { CatalogEventSchema, CreateEventBody, CreatedEventSchema, UpdateEventBody } from "./contract";

const TAG = "Event catalog";

export function eventCatalogRoutes(ctx: AppContext) {
  const { events } = ctx.services;
  return new Elysia({ name: "event-catalog", seed: ctx, prefix: "/api/admin/events" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await events.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({
        summary: "Events of the catalog, pending ones included (q over name, folder, description)",
        tag: TAG,
        auth: "admin",
        description: "Each carries its own `pending` flag: 1 for names ingest discovered and nobody approved yet.",
        response: { 200: t.Array(CatalogEventSchema) },
      }),
    })
    .get("/:id", async ({ principal, params }) => await events.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get an event by id, unique id prefix or name", tag: TAG, auth: "admin", errors: [404], response: { 200: CatalogEventSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const { event, approved } = await events.create(principal.projectId, body, principal.actor);
        set.status = approved ? 200 : 201;
        return { id: event.id, name: event.name };
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateEventBody,
        ...describe({
          summary: "Register an event (or approve a pending one)",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description: "201 for a new event. When the name matches a pending row, that row is approved (200, no conflict). A registered name is 409 ALREADY_EXISTS.",
          response: { 200: CreatedEventSchema, 201: CreatedEventSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await events.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateEventBody,
      ...describe({ summary: "Update an event's folder, description or properties", tag: TAG, auth: "admin", errors: [404], response: { 200: CatalogEventSchema } }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await events.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Remove an event from the catalog",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Stored events stay. Metrics that name it answer 422 on their series until re-saved; ingest of the name makes it pending again.",
        }),
      },
    );
}
