import { t } from "elysia";
import { QueryObject } from "../../lib/http";
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from "./service";

// `limit` and `before` are taken as text and checked by the service, so that a VALIDATION detail names them.
export const AuditQuerySchema = QueryObject({
  limit: t.Optional(t.String({ description: `Integer, 1 to ${AUDIT_MAX_LIMIT}; default ${AUDIT_DEFAULT_LIMIT}` })),
  before: t.Optional(t.String({ description: "Rows older than this seq: the `nextBefore` of the previous page" })),
  action: t.Optional(t.String({ maxLength: 100, description: "One action (`killswitch.toggle`) or a prefix ending in '.' (`config.`)" })),
  q: t.Optional(t.String({ maxLength: 200, description: "Substring of the subject's name or the actor's email, ignoring the case of ASCII letters" })),
});

export const AuditEntrySchema = t.Object(
  {
    seq: t.Integer({ description: "Order of the row; increases with every write" }),
    action: t.String({ description: "`module.verb`: killswitch.toggle, config.publish, key.revoke, member.role, …" }),
    subjectId: t.Union([t.String(), t.Null()]),
    subjectName: t.Union([t.String(), t.Null()]),
    env: t.Union([t.String(), t.Null()]),
    actorEmail: t.String(),
    actorType: t.String({ description: "user, key, token or system" }),
    detail: t.Unknown({ description: "Small facts of the change (never secrets)" }),
    createdAt: t.String(),
  },
  { title: "AuditEntry" },
);

export const AuditPageSchema = t.Object(
  {
    entries: t.Array(AuditEntrySchema),
    nextBefore: t.Union([t.Integer(), t.Null()], { description: "Pass as `before` for the next (older) page; null on the last page" }),
  },
  {
    examples: [
      {
        entries: [
          {
            seq: 42,
            action: "killswitch.toggle",
            subjectId: "ksw_8f2…",
            subjectName: "checkout",
            env: "prod",
            actorEmail: "ana@example.com",
            actorType: "user",
            detail: { version: 7, value: true },
            createdAt: "2026-11-23T10:15:02.114Z",
          },
        ],
        nextBefore: null,
      },
    ],
  },
);
