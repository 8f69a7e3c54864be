import { t } from "elysia";
import { BodyObject, Integer, groupDigits } from "../../lib/http";
import { SEGMENTS } from "../../sdk/universes";
import { NAME_MAX } from "./service";

// The literals one by one, so that typed clients see the union.
const UnitType = t.Union([t.Literal("user_id"), t.Literal("account_id")], {
  description: "What identifies a unit: `user_id` (default) or `account_id` (account-level experiments). Fixed once the universe exists.",
});

const HOLDOUT_DESCRIPTION =
  `A universe splits its units into ${groupDigits(SEGMENTS)} segments (0 to ${SEGMENTS - 1}) by a salted hash of the unit id. ` +
  `\`holdout_range\` is \`[start, end)\` in those segments: two integers with 0 ≤ start < end ≤ ${SEGMENTS}; the units of segments start to end − 1 are given to no experiment. ` +
  "`[0, 500]` holds out segments 0–499, 5 % of units. `null` (the default) means no holdout. Setting one needs plan pro or above (`pro`, `business`, `enterprise`): 403 otherwise.";

// The schema takes any array of numbers: the service checks the rest (two integers, 0 <= start < end <= 10000) and says
// which rule failed, where a schema union could only answer "must be array or null".
const Range = t.Array(t.Number(), { description: `[start, end) in segments: two integers, 0 ≤ start < end ≤ ${SEGMENTS}`, examples: [[0, 500]] });
const HoldoutRange = t.Union([Range, t.Null()], { description: HOLDOUT_DESCRIPTION, examples: [[0, 500], null] });

const Name = t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; usable in place of the id" });

export const UniverseSchema = t.Object(
  {
    id: t.String({ description: "uni_…" }),
    name: t.String(),
    unit_type: UnitType,
    holdout_range: t.Union([t.Array(Integer(), { minItems: 2, maxItems: 2 }), t.Null()], { description: "[start, end) in segments 0..10,000, or null: no holdout" }),
    salt: t.String({ description: "Hashed with each unit id to give its segment (src/sdk/universes.ts `segmentOf`); fixed for the universe's life" }),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "Universe",
    examples: [
      { id: "uni_8fK2mQ…", name: "web-users", unit_type: "user_id", holdout_range: [0, 500], salt: "Qx3b9LmT0aZr7KpE", createdAt: "2026-11-20T09:00:00.000Z", updatedAt: "2026-11-21T14:30:00.000Z" },
    ],
  },
);

export const CreatedUniverseSchema = t.Object({ id: t.String({ description: "uni_…" }), name: t.String() }, { examples: [{ id: "uni_8fK2mQ…", name: "web-users" }] });

export const CreateUniverseBody = BodyObject(
  {
    name: Name,
    unit_type: t.Optional(UnitType),
    holdout_range: t.Optional(HoldoutRange),
  },
  {
    examples: [{ name: "web-users" }, { name: "accounts", unit_type: "account_id", holdout_range: [0, 500] }],
  },
);

export const UpdateUniverseBody = BodyObject(
  {
    name: t.Optional(Name),
    unit_type: t.Optional(t.Union([t.Literal("user_id"), t.Literal("account_id")], { description: "Only the current value is accepted: the unit type cannot change (VALIDATION)" })),
    holdout_range: t.Optional(HoldoutRange),
  },
  { examples: [{ holdout_range: [9500, 10000] }, { holdout_range: null }, { name: "web-visitors" }] },
);
