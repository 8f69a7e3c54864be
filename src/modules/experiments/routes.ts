import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, describe, jsonBodyPlugin } from "../../lib/http";
import { CreateExperimentBody, ExperimentListQuery, ExperimentSchema, StopBody, UpdateExperimentBody } from "./contract";
import { ResultsSchema } from "./results-contract";

const TAG = "Experiments";

export function experimentRoutes(ctx: AppContext) {
  const { experiments } = ctx.services;
  return new Elysia({ name: "experiments", seed: ctx, prefix: "/api/admin/experiments" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await experiments.list(principal.projectId, query), {
      admin: true,
      query: ExperimentListQuery,
      ...describe({ summary: "Experiments of the project (q over name and description; status filters)", tag: TAG, auth: "admin", response: { 200: t.Array(ExperimentSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await experiments.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get an experiment by id, name or unique id prefix", tag: TAG, auth: "admin", errors: [404], response: { 200: ExperimentSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await experiments.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateExperimentBody,
        ...describe({
          summary: "Create an experiment (a draft)",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "A draft in a universe: 2 to 10 variants (the first is the control) with relative weights, a value each and optionally an override of one config or gate, " +
            "an allocation `[start, end)` of the universe's 10,000 segments (not over its holdout), optionally a targeting gate, a primary metric and guardrail metrics. " +
            "A unit's variant: its segment must be in the allocation and outside the holdout, it must pass the gate, then the experiment's own salted hash of the unit id picks a variant by weight, so a unit keeps its variant when other experiments start or stop. " +
            "409 when the name exists; 404 NOT_FOUND naming the field when the universe, gate, an override's gate or config, or a metric is none of the project's (another project's id included), checked in the write's transaction; " +
            "VALIDATION naming the field for anything else (an override value that fails the config's schema).",
          response: { 201: ExperimentSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await experiments.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateExperimentBody,
      ...describe({
        summary: "Change an experiment",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "A draft changes anything. A running experiment changes only name, description, primaryMetric and guardrailMetrics (its split, universe, env, variants, allocation and gate are fixed: units would change variant mid-test); a stopped one only name and description. Other fields: VALIDATION naming them.",
        response: { 200: ExperimentSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await experiments.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a draft or stopped experiment", tag: TAG, auth: "admin", errors: [404], description: "A running experiment is refused (VALIDATION): stop it first." }),
      },
    )
    .post("/:id/start", async ({ principal, params }) => await experiments.start(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Start a draft",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "draft → running: published in the snapshot of its env, so SDKs assign units and log exposures. Refused (VALIDATION naming them) when the allocation overlaps the universe's holdout or a running experiment of the universe, or when its gate or an override target no longer exists.",
        response: { 200: ExperimentSchema },
      }),
    })
    .post("/:id/stop", async ({ principal, params, body }) => await experiments.stop(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: StopBody,
      ...describe({
        summary: "Stop a running experiment: ship a variant or roll back",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "running → stopped; it leaves the snapshot, so every unit gets the default again. `ship` names the winning variant (make its value the default where it lives); `rollback` names none. The outcome, reason and who stopped it are kept and audited.",
        response: { 200: ExperimentSchema },
      }),
    })
    .get("/:id/results", async ({ principal, params }) => await experiments.results(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Analysis of an experiment",
        tag: TAG,
        auth: "admin",
        errors: [404, 422, 502, 503],
        description:
          "Exposed units per variant with the sample-ratio-mismatch check, then per metric (primary and guardrails) and per treatment against the control: Welch (means), two proportions (unique metrics: converted or not), the delta method (ratio metrics), relative lift with its interval, " +
          "the always-valid sequential result, the Bayesian chance to beat control with credible intervals, CUPED when units have a pre-period. The project's `analysis` settings give the method the verdict reads and the significance threshold. " +
          "Sums are computed in the event store; 422 when a metric no longer compiles, 502/503 when the analytics upstream fails.",
        response: { 200: ResultsSchema },
      }),
    });
}
