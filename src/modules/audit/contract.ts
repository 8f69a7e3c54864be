import { t } from "elysia";
import { Integer, QueryObject } from "../../lib/http";
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from "./service";

// `limit` and `before` are taken as text and checked by the service, so that a VALIDATION detail names them.
export const AuditQuerySchema = QueryObject({
  limit: t.Optional(t.String({ description: `Integer, 1 to ${AUDIT_MAX_LIMIT}; default ${AUDIT_DEFAULT_LIMIT}` })),
  before: t.Optional(t.String({ description: "Rows older than this seq: the `nextBefore` of the previous page" })),
  action: t.Optional(t.String({ maxLength: 100, description: "One action (`killswitch.toggle`) or a prefix ending in '.' (`config.`)" })),
  q: t.Optional(t.String({ maxLength: 200, description: "Substring of the subject's name or the actor's email, ignoring the case of ASCII letters" })),
  actor: t.Optional(
    t.String({ maxLength: 320, description: "Only rows of this actor: the whole email (a person's, or `admin-key:…@keys.local`, `api-token:…@tokens.local`), ignoring the case of ASCII letters", examples: ["ana@example.com"] }),
  ),
  resource: t.Optional(
    t.String({
      maxLength: 128,
      description:
        "A resource type, the action's part before its first dot (`killswitch`, `config`, `key`, `token`, `member`, `session`, `device`, `project`, `alert_rule`, …), or one subject's id (`ksw_…`, `key_…`, a project's UUID): a value shaped like an id is taken as one",
      examples: ["killswitch", "ksw_4mZpQ7rT2xVb9LcN0aEd"],
    }),
  ),
  since: t.Optional(t.String({ maxLength: 64, description: "Rows at or after this ISO 8601 time (`2026-11-23T10:00:00Z`, an offset like `+01:00`, or a date: midnight UTC)", examples: ["2026-11-23T10:00:00Z"] })),
  until: t.Optional(t.String({ maxLength: 64, description: "Rows before this ISO 8601 time (exclusive); not before `since`", examples: ["2026-11-24"] })),
});

export const AuditEntrySchema = t.Object(
  {
    seq: Integer({ description: "Order of the row; increases with every write" }),
    projectId: t.Union([t.String(), t.Null()], { description: "The project of the change; null for a row of the organisation (members, sign-ins), shown in each of its projects" }),
    action: t.String({ description: "`module.verb`: killswitch.toggle, config.publish, key.revoke, member.role, session.signin, …" }),
    resource: t.String({ description: "The action's part before its first dot: what `resource=` filters on" }),
    subjectId: t.Union([t.String(), t.Null()]),
    subjectName: t.Union([t.String(), t.Null()]),
    env: t.Union([t.String(), t.Null()]),
    actorEmail: t.String({ description: "A person's email, or the credential that acted: `admin-key:<key id>@keys.local`, `api-token:<token id>@tokens.local`, system@svc.local" }),
    actorName: t.Union([t.String(), t.Null()], { description: "The name of the key or token that acted (what the dashboard shows); null for a person, the system or an unnamed key" }),
    actorType: t.String({ description: "user, key, token or system" }),
    detail: t.Unknown({ description: "Small facts of the change (never secrets)" }),
    createdAt: t.String(),
  },
  { title: "AuditEntry" },
);

export const AuditPageSchema = t.Object(
  {
    entries: t.Array(AuditEntrySchema),
    nextBefore: t.Union([Integer(), t.Null()], { description: "Pass as `before` for the next (older) page; null on the last page" }),
  },
  {
    examples: [
      {
        entries: [
          {
            seq: 42,
            projectId: "0f9c2a4e-5b7d-4c1e-9a3f-2d8e6b1c7a50",
            action: "killswitch.toggle",
            resource: "killswitch",
            subjectId: "ksw_4mZpQ7rT2xVb9LcN0aEd",
            subjectName: "checkout",
            env: "prod",
            actorEmail: "ana@example.com",
            actorName: null,
            actorType: "user",
            detail: { version: 7, value: true },
            createdAt: "2026-11-23T10:15:02.114Z",
          },
          {
            seq: 41,
            projectId: null,
            action: "session.signin",
            resource: "session",
            subjectId: "usr_Q2w9Er7tY1uI3oP5aS8d",
            subjectName: "ana@example.com",
            env: null,
            actorEmail: "ana@example.com",
            actorName: null,
            actorType: "user",
            detail: { method: "magic-link" },
            createdAt: "2026-11-23T10:14:40.902Z",
          },
        ],
        nextBefore: 41,
      },
    ],
  },
);
