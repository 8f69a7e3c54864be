import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { describe, numberParam } from "../../lib/http";
import { AuditPageSchema, AuditQuerySchema } from "./contract";

export function auditRoutes(ctx: AppContext) {
  const { audit } = ctx.services;
  return new Elysia({ name: "audit", seed: ctx, prefix: "/api/admin/audit" }).use(ctx.auth).get(
    "",
    async ({ principal, query }) =>
      await audit.list(principal.projectId, { limit: numberParam(query.limit), before: numberParam(query.before), action: query.action || undefined, q: query.q || undefined }),
    {
      admin: true,
      query: AuditQuerySchema,
      ...describe({
        summary: "The project's audit trail, newest first",
        tag: "Audit",
        auth: "admin",
        description: "Every write of every module leaves one row, in the same transaction as the change: who (person, key or token), what, on which subject and env, when. Page with `before`.",
        response: { 200: AuditPageSchema },
      }),
    },
  );
}
