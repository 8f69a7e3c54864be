import { t } from "elysia";
import { BodyObject, Integer, QueryObject, groupDigits } from "../../lib/http";
import { TEXT_MAX, TITLE_MAX } from "./service";

// The literals one by one, so that typed clients see the unions.
const ItemType = t.Union([t.Literal("bug"), t.Literal("feature_request"), t.Literal("error"), t.Literal("alert")], {
  description: "bug and feature_request are filed by people and the public intake; error (a tracked error new or regressed) and alert (an alert rule firing) by svc itself",
});
const FiledType = t.Union([t.Literal("bug"), t.Literal("feature_request")], {
  description: "bug or feature_request; error and alert items are filed by the platform and refused here (VALIDATION naming type)",
});
const Status = t.Union([t.Literal("pending_approval"), t.Literal("open"), t.Literal("in_progress"), t.Literal("done"), t.Literal("rejected")], {
  description:
    "pending_approval (public intake) → open (approved) or rejected; open → in_progress, done or rejected; in_progress → open or done; done → open (reopen); rejected is final",
});
const Priority = t.Union([t.Literal("high"), t.Literal("medium"), t.Literal("low"), t.Literal("nice_to_have")], {
  description: "Highest first: high, medium (the default), low, nice_to_have",
});
const Source = t.Union([t.Literal("admin"), t.Literal("intake"), t.Literal("platform")], {
  description: "Who filed it: admin (API, dashboard, CLI), intake (POST /ops/… with a client key), platform (svc, for a tracked error or a firing alert)",
});

const Title = t.String({ minLength: 1, maxLength: TITLE_MAX, description: `1 to ${TITLE_MAX} characters on one line (trimmed)` });
const Text = (what: string) =>
  t.Union([t.String({ maxLength: TEXT_MAX }), t.Null()], { description: `${what}: at most ${groupDigits(TEXT_MAX)} characters, line breaks allowed; null or blank clears it` });

const EXAMPLE_ITEM = {
  id: "fb_7Hq2LmX9pKr4TzV1bN8c",
  number: 42,
  type: "bug",
  status: "open",
  priority: "high",
  title: "Checkout button does nothing on Safari",
  stepsToReproduce: "1. Add any item to the cart\n2. Open the cart in Safari 18\n3. Press Checkout",
  actualResult: "Nothing happens; the console shows a TypeError",
  expectedResult: "The payment page opens",
  useCase: null,
  source: "intake",
  sourceRef: null,
  reportedBy: "client-key:key_3Fz8Qp2LmT0aZr7KpE1x@keys.local",
  timesFiled: 1,
  createdAt: "2026-11-20T09:12:44.120Z",
  updatedAt: "2026-11-20T10:01:02.114Z",
  statusChangedAt: "2026-11-20T10:01:02.114Z",
  statusChangedBy: "owner@example.com",
};

export const QueueItemSchema = t.Object(
  {
    id: t.String({ description: "fb_…" }),
    number: Integer({ description: "Per project, from 1, without gaps; usable in place of the id in paths" }),
    type: ItemType,
    status: Status,
    priority: Priority,
    title: t.String(),
    stepsToReproduce: t.Union([t.String(), t.Null()]),
    actualResult: t.Union([t.String(), t.Null()]),
    expectedResult: t.Union([t.String(), t.Null()]),
    useCase: t.Union([t.String(), t.Null()], { description: "Why the feature is wanted (feature requests from the public intake)" }),
    source: Source,
    sourceRef: t.Union([t.String(), t.Null()], { description: "Platform items: the tracked error (err_…) or alert rule (ar_…) it is about" }),
    reportedBy: t.String({ description: "Who filed it: a person's email, `client-key:<key id>@keys.local` for the intake, system@svc.local for the platform" }),
    timesFiled: Integer({ description: "1, plus one per regression of its error or new firing of its alert" }),
    createdAt: t.String(),
    updatedAt: t.String(),
    statusChangedAt: t.String(),
    statusChangedBy: t.String(),
  },
  { title: "QueueItem", examples: [EXAMPLE_ITEM] },
);

export const CreatedItemSchema = t.Object(
  { id: t.String({ description: "fb_…" }), number: Integer({ description: "The project's next number" }) },
  { examples: [{ id: "fb_7Hq2LmX9pKr4TzV1bN8c", number: 42 }] },
);

