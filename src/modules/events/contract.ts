import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";

const PropertyType = t.Union([t.Literal("string"), t.Literal("number"), t.Literal("boolean")], { description: "string, number or boolean" });

const PropertyInput = BodyObject({
  name: t.String({ minLength: 1, maxLength: 128 }),
  type: PropertyType,
  required: t.Optional(t.Boolean()),
  description: t.Optional(t.String({ maxLength: 1000 })),
});

const EXAMPLE = {
  id: "evt_4Jq8sT2mN0pLw3",
  name: "checkout.completed",
  folder: "commerce",
  description: "An order was paid",
  properties: [
    { name: "amount", type: "number", required: true, description: "Order total in EUR" },
    { name: "plan", type: "string", required: false, description: "" },
  ],
  pending: 0,
  createdAt: "2026-11-20T09:00:00.000Z",
  updatedAt: "2026-11-21T14:02:11.000Z",
  lastSeenAt: "2026-11-23T10:15:02.114Z",
};

export const CatalogEventSchema = t.Object(
  {
    id: t.String({ description: "evt_…" }),
    name: t.String({ description: "Unique in the project; usable in place of the id" }),
    folder: t.String(),
    description: t.String(),
    properties: t.Array(t.Object({ name: t.String(), type: t.String({ description: "`number` is a value seen" }), required: t.Boolean(), description: t.String() })),
    pending: t.Union([t.Literal(0), t.Literal(1)], { description: "1: discovered from ingest and not yet approved" }),
    createdAt: t.String(),
    updatedAt: t.String(),
    lastSeenAt: t.Union([t.String(), t.Null()], { description: "Last time ingest carried it (kept within about 10 s)" }),
  },
  { title: "CatalogEvent", examples: [EXAMPLE] },
);

export const CreateEventBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: 128 }),
    folder: t.Optional(t.String({ maxLength: 100 })),
    description: t.Optional(t.String({ maxLength: 1000 })),
    properties: t.Optional(t.Array(PropertyInput, { maxItems: 200 })),
  },
  { examples: [{ name: "checkout.completed", folder: "commerce", properties: [{ name: "amount", type: "number", required: true, description: "Order total in EUR" }] }] },
);

export const UpdateEventBody = BodyObject(
  {
    folder: t.Optional(t.String({ maxLength: 100 })),
    description: t.Optional(t.String({ maxLength: 1000 })),
    properties: t.Optional(t.Array(PropertyInput, { maxItems: 200, description: "Replaces the list; a metric naming a removed property stops compiling (422) until re-saved" })),
  },
  { examples: [{ description: "An order was paid (after 3-D Secure)" }] },
);

export const CreatedEventSchema = t.Object({ id: t.String(), name: t.String() }, { examples: [{ id: EXAMPLE.id, name: EXAMPLE.name }] });

export const EventCountsSchema = t.Object(
  {
    since: t.Object({ last24h: t.String({ description: "Start of the 24-hour window: whole UTC hours, the current one included" }), last7d: t.String() }),
    counts: t.Array(t.Object({ name: t.String({ description: "As SDKs sent it (untrusted text)" }), last24h: Integer(), last7d: Integer() }), {
      description: "One row per event name with events in the last 7 days, by name; svc's own `$` names are left out",
    }),
  },
  {
    title: "EventCounts",
    examples: [{ since: { last24h: "2026-11-27T15:00:00.000Z", last7d: "2026-11-21T16:00:00.000Z" }, counts: [{ name: "checkout.completed", last24h: 1284, last7d: 9120 }] }],
  },
);

export const RecentQuery = QueryObject({
  limit: t.Optional(t.String({ description: "Integer, 1 to 100; default 25" })),
  before: t.Optional(t.String({ maxLength: 200, description: "The `next` of the previous page" })),
});

export const RecentEventsSchema = t.Object(
  {
    name: t.String(),
    events: t.Array(
      t.Object({
        at: t.String({ description: "The event's time (its `ts`, ISO 8601)" }),
        ts: Integer({ description: "Epoch milliseconds" }),
        unitId: t.Union([t.String(), t.Null()]),
        value: t.Union([t.Number(), t.Null()]),
        properties: t.Union([t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean()])), t.Null()]),
      }),
      { description: "Newest first. Every text here is what an SDK client sent: untrusted." },
    ),
    next: t.Union([t.String(), t.Null()], { description: "Pass as `before` for the next (older) page; null on the last page" }),
  },
  {
    title: "RecentEvents",
    examples: [
      {
        name: "checkout.completed",
        events: [{ at: "2026-11-28T14:02:11.114Z", ts: 1795874531114, unitId: "user-42", value: 59.9, properties: { plan: "pro", country: "de" } }],
        next: "MTc5NTg3NDUzMTExNDoxMg",
      },
    ],
  },
);
