import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { validation } from "../../lib/errors";
import { IdParam, ListQuery, describe, jsonBodyPlugin, numberParam } from "../../lib/http";
import {
  CreateKillswitchBody,
  CreatedSchema,
  DeleteSwitchResultSchema,
  HistoryEntrySchema,
  HistoryQuery,
  KillswitchSchema,
  RollbackBody,
  SetSwitchBody,
  SetSwitchResultSchema,
  SetValueBody,
  SetValueResultSchema,
  SwitchRef,
  SwitchRefQuery,
  ToggleBody,
  ToggleResultSchema,
} from "./contract";

const TAG = "Killswitches";

/** One DELETE /switch field from the body or the query; both given and different is refused. */
function pick<T>(field: string, fromBody: T | undefined, fromQuery: T | undefined): T {
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw validation(`${field} differs between body and query`, `${field}: send it once, in the body or in the query`);
  }
  const value = fromBody ?? fromQuery;
  if (value === undefined) throw validation("Request failed validation", `${field}: required (in the JSON body or the query)`);
  return value;
}

export function killswitchRoutes(ctx: AppContext) {
  const { killswitches } = ctx.services;
  return new Elysia({ name: "killswitches", seed: ctx, prefix: "/api/admin/killswitches" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "",
      async ({ principal, body, set }) => {
        const ks = await killswitches.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return { id: ks.id, name: ks.name };
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateKillswitchBody,
        ...describe({
          summary: "Create a killswitch",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description: "Publishes version 1 on every env (dev, staging, prod) with the given value (default false) and switches (default {}).",
          response: { 201: CreatedSchema },
        }),
      },
    )
    .get("", async ({ principal, query }) => await killswitches.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "List killswitches with their state on every env", tag: TAG, auth: "admin", response: { 200: t.Array(KillswitchSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await killswitches.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a killswitch by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: KillswitchSchema } }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await killswitches.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Delete a killswitch and its history",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Moves every env's revision, so SDK snapshots drop it.",
        }),
      },
    )
    .post("/:id/toggle", async ({ principal, params, body }) => await killswitches.toggle(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: ToggleBody,
      ...describe({
        summary: "Toggle the flat value or one sub-switch, publishing one version",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: [
          "1. `{}` flips the flat value on prod (env defaults to prod).",
          "2. `switchKey` alone flips that entry; a missing entry counts as false and is created flipped (true).",
          "3. A boolean `value` publishes exactly that value, so a retry cannot undo the first call.",
          "4. Exactly one new version is published, on that env only.",
        ].join("\n"),
        response: { 200: ToggleResultSchema },
      }),
    })
    .put(
      "/:id/switch",
      async ({ principal, params, body }) => {
        const r = await killswitches.setSwitch(principal.projectId, params.id, body, principal.actor);
        return { id: r.id, env: r.env, switchKey: r.switchKey, value: r.value };
      },
      {
        admin: true,
        jsonObjectBody: true,
        params: IdParam,
        body: SetSwitchBody,
        ...describe({
          summary: "Set or add one sub-switch on one env",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "All of env, switchKey and value are required. One new version on that env only; false keeps the entry in the map.",
          response: { 200: SetSwitchResultSchema },
        }),
      },
    )
    .delete(
      "/:id/switch",
      async ({ principal, params, body, query }) =>
        await killswitches.deleteSwitch(
          principal.projectId,
          params.id,
          { env: pick("env", body.env, query.env), switchKey: pick("switchKey", body.switchKey, query.switchKey) },
          principal.actor,
        ),
      {
        admin: true,
        jsonObjectBody: true,
        params: IdParam,
        body: SwitchRef,
        query: SwitchRefQuery,
        ...describe({
          summary: "Remove one sub-switch entry on one env",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "`env` and `switchKey` in the JSON body, or as `?env=&switchKey=` for clients that cannot send DELETE bodies. One new version on that env; an entry that is not there is NOT_FOUND.",
          response: { 200: DeleteSwitchResultSchema },
        }),
      },
    )
    .put("/:id/value", async ({ principal, params, body }) => await killswitches.setValue(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: SetValueBody,
      ...describe({
        summary: "Set the flat value on one env",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "Unconditional; one new version on that env.",
        response: { 200: SetValueResultSchema },
      }),
    })
    .get(
      "/:id/history",
      async ({ principal, params, query }) =>
        await killswitches.history(principal.projectId, params.id, { env: query.env, limit: numberParam(query.limit) }),
      {
        admin: true,
        params: IdParam,
        query: HistoryQuery,
        ...describe({
          summary: "Published versions, newest first",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "All envs unless `env` is given; at most `limit` rows (default 100, at most 1000).",
          response: { 200: t.Array(HistoryEntrySchema) },
        }),
      },
    )
    .post("/:id/rollback", async ({ principal, params, body }) => await killswitches.rollback(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: RollbackBody,
      ...describe({
        summary: "Publish a new version equal to an earlier one",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "The new version's value and switches equal those of `version` on `env` (NOT_FOUND when there is no such version). The response has the toggle's shape, with switchKey null.",
        response: { 200: ToggleResultSchema },
      }),
    });
}
