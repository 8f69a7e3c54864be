import { Elysia, t } from "elysia";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { CreateSegmentBody, CreatedSegmentSchema, SegmentSchema, SegmentSummarySchema, UpdateSegmentBody } from "./contract";

const TAG = "Segments";

export function segmentRoutes(ctx: AppContext) {
  const { segments } = ctx.services;
  return new Elysia({ name: "segments", seed: ctx, prefix: "/api/admin/segments" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await segments.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Segments of the project (q over name and description; ids are counted, not listed)", tag: TAG, auth: "admin", response: { 200: t.Array(SegmentSummarySchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await segments.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a segment by id or name, with its ids", tag: TAG, auth: "admin", errors: [404], response: { 200: SegmentSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await segments.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateSegmentBody,
        ...describe({
          summary: "Create a segment",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "A segment is a named set of units that gate rules reuse with `{attr, op: \"in_segment\" | \"not_in_segment\", value: <segment name>}`. " +
            "A unit is in it when the value of `attribute` (default `user_id`) in its context is one of `ids` (up to 100,000, matched in constant time), or when `conditions` (non-empty, gate operators) all hold. " +
            "409 ALREADY_EXISTS when the name exists; VALIDATION naming the field for anything else.",
          response: { 201: CreatedSegmentSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await segments.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateSegmentBody,
      ...describe({
        summary: "Change a segment",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Fields sent replace the stored ones (`ids` replaces the whole list). " +
          "`addIds` and `removeIds` change the list instead of replacing it (removals first, then additions not already listed; not with `ids`): a list larger than one 1 MiB body is imported in several requests, " +
          "each applied to the list as stored at that moment, so concurrent requests all land. The list must hold at most 100,000 ids afterwards (VALIDATION naming how many it would hold). " +
          "A change that leaves every field as it was writes nothing (no revision, no audit row). The audit row's detail gives the id count before and after. " +
          "Every env whose published gate rules name the segment is republished (one new revision each, streamed to SDKs). " +
          "A rename is refused (VALIDATION) while rules name the segment; 409 when the new name is taken.",
        response: { 200: SegmentSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await segments.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a segment", tag: TAG, auth: "admin", errors: [404, 409], description: "409 ALREADY_EXISTS while anything names the segment: published gate rules, an unfinished rollout's rules, a gate template (the answer names each, e.g. `gate new-nav (prod)`, `rollout rol_… of gate g (staging)`, `template Beta testers`)." }),
      },
    );
}