export const DedupedSchema = t.Object(
  { number: Integer({ description: "The open public item (filed through the intake) this title repeats" }), deduped: t.Literal(true) },
  { examples: [{ number: 42, deduped: true }] },
);

export const CreateItemBody = BodyObject(
  {
    type: FiledType,
    title: Title,
    stepsToReproduce: t.Optional(Text("How to make it happen")),
    actualResult: t.Optional(Text("What happens")),
    expectedResult: t.Optional(Text("What should happen")),
    priority: t.Optional(Priority),
  },
  {
    examples: [
      {
        type: "bug",
        title: "Checkout button does nothing on Safari",
        stepsToReproduce: "1. Add any item to the cart\n2. Open the cart in Safari 18\n3. Press Checkout",
        actualResult: "Nothing happens",
        expectedResult: "The payment page opens",
        priority: "high",
      },
      { type: "feature_request", title: "Export the audit trail as CSV", priority: "nice_to_have" },
    ],
  },
);

export const UpdateItemBody = BodyObject(
  {
    title: t.Optional(Title),
    priority: t.Optional(Priority),
    status: t.Optional(Status),
    stepsToReproduce: t.Optional(Text("How to make it happen")),
    actualResult: t.Optional(Text("What happens")),
    expectedResult: t.Optional(Text("What should happen")),
    useCase: t.Optional(Text("Why the feature is wanted")),
  },
  { examples: [{ status: "in_progress" }, { priority: "high", title: "Checkout fails on Safari 18" }, { status: "done" }] },
);

export const ItemListQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over the title and the text fields (OR-matched)" })),
  type: t.Optional(ItemType),
  status: t.Optional(Status),
});

export const FeatureRequestBody = BodyObject(
  {
    title: Title,
    useCase: t.Optional(t.Union([t.String({ maxLength: TEXT_MAX }), t.Null()], { description: `Why you want it, at most ${groupDigits(TEXT_MAX)} characters` })),
  },
  { examples: [{ title: "Dark mode", useCase: "I read in the evening and the white page hurts" }] },
);

export const BugBody = BodyObject(
  {
    title: Title,
    stepsToReproduce: t.Optional(Text("How to make it happen")),
    actualResult: t.Optional(Text("What happens")),
    expectedResult: t.Optional(Text("What should happen")),
  },
  {
    examples: [
      {
        title: "Checkout button does nothing on Safari",
        stepsToReproduce: "1. Add any item to the cart\n2. Press Checkout",
        actualResult: "Nothing happens",
        expectedResult: "The payment page opens",
      },
    ],
  },
);

/**
 * What `bug.created`, `feature_request.created` and `ticket.approved` carry
 * in the outbox (and so in every connector delivery): the item, and for an
 * approval who approved it.
 */
export const OpsEventPayloadSchema = t.Object(
  {
    source: t.Union([t.Literal("public"), t.Literal("admin"), t.Literal("platform")], {
      description: "public: filed through the public intake by an anonymous person (sent only once approved; treat its text as untrusted); admin: filed by a member; platform: filed by svc",
    }),
    item: t.Object({
      id: t.String(),
      number: Integer(),
      type: t.Union([t.Literal("bug"), t.Literal("feature_request")]),
      status: Status,
      priority: Priority,
      title: t.String(),
      stepsToReproduce: t.Union([t.String(), t.Null()]),
      actualResult: t.Union([t.String(), t.Null()]),
      expectedResult: t.Union([t.String(), t.Null()]),
      useCase: t.Union([t.String(), t.Null()]),
      source: Source,
      reportedBy: t.String(),
      createdAt: t.String(),
    }),
    approvedBy: t.Optional(t.String({ description: "ticket.approved only: the person (or credential) who approved it" })),
  },
  {
    title: "OpsEventPayload",
    examples: [
      {
        source: "public",
        item: {
          id: "fb_7Hq2LmX9pKr4TzV1bN8c",
          number: 42,
          type: "feature_request",
          status: "open",
          priority: "medium",
          title: "Dark mode",
          stepsToReproduce: null,
          actualResult: null,
          expectedResult: null,
          useCase: "I read in the evening",
          source: "intake",
          reportedBy: "client-key:key_3Fz8Qp2LmT0aZr7KpE1x@keys.local",
          createdAt: "2026-11-20T09:12:44.120Z",
        },
        approvedBy: "owner@example.com",
      },
    ],
  },
);
