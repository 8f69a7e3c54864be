import { Elysia, t } from "elysia";
import { IdParam, describe, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { CreateScheduleBody, ScheduleListQuery, ScheduleSchema } from "./contract";

const TAG = "Schedules";

export function scheduleRoutes(ctx: AppContext) {
  const { schedules } = ctx.services;
  return new Elysia({ name: "schedules", seed: ctx, prefix: "/api/admin/schedules" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await schedules.list(principal.projectId, query), {
      admin: true,
      query: ScheduleListQuery,
      ...describe({ summary: "Scheduled changes of the project, newest first (q over id, summary and author; state filters)", tag: TAG, auth: "admin", response: { 200: t.Array(ScheduleSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await schedules.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a schedule by id or unique id prefix", tag: TAG, auth: "admin", errors: [404], response: { 200: ScheduleSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await schedules.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateScheduleBody,
        ...describe({
          summary: "Schedule a change for a time, or a ramp of changes at set times",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "`{change, runAt}` schedules one change; `{steps: [{change, runAt}, ...]}` a ramp (e.g. a gate at 5 %, 25 %, 100 % on three days), one schedule id. " +
            "Every step is checked now, applied in order in a transaction that is rolled back: a change the module would refuse is VALIDATION (or NOT_FOUND naming the gate, config, killswitch or segment) now rather than a failure later. " +
            "Each step runs once across all servers, as the person who scheduled it (actor type `schedule`), with a `schedule.run` audit row; a step whose time passed while no server ran runs as soon as one starts, with `late: true`, `lateByMs` and a note in its audit row. " +
            "A step the module refuses at its time (the gate was deleted meanwhile) fails with the error and the steps after it are cancelled.",
          response: { 201: ScheduleSchema },
        }),
      },
    )
    .delete("/:id", async ({ principal, params }) => await schedules.cancel(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Cancel a schedule's pending steps",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "Steps that already ran stay done (or failed); the pending ones become cancelled (audited as schedule.cancel). VALIDATION when nothing is pending. Answers the schedule.",
        response: { 200: ScheduleSchema },
      }),
    });
}
