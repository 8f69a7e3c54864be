import { t } from "elysia";
import { BodyObject } from "../../lib/http";
import { ConditionSchema } from "../gates/contract";
import { CONDITIONS_MAX } from "../gates/types";
import { DESCRIPTION_MAX, IDS_MAX, ID_CHARS_MAX, NAME_MAX } from "./service";

const Name = t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; the value of in_segment / not_in_segment conditions; not starting with seg_, no '/'" });
const Description = t.String({ maxLength: DESCRIPTION_MAX, description: "What the segment is for" });
const Conditions = t.Array(ConditionSchema, {
  maxItems: CONDITIONS_MAX,
  description: "Gate conditions that all hold for a unit in the segment (empty: none; the id list alone decides). passes_gate, fails_gate, in_segment and not_in_segment are refused here.",
});
const Attribute = t.String({ description: "The context attribute matched against `ids` (default user_id)" });
const Ids = t.Array(t.String({ minLength: 1, maxLength: ID_CHARS_MAX }), {
  maxItems: IDS_MAX,
  description: `Unit ids (text, at most ${ID_CHARS_MAX} characters each, at most ${IDS_MAX}; duplicates are dropped). A unit whose attribute is listed is in the segment. The whole body must fit the server's body limit (1 MiB: 100,000 ids of up to 7 characters; longer ids fit fewer, about 27,000 UUIDs).`,
});

const EXAMPLE = {
  id: "seg_5tQk2Vb9LmR7",
  name: "beta-testers",
  description: "Customers who signed up for the beta programme",
  attribute: "user_id",
  conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }],
  idCount: 3,
  createdAt: "2026-11-28T09:00:00.000Z",
  updatedAt: "2026-11-28T09:30:00.000Z",
};

const summaryFields = {
  id: t.String({ description: "seg_…" }),
  name: t.String(),
  description: t.String(),
  attribute: t.String({ description: "The context attribute matched against the ids" }),
  conditions: t.Array(ConditionSchema),
  idCount: t.Number({ description: "How many ids the list holds" }),
  createdAt: t.String(),
  updatedAt: t.String(),
};

export const SegmentSummarySchema = t.Object(summaryFields, { title: "SegmentSummary", examples: [EXAMPLE] });
export const SegmentSchema = t.Object({ ...summaryFields, ids: t.Array(t.String()) }, { title: "Segment", examples: [{ ...EXAMPLE, ids: ["u-1001", "u-1002", "u-1003"] }] });

export const CreatedSegmentSchema = t.Object({ id: t.String({ description: "seg_…" }), name: t.String() }, { examples: [{ id: "seg_5tQk2Vb9LmR7", name: "beta-testers" }] });

export const CreateSegmentBody = BodyObject(
  { name: Name, description: t.Optional(Description), conditions: t.Optional(Conditions), attribute: t.Optional(Attribute), ids: t.Optional(Ids) },
  {
    examples: [
      { name: "beta-testers", description: "Customers in the beta programme", attribute: "user_id", ids: ["u-1001", "u-1002", "u-1003"] },
      { name: "staff", conditions: [{ attr: "email", op: "ends_with", value: "@acme.com" }] },
    ],
  },
);

// A list that big is sent in parts (the body limit is 1 MiB): the first request creates or empties it, the next ones add.
const AddIds = t.Array(t.String({ minLength: 1, maxLength: ID_CHARS_MAX }), {
  maxItems: IDS_MAX,
  description: `Unit ids to add to the list (checked as \`ids\`; ids already listed are kept where they are). Not with \`ids\`. The list must still hold at most ${IDS_MAX} ids after the change. Lets a client import a list larger than one body in several requests.`,
});
const RemoveIds = t.Array(t.String({ minLength: 1, maxLength: ID_CHARS_MAX }), {
  maxItems: IDS_MAX,
  description: "Unit ids to take out of the list (ids not listed are ignored); applied before `addIds`. Not with `ids`.",
});

export const UpdateSegmentBody = BodyObject(
  {
    name: t.Optional(Name),
    description: t.Optional(Description),
    conditions: t.Optional(Conditions),
    attribute: t.Optional(Attribute),
    ids: t.Optional(Ids),
    addIds: t.Optional(AddIds),
    removeIds: t.Optional(RemoveIds),
  },
  {
    examples: [
      { ids: ["u-1001", "u-1002", "u-1004"] },
      { description: "Beta programme, second wave" },
      { addIds: ["u-2001", "u-2002", "u-2003"] },
      { removeIds: ["u-1002"], addIds: ["u-2004"] },
    ],
  },
);

/** The `segment.update` change (src/lib/changes.ts: scheduled changes, change requests): this patch to a segment (every env that names it). */
export const SegmentUpdateChange = BodyObject(
  { name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "The segment's name (or id)" }), patch: UpdateSegmentBody },
  { examples: [{ name: "beta-testers", patch: { ids: ["u-1001", "u-1002", "u-1004"] } }] },
);
