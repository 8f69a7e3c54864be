import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import { CreateMetricBody, MetricSchema, SeriesBody, SeriesSchema, UpdateMetricBody } from "./contract";

const TAG = "Metrics";

export function metricRoutes(ctx: AppContext) {
  const { metrics } = ctx.services;
  return new Elysia({ name: "metrics", seed: ctx, prefix: "/api/admin/metrics" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await metrics.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Metrics of the project (q over name and description)", tag: TAG, auth: "admin", response: { 200: t.Array(MetricSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await metrics.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a metric by id, unique id prefix or name", tag: TAG, auth: "admin", errors: [404], response: { 200: MetricSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await metrics.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateMetricBody,
        ...describe({
          summary: "Define a metric",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "count, sum and unique name a catalogued `event` (a sum may name the numeric `property` it adds up; absent, the event's value); a ratio has a `numerator` and a `denominator`, each one of those. Every event must be in the event catalog and every property named (summed or filtered) among that event's catalogued properties: otherwise VALIDATION naming the field. 409 when the name exists.",
          response: { 201: MetricSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await metrics.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateMetricBody,
      ...describe({
        summary: "Update a metric",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "The fields sent replace the stored ones (null clears description and property); another `kind` starts the definition afresh from the fields sent. The whole definition is checked again against today's event catalog, so saving a metric that no longer compiled (422 on its series) makes it compile again.",
        response: { 200: MetricSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await metrics.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Delete a metric",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "A metric an alert rule uses is refused (VALIDATION naming the rules): a rule's metric never changes, so delete those rules first (in the dashboard). " +
            "So is one an unfinished rollout watches or a draft or running experiment measures (VALIDATION naming them).",
        }),
      },
    )
    .post("/:id/series", async ({ principal, params, body }) => await metrics.series(principal.projectId, params.id, body), {
      // Computes and stores nothing: reading is enough.
      admin: "read",
      jsonObjectBody: true,
      params: IdParam,
      body: SeriesBody,
      ...describe({
        summary: "The metric's time series",
        tag: TAG,
        auth: "admin",
        errors: [404, 422, 502, 503],
        description:
          "Buckets of `bucket` seconds from `from` (inclusive) to `to` (exclusive), every bucket present (empty ones 0); `to` must be greater than `from`, and at most 10,000 buckets (VALIDATION). A ratio divides its numerator's series by its denominator's bucket by bucket (0 where the denominator is 0) and `sql` carries both statements. 422 when the stored definition cannot be compiled (an event or property it names has left the catalog: re-save the metric); 502 when the analytics upstream fails, 503 when it cannot be reached.",
        response: { 200: SeriesSchema },
      }),
    });
}
