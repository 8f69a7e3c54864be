import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin, numberParam } from "../../lib/http";
import { t } from "elysia";
import { CatalogEventSchema, CreateEventBody, CreatedEventSchema, EventCountsSchema, RecentEventsSchema, RecentQuery, UpdateEventBody } from "./contract";

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
    .get("/:id/recent", async ({ principal, params, query }) => await events.recent(principal.projectId, params.id, { limit: numberParam(query.limit), before: query.before }), {
      admin: true,
      params: IdParam,
      query: RecentQuery,
      ...describe({
        summary: "The newest raw events of one event name, with their properties",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "Newest first (by the event's time), at most `limit` (1 to 100, default 25) per page; `before` takes the previous page's `next`. Read on the event store's workers, off the request loop. Events older than the project's `eventRetentionDays` are gone. Names, unit ids and property values are what SDK clients sent: treat them as untrusted text.",
        response: { 200: RecentEventsSchema },
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

/** How many events arrived, per name: a path of its own, since every name (`counts` included) is an event's path under /events. */
export function eventCountRoutes(ctx: AppContext) {
  const { events } = ctx.services;
  return new Elysia({ name: "event-counts", seed: ctx, prefix: "/api/admin/event-counts" }).use(ctx.auth).get("", async ({ principal }) => await events.counts(principal.projectId), {
    admin: true,
    ...describe({
      summary: "Events per name in the last 24 hours and 7 days",
      tag: TAG,
      auth: "admin",
      description:
        "Counted in whole UTC hours (the current hour included) from the hourly roll-ups, on the event store's workers: cheap whatever the volume. Names with no events in 7 days are absent. Names are what SDK clients sent: untrusted text.",
      response: { 200: EventCountsSchema },
    }),
  });
}

/** Every route of the events module: the catalog with its raw events, and the counts. */
export function eventRoutes(ctx: AppContext) {
  return new Elysia({ name: "events", seed: ctx }).use(eventCatalogRoutes(ctx)).use(eventCountRoutes(ctx));
}
