import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin } from "../../lib/http";
import { AttributeSchema, CreateAttributeBody, UpdateAttributeBody } from "./contract";

const TAG = "Attributes";

export function attributeRoutes(ctx: AppContext) {
  const { attributes } = ctx.services;
  return new Elysia({ name: "attributes", seed: ctx, prefix: "/api/admin/attributes" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await attributes.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({
        summary: "Attributes of the project (q over name and description)",
        tag: TAG,
        auth: "admin",
        description: "Declared ones (source manual) and every attribute seen in evaluation contexts (source auto), by name.",
        response: { 200: t.Array(AttributeSchema) },
      }),
    })
    .get("/:id", async ({ principal, params }) => await attributes.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get an attribute by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: AttributeSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await attributes.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateAttributeBody,
        ...describe({
          summary: "Declare an attribute",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description: "An attribute only seen so far (auto) becomes declared (manual) and keeps its id; a declared one is 409.",
          response: { 201: AttributeSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await attributes.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateAttributeBody,
      ...describe({ summary: "Update or deprecate an attribute", tag: TAG, auth: "admin", errors: [404], response: { 200: AttributeSchema } }),
    });
}
