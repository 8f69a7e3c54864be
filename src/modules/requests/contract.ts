import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { ChangeSchema } from "../schedules/contract";
import { APPROVALS_MAX, CHANGES_MAX, STATES } from "./types";

const State = t.Union(
  [t.Literal("open"), t.Literal("approved"), t.Literal("applied"), t.Literal("rejected"), t.Literal("withdrawn"), t.Literal("stale")],
  { description: "open → approved → applied | rejected | withdrawn | stale (what it changes moved since it was opened; open it again)" },
);

const EXAMPLE_CHANGE = { kind: "config.publish", name: "checkout-limits", env: "prod", value: { maxItems: 50 } };

export const OpenRequestBody = BodyObject(
  {
    title: t.String({ minLength: 1, maxLength: 200, description: "What it does, in a line" }),
    reason: t.Optional(t.String({ maxLength: 2000, description: "Why" })),
    changes: t.Array(ChangeSchema, { minItems: 1, maxItems: CHANGES_MAX, description: "The changes, applied in this order, each checked now exactly as its module would check it" }),
  },
  { examples: [{ title: "Raise checkout limits", reason: "Black Friday traffic", changes: [EXAMPLE_CHANGE] }] },
);

export const ChangeKindSchema = t.Object(
  {
    kind: t.String({ description: "`<resource>.<what>`, the `kind` of a change" }),
    target: t.String({ description: "What it changes: gate, config, killswitch, segment, …" }),
    description: t.String({ description: "What it does, in a line" }),
    fields: t.Array(t.String(), { description: "The change's fields besides `kind`" }),
    required: t.Array(t.String(), { description: "Those it must have" }),
    diff: t.Boolean({ description: "GET of one request shows what is published now beside it (`current`)" }),
  },
  {
    title: "ChangeKind",
    examples: [{ kind: "gate.rules", target: "gate", description: "A gate's whole rule list on one env (who gets the feature)", fields: ["name", "env", "rules"], required: ["name", "env", "rules"], diff: true }],
  },
);

export const RejectBody = BodyObject({ note: t.Optional(t.String({ maxLength: 2000, description: "Why it was rejected" })) }, { examples: [{ note: "Wait until Monday" }] });

export const RequestListQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over the id, title, reason and author" })),
  state: t.Optional(t.String({ description: `One of ${STATES.join(", ")}` })),
});

const EnvPolicySchema = BodyObject({
  required: t.Boolean({ description: "Publishes on this env need an approved change request" }),
  approvals: t.Optional(Integer({ minimum: 1, maximum: APPROVALS_MAX, description: "How many people other than the author must approve (default 1)" })),
});

export const PolicyBody = BodyObject(
  {
    envs: t.Optional(BodyObject({ dev: t.Optional(EnvPolicySchema), staging: t.Optional(EnvPolicySchema), prod: t.Optional(EnvPolicySchema) }, { description: "Replaces the per-env settings; an env left out requires nothing" })),
    killswitchBypass: t.Optional(t.Boolean({ description: "A killswitch toggle with a `reason` may bypass approval (recorded as request.bypass)" })),
  },
  { examples: [{ envs: { prod: { required: true, approvals: 1 } }, killswitchBypass: true }] },
);

export const PolicySchema = t.Object(
  {
    envs: t.Record(t.String(), t.Object({ required: t.Boolean(), approvals: t.Number() })),
    killswitchBypass: t.Boolean(),
  },
  { title: "ApprovalPolicy", examples: [{ envs: { prod: { required: true, approvals: 1 } }, killswitchBypass: true }] },
);

export const ChangeRequestSchema = t.Object(
  {
    id: t.String({ description: "cr_…" }),
    title: t.String(),
    reason: t.Union([t.String(), t.Null()]),
    state: State,
    author: t.String(),
    approvalsRequired: t.Number(),
    approvals: t.Array(t.Object({ by: t.String(), at: t.String() })),
    decidedBy: t.Union([t.String(), t.Null()], { description: "Who rejected, withdrew or applied it" }),
    note: t.Union([t.String(), t.Null()], { description: "A rejection's note, or what moved (stale)" }),
    heldBy: t.Union([t.String(), t.Null()], {
      description: "The schedule (sch_…) holding this approved request: it publishes it at its step's time (then applied); not applied, withdrawn or rejected by hand meanwhile; cancelling the schedule releases it",
    }),
    createdAt: t.String(),
    updatedAt: t.String(),
    changes: t.Array(
      t.Object({
        position: t.Number(),
        change: t.Record(t.String(), t.Unknown(), { description: "The change as proposed ({kind, ...fields})" }),
        kind: t.String(),
        target: t.Object({ type: t.String(), name: t.String() }),
        env: t.Union([t.String(), t.Null()]),
        summary: t.String(),
        fingerprint: t.String({ description: "What was published for its target when opened (`version 7`): apply refuses when it moved" }),
        current: t.Optional(
          t.Unknown({
            description:
              "GET of one request only, while it is open, approved or stale: what is published now for the change's target, read at this call, in the shape of `proposed` " +
              "(gate.rules: the env's rules array; config.publish: {value, rules}; config.schema: the schema; killswitch.set: {value} or {switchKey, value}, null when the sub-switch is not set; " +
              "segment.update: each field the patch sets, the ids as the resulting list, or as {count} beside {count, added, removed} (100 of each at most) when a list is over 100 ids). Absent with `currentNote`.",
          }),
        ),
        proposed: t.Optional(t.Unknown({ description: "GET of one request only: the change's payload in the shape of `current`, for a side-by-side diff" })),
        currentNote: t.Optional(t.String({ description: "Why `current` is absent: the kind shows no diff, the request is applied (what it replaced is in its request.apply audit row), rejected or withdrawn, or its target is gone" })),
      }),
    ),
  },
  {
    title: "ChangeRequest",
    examples: [
      {
        id: "cr_8Hq2Lm4TzX1cNp8aB3kQ",
        title: "Raise checkout limits",
        reason: "Black Friday traffic",
        state: "approved",
        author: "ana@example.com",
        approvalsRequired: 1,
        approvals: [{ by: "ben@example.com", at: "2026-11-28T20:10:00.000Z" }],
        decidedBy: null,
        note: null,
        heldBy: null,
        createdAt: "2026-11-28T20:00:00.000Z",
        updatedAt: "2026-11-28T20:10:00.000Z",
        changes: [
          {
            position: 1,
            change: EXAMPLE_CHANGE,
            kind: "config.publish",
            target: { type: "config", name: "checkout-limits" },
            env: "prod",
            summary: "checkout-limits on prod = {\"maxItems\":50}",
            fingerprint: "version 7",
            current: { value: { maxItems: 20 }, rules: [] },
            proposed: { value: { maxItems: 50 }, rules: [] },
          },
        ],
      },
    ],
  },
);
