import { Elysia, t } from "elysia";
import { IdParam, describe, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { ChangeKindSchema, ChangeRequestSchema, OpenRequestBody, PolicyBody, PolicySchema, RejectBody, RequestListQuery } from "./contract";

const TAG = "Change requests";

export function requestRoutes(ctx: AppContext) {
  const { requests } = ctx.services;
  return new Elysia({ name: "requests", seed: ctx, prefix: "/api/admin/requests" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("/policy", async ({ principal }) => await requests.policy(principal.projectId), {
      admin: true,
      ...describe({ summary: "The project's approval policy: which envs need an approved change request", tag: TAG, auth: "admin", response: { 200: PolicySchema } }),
    })
    .put("/policy", async ({ principal, body }) => await requests.setPolicy(principal.projectId, body, principal.actor), {
      admin: "manage",
      jsonObjectBody: true,
      body: PolicyBody,
      ...describe({
        summary: "Set the approval policy (off until turned on; prod is the usual env)",
        tag: TAG,
        auth: "admin",
        description:
          "While an env requires approval, direct publishes of killswitches, configs, gates, segments (every env) and rollouts on it answer 409 APPROVAL_REQUIRED: open a change request instead. " +
          "With `killswitchBypass`, a killswitch toggle that sends a `reason` goes through and is recorded as a `request.bypass` audit row. Audited as request.policy.",
        response: { 200: PolicySchema },
      }),
    })
    .get("/kinds", () => requests.kinds(), {
      admin: true,
      ...describe({
        summary: "The kinds of change a request can hold",
        tag: TAG,
        auth: "admin",
        description: "Each registered kind (every module's, so new kinds appear here by themselves): its name, what it targets, a line about it, its fields, and whether GET of one request shows what is published now beside it.",
        response: { 200: t.Array(ChangeKindSchema) },
      }),
    })
    .get("", async ({ principal, query }) => await requests.list(principal.projectId, query), {
      admin: true,
      query: RequestListQuery,
      ...describe({
        summary: "Change requests of the project, newest first (q over id, title, reason and author; state filters)",
        tag: TAG,
        auth: "admin",
        description: "The list stays cheap: its changes carry neither `current` nor `proposed` (they read what is published for every change); GET one request for its diff.",
        response: { 200: t.Array(ChangeRequestSchema) },
      }),
    })
    .get("/:id", async ({ principal, params }) => await requests.detail(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Get a change request by id or unique id prefix, with each change's diff",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "Each change carries `proposed` (its payload as its kind shows it) and, while the request is open, approved or stale, `current`: what is published now for its target, read at this call, in the same shape. " +
          "For an applied request what it replaced is in its request.apply audit row; a kind that shows no diff has `currentNote` instead.",
        response: { 200: ChangeRequestSchema },
      }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await requests.open(principal.projectId, body, principal.actor);
        set.status = 201;
        // Answered as GET of it is, with each change's diff: the author sees what they proposed against what is published.
        return await requests.detail(principal.projectId, created.id);
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: OpenRequestBody,
        ...describe({
          summary: "Open a change request",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "People, API tokens and admin keys may open one. Each change is checked now as its module would check it and stored with the fingerprint of what is published for its target; " +
            "approvalsRequired comes from the policy of the envs it touches (1 when none requires approval). Announced to connectors as request.opened. " +
            "The answer is GET of the new request's: each change with `proposed` and `current` (what is published now).",
          response: { 201: ChangeRequestSchema },
        }),
      },
    )
    .post("/:id/approve", async ({ principal, params }) => await requests.approve(principal.projectId, params.id, principal), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Approve a change request (people only, not its author)",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "FORBIDDEN for an API token or admin key, for the author, and for a role that cannot write. It becomes approved once approvalsRequired people did (request.approved).",
        response: { 200: ChangeRequestSchema },
      }),
    })
    .post("/:id/reject", async ({ principal, params, body }) => await requests.reject(principal.projectId, params.id, principal, body?.note), {
      admin: true,
      params: IdParam,
      body: t.Optional(RejectBody),
      ...describe({ summary: "Reject a change request (people only)", tag: TAG, auth: "admin", errors: [404], response: { 200: ChangeRequestSchema } }),
    })
    .post("/:id/withdraw", async ({ principal, params }) => await requests.withdraw(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Withdraw your own change request", tag: TAG, auth: "admin", errors: [404], response: { 200: ChangeRequestSchema } }),
    })
    .post("/:id/rebase", async ({ principal, params }) => await requests.rebase(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Rebase your stale change request onto what is published now",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "Only a stale request, by its author. Its changes stay as they were; each is checked again against what is published now and takes its fingerprint. The approvals given before no longer count: it is open again and is approved anew. Audited as request.rebase, announced as request.rebased.",
        response: { 200: ChangeRequestSchema },
      }),
    })
    .post("/:id/apply", async ({ principal, params }) => await requests.apply(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Apply an approved change request",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Publishes exactly the stored changes, in order, in one transaction with its request.apply audit row. When what a change targets moved since the request was opened, the request becomes stale and the answer is 409 CONFLICT naming it.",
        response: { 200: ChangeRequestSchema },
      }),
    });
}
