import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, describe, jsonBodyPlugin, numberParam } from "../../lib/http";
import { CheckSchema, ChecksQuery, CreateRolloutBody, ReasonBody, RolloutListQuery, RolloutSchema, UpdateRolloutBody } from "./contract";

const TAG = "Rollouts";

export function rolloutRoutes(ctx: AppContext) {
  const { rollouts } = ctx.services;
  const action = (summary: string, description: string) => ({ admin: true as const, params: IdParam, ...describe({ summary, tag: TAG, auth: "admin", errors: [404], description, response: { 200: RolloutSchema } }) });
  return new Elysia({ name: "rollouts", seed: ctx, prefix: "/api/admin/rollouts" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await rollouts.list(principal.projectId, query), {
      admin: true,
      query: RolloutListQuery,
      ...describe({ summary: "Guarded rollouts of the project, newest first (q over subject, description and id; status filters)", tag: TAG, auth: "admin", response: { 200: t.Array(RolloutSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await rollouts.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a rollout by id, unique id prefix, or the name of the gate or config it rolls out", tag: TAG, auth: "admin", errors: [404], response: { 200: RolloutSchema } }),
    })
    .get("/:id/checks", async ({ principal, params, query }) => await rollouts.checks(principal.projectId, params.id, numberParam(query.limit)), {
      admin: true,
      params: IdParam,
      query: ChecksQuery,
      ...describe({
        summary: "The monitor's checks of a rollout, newest first",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "One per round (every minute): the stage, the ingest lag, and per watched metric both groups' units and means, the difference with its always-valid interval, and what the check decided.",
        response: { 200: t.Array(CheckSchema) },
      }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await rollouts.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateRolloutBody,
        ...describe({
          summary: "Start (or schedule) a guarded rollout of a gate's new rules or a config's new value",
          tag: TAG,
          auth: "admin",
          errors: [404, 409],
          description:
            "The units in the current stage (their `user_id` bucket under the rollout's salt below the stage's percent, the same in SDKs, OFREP and the server) get the change, the rest keep what is published; each logs an exposure. " +
            "Every minute the monitor compares both groups of the current stage with an always-valid sequential test on the error rate (tracked errors per unit, always watched) and the metrics named, each with its direction and tolerated regression. " +
            "A regression pauses or rolls back at once (audited, the snapshot revised, connectors told with rollout.* events); otherwise a stage advances when its minutes are up and the data is fresh, and after the last (100 %) the change is published for everyone. " +
            "409 when the gate or config already has an unfinished rollout on the env. 404 NOT_FOUND naming the field when the gate, config or a watched metric is none of the project's (another project's id included), checked again in the write's transaction.",
          response: { 201: RolloutSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await rollouts.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateRolloutBody,
      ...describe({ summary: "Change a rollout's description, notification or action on regression", tag: TAG, auth: "admin", errors: [404], description: "The change and the stages are fixed once created: roll back and start another.", response: { 200: RolloutSchema } }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await rollouts.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a finished or scheduled rollout", tag: TAG, auth: "admin", errors: [404], description: "A running or paused rollout is refused (VALIDATION): roll it back first." }),
      },
    )
    .post("/:id/pause", async ({ principal, params, body }) => await rollouts.pause(principal.projectId, params.id, principal.actor, body.reason), {
      ...action("Pause a running rollout", "Units keep what the current stage gives them; nothing advances until it resumes."),
      jsonObjectBody: true,
      body: ReasonBody,
    })
    .post("/:id/resume", async ({ principal, params }) => await rollouts.resume(principal.projectId, params.id, principal.actor), action("Resume a paused rollout", "The stage's minutes count again from now."))
    .post("/:id/advance", async ({ principal, params }) => await rollouts.advance(principal.projectId, params.id, principal.actor), action("Advance now", "A scheduled rollout starts; a running or paused one moves to its next stage, or completes after the last (the change is published for everyone)."))
    .post("/:id/rollback", async ({ principal, params, body }) => await rollouts.rollback(principal.projectId, params.id, principal.actor, body.reason ?? null), {
      ...action("Roll back now", "Every unit gets the old value again: the rollout leaves the snapshot (a new revision, SSE), audited, connectors told."),
      jsonObjectBody: true,
      body: ReasonBody,
    });
}
