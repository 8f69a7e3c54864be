import { t } from "elysia";
import { BodyObject } from "../../lib/http";
// The literals one by one (not mapped from ATTRIBUTE_TYPES), so that typed clients see the union.
const Type = t.Union([t.Literal("string"), t.Literal("number"), t.Literal("boolean"), t.Literal("enum"), t.Literal("semver"), t.Literal("date")], {
  description: "string, number, boolean, enum (with enumValues), semver or date",
});
const EnumValues = t.Union([t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 }), t.Null()]);

export const AttributeSchema = t.Object(
  {
    id: t.String({ description: "attr_…" }),
    name: t.String(),
    type: t.String({ description: "`enum` and `string` are values seen; auto attributes get the type of the first value seen" }),
    enumValues: t.Union([t.Array(t.String()), t.Null()]),
    required: t.Union([t.Literal(0), t.Literal(1)]),
    description: t.Union([t.String(), t.Null()]),
    sdkPath: t.Union([t.String(), t.Null()], { description: "Where the SDK reads it from, e.g. user.email" }),
    createdAt: t.String(),
    lastSeenAt: t.Union([t.String(), t.Null()], { description: "Last time an evaluation context carried it (kept within about 10 s)" }),
    source: t.Union([t.Literal("manual"), t.Literal("auto")]),
    deprecated: t.Union([t.Literal(0), t.Literal(1)]),
  },
  {
    title: "Attribute",
    examples: [
      { id: "attr_3kq…", name: "country", type: "enum", enumValues: ["de", "fr", "us"], required: 0, description: "ISO country of the account", sdkPath: "account.country", createdAt: "2026-11-20T09:00:00.000Z", lastSeenAt: "2026-11-23T10:15:02.114Z", source: "manual", deprecated: 0 },
    ],
  },
);

export const CreateAttributeBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: 128 }),
    type: Type,
    enumValues: t.Optional(EnumValues),
    required: t.Optional(t.Boolean()),
    description: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
    sdkPath: t.Optional(t.Union([t.String({ maxLength: 256 }), t.Null()])),
  },
  { examples: [{ name: "plan", type: "enum", enumValues: ["free", "pro", "enterprise"], description: "Billing plan of the account" }] },
);

export const UpdateAttributeBody = BodyObject(
  {
    type: t.Optional(Type),
    enumValues: t.Optional(EnumValues),
    required: t.Optional(t.Boolean()),
    description: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
    sdkPath: t.Optional(t.Union([t.String({ maxLength: 256 }), t.Null()])),
    deprecated: t.Optional(t.Boolean({ description: "true deprecates: gate rules naming it then come back with a warning" })),
  },
  { examples: [{ deprecated: true }, { description: "Country of the billing address" }] },
);
