import { t } from "elysia";
import { BodyObject, Integer } from "../../lib/http";
import { DESCRIPTION_MAX, FILTERS_MAX, FILTER_TEXT_MAX, NAME_MAX } from "./compile";

// The literals one by one, so that typed clients see the unions.
const Kind = t.Union([t.Literal("count"), t.Literal("sum"), t.Literal("unique"), t.Literal("ratio")], {
  description: "count: events; sum: a numeric property (absent: the event's value); unique: distinct units; ratio: numerator / denominator",
});
const PartKind = t.Union([t.Literal("count"), t.Literal("sum"), t.Literal("unique")], { description: "count, sum or unique (ratios do not nest)" });
const Op = t.Union([t.Literal("eq"), t.Literal("neq"), t.Literal("gt"), t.Literal("gte"), t.Literal("lt"), t.Literal("lte")], {
  description: "gt, gte, lt and lte compare numbers",
});

const EventName = t.String({ minLength: 1, maxLength: 128, description: "A catalogued event (POST /api/admin/events)" });
const PropertyName = t.String({ minLength: 1, maxLength: 128, description: "One of the catalogued event's properties" });

export const FilterSchema = BodyObject(
  {
    property: PropertyName,
    op: Op,
    value: t.Union([t.String({ maxLength: FILTER_TEXT_MAX }), t.Number(), t.Boolean()]),
  },
  { description: "Only events whose property compares so with the value (bound as a parameter, never spliced into SQL)" },
);
const Filters = t.Array(FilterSchema, { maxItems: FILTERS_MAX, description: "All must hold" });

const PartSchema = BodyObject(
  {
    kind: PartKind,
    event: EventName,
    property: t.Optional(t.Union([PropertyName, t.Null()], { description: "sum only: the numeric property added up (absent: the event's value)" })),
    filters: t.Optional(t.Union([Filters, t.Null()])),
  },
  { description: "What a ratio's numerator or denominator measures" },
);

const Description = t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()]);

const DefinitionFields = {
  event: t.Optional(t.Union([EventName, t.Null()], { description: "count, sum, unique: the catalogued event measured" })),
  property: t.Optional(t.Union([PropertyName, t.Null()], { description: "sum only: the numeric property added up (absent: the event's value)" })),
  filters: t.Optional(t.Union([Filters, t.Null()])),
  numerator: t.Optional(t.Union([PartSchema, t.Null()], { description: "ratio only" })),
  denominator: t.Optional(t.Union([PartSchema, t.Null()], { description: "ratio only; a bucket where it is 0 gives 0" })),
};

const EXAMPLES = [
  { name: "checkouts", description: "Completed checkouts", kind: "count", event: "checkout.completed" },
  { name: "revenue-de", kind: "sum", event: "checkout.completed", property: "amount", filters: [{ property: "country", op: "eq", value: "de" }] },
  {
    name: "checkout-conversion",
    kind: "ratio",
    numerator: { kind: "unique", event: "checkout.completed" },
    denominator: { kind: "unique", event: "cart.viewed" },
  },
];

export const CreateMetricBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; usable in place of the id" }),
    description: t.Optional(Description),
    kind: Kind,
    ...DefinitionFields,
  },
  { examples: EXAMPLES },
);

export const UpdateMetricBody = BodyObject(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: NAME_MAX })),
    description: t.Optional(Description),
    kind: t.Optional(Kind),
    ...DefinitionFields,
  },
  { examples: [{ description: "Completed checkouts, test orders excluded" }, { filters: [{ property: "test", op: "neq", value: true }] }, { kind: "unique" }] },
);

const MaxTime = 253_402_300_799; // 9999-12-31T23:59:59Z
const EpochSeconds = (description: string) => t.Number({ minimum: 0, maximum: MaxTime, multipleOf: 1, description });

export const SeriesBody = BodyObject(
  {
    from: EpochSeconds("Epoch seconds, inclusive: the first bucket starts here"),
    to: EpochSeconds("Epoch seconds, exclusive; greater than from"),
    bucket: t.Number({ minimum: 1, maximum: MaxTime, multipleOf: 1, description: "Bucket width in seconds; at most 10,000 buckets per series" }),
  },
  { examples: [{ from: 1_763_856_000, to: 1_763_942_400, bucket: 3600 }] },
);

const FilterView = t.Object({ property: t.String(), op: t.String(), value: t.Union([t.String(), t.Number(), t.Boolean()]) });
const PartView = t.Object({ kind: t.String(), event: t.String(), property: t.Union([t.String(), t.Null()]), filters: t.Array(FilterView) });

export const MetricSchema = t.Object(
  {
    id: t.String({ description: "met_…" }),
    name: t.String(),
    description: t.Union([t.String(), t.Null()]),
    kind: t.String({ description: "count, sum, unique or ratio" }),
    event: t.Union([t.String(), t.Null()], { description: "null for a ratio" }),
    property: t.Union([t.String(), t.Null()]),
    filters: t.Array(FilterView),
    numerator: t.Union([PartView, t.Null()]),
    denominator: t.Union([PartView, t.Null()]),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "Metric",
    examples: [
      {
        id: "met_7Hq2…",
        name: "revenue-de",
        description: null,
        kind: "sum",
        event: "checkout.completed",
        property: "amount",
        filters: [{ property: "country", op: "eq", value: "de" }],
        numerator: null,
        denominator: null,
        createdAt: "2026-11-20T09:00:00.000Z",
        updatedAt: "2026-11-20T09:00:00.000Z",
      },
    ],
  },
);

export const SeriesSchema = t.Object(
  {
    sql: t.String({ description: "The statement that ran, parameters shown as placeholders (a ratio: both, joined by `;\\n`)" }),
    rows: t.Array(t.Object({ t: Integer({ description: "Bucket start, epoch seconds" }), v: t.Number() }), { description: "Every bucket from `from` to `to`, empty ones 0" }),
  },
  { title: "Series" },
);
