import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import { immutableMetric } from "./service";
import { AlertRuleSchema, CreateAlertRuleBody, CreatedSchema, UpdateAlertRuleBody, UpdatedSchema } from "./contract";

const TAG = "Alert rules";

export function alertRoutes(ctx: AppContext) {
  const { alerts } = ctx.services;
  return new Elysia({ name: "alerts", seed: ctx, prefix: "/api/admin/alert-rules" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    // After authentication (macros run in the order the route lists them) and before the body's schema:
    // a body carrying metricId is 409 whatever else it holds.
    .macro({
      immutableMetricId: (_enabled: true) => ({
        transform({ body }) {
          if (typeof body === "object" && body !== null && Object.hasOwn(body, "metricId")) throw immutableMetric();
        },
      }),
    })
    .get("", async ({ principal, query }) => await alerts.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Alert rules of the project (q over name)", tag: TAG, auth: "admin", response: { 200: t.Array(AlertRuleSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await alerts.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get an alert rule by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: AlertRuleSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await alerts.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateAlertRuleBody,
        ...describe({
          summary: "Create an alert rule",
          tag: TAG,
          auth: "admin",
          errors: [404, 409],
          description:
            "Fires when the metric's value over the trailing `windowHours` (default 1) compares with `threshold` as `comparator` says; checked every minute. `metricId` (id or name) must name a metric of the project and never changes. " +
            "`notify` null (the default) delivers to the project default; its `connectorId` must name a connector of the project. Either reference naming nothing of the project (another project's id included) is 404 NOT_FOUND naming the field, checked in the write's transaction. 409 when the name exists.",
          response: { 201: CreatedSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await alerts.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      immutableMetricId: true,
      params: IdParam,
      body: UpdateAlertRuleBody,
      ...describe({
        summary: "Update an alert rule (id or name)",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Partial update of threshold, comparator, windowHours, enabled and notify (null: back to the project default; a `connectorId` that names no connector of the project is 404 NOT_FOUND naming it). A body carrying `metricId`, whatever its value, is 409 IMMUTABLE_FIELD. Disabling puts the rule back to ok without a notification.",
        response: { 200: UpdatedSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await alerts.remove(principal.projectId, params.id, principal.actor, principal.kind === "session");
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Delete an alert rule (dashboard only)",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Only from the dashboard (a signed-in browser session): SDK keys, admin keys and tokens get FORBIDDEN. Disable a rule with PATCH `enabled: false` instead.",
        }),
      },
    );
}
