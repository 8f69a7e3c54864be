import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, describe, jsonBodyPlugin, ListQuery, numberParam } from "../../lib/http";
import type { GateRule } from "../../sdk/gates";
import {
  CreateGateBody,
  CreateTemplateBody,
  TemplateSchema,
  UpdateTemplateBody,
  CreatedGateSchema,
  CreatedSchema,
  ExplainBody,
  ExplanationSchema,
  GateSchema,
  HistoryEntrySchema,
  HistoryQuery,
  PublishedSchema,
  RollbackBody,
  SetRulesBody,
  UpdateGateBody,
} from "./contract";

const TAG = "Gates";
const TEMPLATES = "Gate templates";

export function gateRoutes(ctx: AppContext) {
  const { gates } = ctx.services;
  return new Elysia({ name: "gates", seed: ctx, prefix: "/api/admin/gates" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "",
      async ({ principal, body, set }) => {
        const gate = await gates.create(principal.projectId, { ...body, rules: body.rules as GateRule[] | undefined }, principal.actor);
        set.status = 201;
        return { id: gate.id, name: gate.name, warnings: await gates.warnings(principal.projectId, gate.envs.prod.rules) };
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateGateBody,
        ...describe({
          summary: "Create a gate",
          tag: TAG,
          auth: "admin",
          errors: [404, 409],
          description:
            "Publishes version 1 on every env with the given rules (default none: off for everyone). Operators and values are checked per rule; a VALIDATION detail names the rule and field (`rules[1].conditions[0].value`). " +
            "A passes_gate/fails_gate value naming no gate of the project is 404 NOT_FOUND naming it. The bound on evaluation work of PUT /{id}/rules applies.",
          response: { 201: CreatedGateSchema },
        }),
      },
    )
    .post(
      "/templates",
      async ({ principal, body, set }) => {
        const created = await gates.templates.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return { id: created.id, name: created.name };
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateTemplateBody,
        ...describe({
          summary: "Create a gate template of this project",
          tag: TEMPLATES,
          auth: "admin",
          errors: [409],
          description:
            "Its conditions are checked like a gate rule's; a segment they name (in_segment / not_in_segment) must exist, and cannot be deleted while the template names it. " +
            "Instead of `rules`, `segment` (id or name) builds the one-condition template `{attr: <the segment's attribute>, op: \"in_segment\", value: <its name>}` (category `segment` by default). " +
            "409 when the name exists in the project or is a built-in's (built-ins cannot be created).",
          response: { 201: CreatedSchema },
        }),
      },
    )
    .get("/templates", async ({ principal, query }) => await gates.templates.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Built-in templates, then the project's (q over name, description, category)", tag: TEMPLATES, auth: "admin", response: { 200: t.Array(TemplateSchema) } }),
    })
    .get("/templates/:id", async ({ principal, params }) => await gates.templates.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a template by id or name", tag: TEMPLATES, auth: "admin", errors: [404], response: { 200: TemplateSchema } }),
    })
    .patch("/templates/:id", async ({ principal, params, body }) => await gates.templates.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateTemplateBody,
      ...describe({ summary: "Update a template of this project", tag: TEMPLATES, auth: "admin", errors: [404, 409], description: "Built-ins are read-only: FORBIDDEN.", response: { 200: TemplateSchema } }),
    })
    .delete(
      "/templates/:id",
      async ({ principal, params, set }) => {
        await gates.templates.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a template of this project", tag: TEMPLATES, auth: "admin", errors: [404], description: "Built-ins are read-only: FORBIDDEN. Gates made from it keep their rules." }),
      },
    )
    .get("", async ({ principal, query }) => await gates.list(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "List gates (q over name and description)", tag: TAG, auth: "admin", response: { 200: t.Array(GateSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await gates.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a gate by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: GateSchema } }),
    })
    .patch("/:id", async ({ principal, params, body }) => await gates.updateDescription(principal.projectId, params.id, body.description, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateGateBody,
      ...describe({ summary: "Update a gate's description", tag: TAG, auth: "admin", errors: [404], response: { 200: GateSchema } }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await gates.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Delete a gate", tag: TAG, auth: "admin", errors: [400, 404], description: "It leaves every env's snapshot. Refused (VALIDATION naming them) while another gate's rules on any env name it (passes_gate/fails_gate), or an unfinished experiment or rollout uses it." }),
      },
    )
    .put("/:id/rules", async ({ principal, params, body }) => await gates.setRules(principal.projectId, params.id, body.env, body.rules, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: SetRulesBody,
      ...describe({
        summary: "Publish a new rule list on one env",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "One new version on that env. Refused (VALIDATION, naming the rule and field): unknown operators, values of the wrong type, RE2-invalid patterns, prerequisites that would form a cycle or nest over 10 deep, " +
          "and rules whose worst-case evaluation (each gate reached through passes_gate/fails_gate counted once) would cost over 20,000 units (a condition 1, a list 1 more per 8 entries, a regex 64 per RE2 instruction), also when the change pushes a gate that depends on this one over (that gate is named). " +
          "A publish that would make the env's snapshot over 5 MiB of JSON is VALIDATION too. A prerequisite naming no gate of the project (another project's included) is 404 NOT_FOUND naming the rule and field.",
        response: { 200: PublishedSchema },
      }),
    })
    .get("/:id/history", async ({ principal, params, query }) => await gates.history(principal.projectId, params.id, { env: query.env, limit: numberParam(query.limit) }), {
      admin: true,
      params: IdParam,
      query: HistoryQuery,
      ...describe({ summary: "Published versions, newest first", tag: TAG, auth: "admin", errors: [404], response: { 200: t.Array(HistoryEntrySchema) } }),
    })
    .post("/:id/rollback", async ({ principal, params, body }) => await gates.rollback(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: RollbackBody,
      ...describe({
        summary: "Publish a new version equal to an earlier one",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "The new version's rules equal those of `version` on `env`, checked again (a prerequisite may have gone since).",
        response: { 200: PublishedSchema },
      }),
    })
    .post("/:id/explain", async ({ principal, params, body }) => await gates.explain(principal.projectId, params.id, body.env ?? "prod", body.context), {
      // Evaluates and stores nothing: reading is enough.
      admin: "read",
      jsonObjectBody: true,
      params: IdParam,
      body: ExplainBody,
      ...describe({
        summary: "Explain a gate's answer for a context",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "The value the gate gives this context on the env (default prod), the rule that decided (and the unit's bucket when a percentage did), and for each earlier rule the condition that failed and why. The same evaluator as the SDK and OFREP. " +
          "A context over 64 KiB of JSON is VALIDATION (`context: …`); a text attribute over 4,096 characters matches no operator.",
        response: { 200: ExplanationSchema },
      }),
    });
}
