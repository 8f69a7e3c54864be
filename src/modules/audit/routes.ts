import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { describe, numberParam } from "../../lib/http";
import { AuditPageSchema, AuditQuerySchema } from "./contract";

export function auditRoutes(ctx: AppContext) {
  const { audit } = ctx.services;
  return new Elysia({ name: "audit", seed: ctx, prefix: "/api/admin/audit" }).use(ctx.auth).get(
    "",
    async ({ principal, query }) =>
      await audit.list(principal.projectId, {
        limit: numberParam(query.limit),
        before: numberParam(query.before),
        action: query.action || undefined,
        q: query.q || undefined,
        // Empty is no filter, as for `q` and `action` (what a form with blank fields sends).
        actor: query.actor || undefined,
        resource: query.resource || undefined,
        since: query.since || undefined,
        until: query.until || undefined,
      }),
    {
      admin: true,
      query: AuditQuerySchema,
      ...describe({
        summary: "The project's audit trail, newest first",
        tag: "Audit",
        auth: "admin",
        description: [
          "Every write of every module leaves one row, in the same transaction as the change: who (person, key or token), what, on which subject and env, when. A refused write leaves none.",
          "The project's rows come with its organisation's rows that belong to no project (`projectId: null`): members invited, joined (with the sign-in that accepted the invitation), re-roled or removed, invitations withdrawn, the setup sign-in, and CLI sign-ins approved, minted and revoked for a project of this organisation. Only what happened in this organisation: a member's CLI sign-ins for another organisation's project are that organisation's rows, and a plain browser sign-in or sign-out (magic link, single sign-on) opens no organisation in particular and is in no organisation's trail. Failed sign-ins are not recorded (the rate limiter and the server log see them).",
          "Filters combine (AND): `action`, `q`, `actor`, `resource`, `since`/`until`. Page with `before`.",
        ].join("\n\n"),
        response: { 200: AuditPageSchema },
      }),
    },
  );
}
