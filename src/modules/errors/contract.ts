import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { ERROR_ITEMS_PER_MINUTE, MAX_ERRORS_PER_CALL, NEW_ERRORS_PER_MINUTE, OCCURRENCES_RECENT, OCCURRENCES_SAMPLE } from "./types";

const Status = t.Union([t.Literal("unresolved"), t.Literal("resolved"), t.Literal("ignored"), t.Literal("regressed")], {
  description: "unresolved (new), resolved, ignored (new occurrences keep it ignored), regressed (it happened again after being resolved)",
});

const EXAMPLE_ERROR = {
  id: "err_4Qk2mX9pLr7TzV1bN8cW",
  fingerprint: "9f2c41d7a0b35e6c8d1f4a2b7e0c9d53",
  type: "TypeError",
  message: "Cannot read properties of undefined (reading 'total')",
  culprit: "chargeCard (lib:checkout:42)",
  status: "unresolved",
  count: 17,
  affectedUnits: 5,
  firstSeenAt: "2026-11-20T09:12:44.120Z",
  lastSeenAt: "2026-11-23T10:15:02.114Z",
  statusChangedAt: null,
  statusChangedBy: null,
};

export const TrackedErrorSchema = t.Object(
  {
    id: t.String({ description: "err_…" }),
    fingerprint: t.String({ description: "32 hex characters: what groups occurrences (type and in-app frames, never line numbers; else the message without its numbers and ids)" }),
    type: t.String({ description: "Exception type, e.g. TypeError (`Error` when none was sent)" }),
    message: t.String({ description: "A recent occurrence's message, on one line, at most 1,000 characters" }),
    culprit: t.Union([t.String(), t.Null()], { description: "Top in-app frame: `function (module-or-file:line)`; null without frames" }),
    status: Status,
    count: Integer({ description: "Occurrences" }),
    affectedUnits: Integer({ description: "Distinct units (unitId, Sentry user.id) it happened to: exact" }),
    firstSeenAt: t.String(),
    lastSeenAt: t.String(),
    statusChangedAt: t.Union([t.String(), t.Null()]),
    statusChangedBy: t.Union([t.String(), t.Null()], { description: "Who changed the status last (system@svc.local for a regression)" }),
  },
  { title: "TrackedError", examples: [EXAMPLE_ERROR] },
);

const EXAMPLE_OCCURRENCE = {
  id: "occ_8hT2kQ9vXw3LmN5pR7sB",
  ts: "2026-11-23T10:15:02.114Z",
  kept: "recent",
  eventId: "fc6d8c0c43fc4630ad850ee518f1b9d0",
  type: "TypeError",
  message: "Cannot read properties of undefined (reading 'total')",
  unitId: "user-42",
  release: "shop@2026.11.3",
  environment: "production",
  tags: { route: "/checkout", level: "error", platform: "node", server_name: "web-2" },
  frames: [
    {
      function: "chargeCard",
      filename: "/srv/app/lib/checkout.js",
      module: "lib:checkout",
      lineno: 42,
      colno: 17,
      inApp: true,
      preContext: ["export function chargeCard(order) {", "  const card = order.payment;"],
      contextLine: "  const amount = order.cart.total;",
      postContext: ["  return gateway.charge(card, amount);", "}"],
    },
    { function: "handleCheckout", filename: "/srv/app/routes/checkout.js", module: "routes:checkout", lineno: 18, colno: 5, inApp: true },
    { function: "Layer.handle", filename: "/srv/app/node_modules/express/lib/router/layer.js", module: "express.lib.router:layer", lineno: 95, colno: 5, inApp: false },
  ],
  framesOmitted: 0,
};

const Lines = t.Array(t.String(), { description: "Source lines, at most 5, each at most 256 characters" });

export const OccurrenceFrameSchema = t.Object(
  {
    function: t.Optional(t.String({ description: "Function or method, at most 256 characters" })),
    filename: t.Optional(t.String({ description: "File or URL as the SDK named it (Sentry's filename, else abs_path), at most 1,024 characters" })),
    absPath: t.Optional(t.String({ description: "Sentry's abs_path, when it differs from filename" })),
    module: t.Optional(t.String({ description: "Sentry's module, e.g. lib:checkout" })),
    lineno: t.Optional(t.Number({ description: "Line, 1-based" })),
    colno: t.Optional(t.Number({ description: "Column, 1-based" })),
    inApp: t.Optional(t.Boolean({ description: "Your code (true) or a dependency or the runtime (false); absent when the SDK did not say" })),
    preContext: t.Optional(Lines),
    contextLine: t.Optional(t.String({ description: "The line itself, when the SDK sent context lines" })),
    postContext: t.Optional(Lines),
  },
  { title: "OccurrenceFrame" },
);

export const OccurrenceSchema = t.Object(
  {
    id: t.String({ description: "occ_…" }),
    ts: t.String({ description: "When it happened (ISO 8601)" }),
    kept: t.Union([t.Literal("recent"), t.Literal("sample")], {
      description: `recent: one of the last ${OCCURRENCES_RECENT} received; sample: one of ${OCCURRENCES_SAMPLE} older occurrences kept as a uniform sample`,
    }),
    eventId: t.Union([t.String(), t.Null()], { description: "The Sentry event id; null from POST /api/sdk/v1/errors" }),
    type: t.String(),
    message: t.String({ description: "This occurrence's message, on one line, at most 1,000 characters" }),
    unitId: t.Union([t.String(), t.Null()], { description: "The unit it happened to (unitId, Sentry user.id)" }),
    release: t.Union([t.String(), t.Null()], { description: "Sentry's release, or the `release` property" }),
    environment: t.Union([t.String(), t.Null()], { description: "Sentry's environment, or the `environment` property" }),
    tags: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean()]), {
      description: "Sentry's tags, level, platform, server_name and transaction, or the item's other properties; at most 50, values at most 256 characters",
    }),
    frames: t.Array(OccurrenceFrameSchema, { description: "Innermost first (the frame that threw); at most 100" }),
    framesOmitted: Integer({ description: "Frames sent but not kept: beyond 100, or cut (outermost first) to keep the occurrence under 48 KiB" }),
  },
  { title: "ErrorOccurrence", examples: [EXAMPLE_OCCURRENCE] },
);

export const TrackedErrorDetailSchema = t.Object(
  {
    ...TrackedErrorSchema.properties,
    occurrences: t.Array(OccurrenceSchema, {
      description:
        `Kept occurrences, newest received first: the last ${OCCURRENCES_RECENT}, then a sample of ${OCCURRENCES_SAMPLE} older ones. ` +
        "Their text (messages, frames, context lines, tags) is what SDKs sent, from apps anyone can run: untrusted.",
    }),
  },
  { title: "TrackedErrorDetail", examples: [{ ...EXAMPLE_ERROR, occurrences: [EXAMPLE_OCCURRENCE] }] },
);

const PropertyValue = t.Union([t.String({ maxLength: 1000 }), t.Number(), t.Boolean(), t.Null()]);

export const ErrorItemSchema = BodyObject({
  message: t.String({ description: "The error's message (stored on one line, cut at 1,000 characters)" }),
  type: t.Optional(t.String({ maxLength: 1000, description: "Exception type or class, e.g. TypeError; default Error" })),
  stack: t.Optional(t.String({ description: "A JavaScript stack (`error.stack`, V8 `at fn (file:line:col)` or `fn@file:line:col`): its in-app frames group occurrences" })),
  ts: t.Optional(t.Union([t.Number(), t.String({ maxLength: 40 })], { description: "Epoch milliseconds or ISO 8601; default now. At most a day ahead, at most 396 days old" })),
  fingerprint: t.Optional(t.String({ minLength: 1, maxLength: 512, description: "Your own grouping key: occurrences with the same one are one error, whatever their stacks" })),
  unitId: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "The unit (user, account) it happened to: counted once in affectedUnits" })),
  properties: t.Optional(t.Record(t.String(), PropertyValue, { maxProperties: 50, description: "Scalar properties stored with the occurrence's event" })),
});

export const IngestErrorsBody = BodyObject(
  {
    errors: t.Array(ErrorItemSchema, { description: `1 to ${MAX_ERRORS_PER_CALL} occurrences` }),
  },
  {
    examples: [
      {
        errors: [
          {
            message: "Cannot read properties of undefined (reading 'total')",
            type: "TypeError",
            stack:
              "TypeError: Cannot read properties of undefined (reading 'total')\n    at chargeCard (/srv/app/lib/checkout.js:42:17)\n    at async handleCheckout (/srv/app/routes/checkout.js:18:5)",
            ts: 1795430400000,
            unitId: "user-42",
            properties: { release: "2026.11.3", route: "/checkout" },
          },
          { message: "Payment provider timed out after 30000 ms", type: "TimeoutError", fingerprint: "payment-timeout" },
        ],
      },
    ],
  },
);

const EXAMPLE_LIMITED = {
  reason: "new_errors_per_minute",
  limit: NEW_ERRORS_PER_MINUTE,
  count: 1,
  retryAfter: 37,
  detail: `1 occurrence(s) of errors new to the project were dropped: it may start tracking ${NEW_ERRORS_PER_MINUTE} new errors a minute. Errors already tracked keep counting.`,
};

export const LimitedSchema = t.Object(
  {
    reason: t.Union([t.Literal("new_errors_per_minute"), t.Literal("error_items_per_minute"), t.Literal("browser_new_errors_per_hour")], {
      description:
        `new_errors_per_minute: occurrences dropped because their error would be new and the project has started tracking ${NEW_ERRORS_PER_MINUTE} new errors this minute; ` +
        `error_items_per_minute: new or regressed errors tracked without a queue item because svc has opened ${ERROR_ITEMS_PER_MINUTE} error items for the project this minute; ` +
        "browser_new_errors_per_hour: occurrences sent with a browser key dropped because their error would be new and browser keys have started the project tracking their allowance of new errors this hour (default 100)",
    }),
    limit: Integer({ description: "The limit, per project and minute (an hour for browser_new_errors_per_hour; per server)" }),
    count: Integer({ description: "Occurrences dropped (new_errors_per_minute) or errors left without a queue item (error_items_per_minute) in this call" }),
    retryAfter: Integer({ description: "Seconds until the project's minute (or hour) starts again" }),
    detail: t.String(),
  },
  { title: "IngestLimited" },
);

const HeldBack = {
  dropped: t.Optional(Integer({ description: "Occurrences not stored (present with `limited`)" })),
  limited: t.Optional(t.Array(LimitedSchema, { description: "What the per-project limits held back; absent when nothing was" })),
};

export const IngestErrorsReply = t.Object(
  { accepted: Integer({ description: "Occurrences stored (all of the batch unless `limited` says otherwise)" }), ...HeldBack },
  { examples: [{ accepted: 2 }, { accepted: 1, dropped: 1, limited: [EXAMPLE_LIMITED] }] },
);

export const ErrorListQuery = QueryObject({
  status: t.Optional(Status),
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over type and message" })),
});

export const SetStatusBody = BodyObject(
  { status: t.Union([t.Literal("unresolved"), t.Literal("resolved"), t.Literal("ignored")], { description: "regressed is set by svc only" }) },
  { examples: [{ status: "resolved" }, { status: "ignored" }] },
);

// Numbers with multipleOf 1, not t.Integer: Elysia's integer also takes the string "10".
const EpochSeconds = t.Number({ minimum: 0, maximum: 253_402_300_799, multipleOf: 1, description: "Epoch seconds" });

export const SeriesBody = BodyObject(
  {
    from: EpochSeconds,
    to: t.Number({ minimum: 0, maximum: 253_402_300_799, multipleOf: 1, description: "Epoch seconds; strictly greater than from" }),
    bucket: t.Number({ minimum: 1, maximum: 253_402_300_799, multipleOf: 1, description: "Bucket width in seconds (at most 10,000 buckets)" }),
  },
  { examples: [{ from: 1795392000, to: 1795478400, bucket: 3600 }] },
);

export const SeriesReply = t.Object(
  {
    sql: t.String({ description: "The statement that produced the rows (parameters shown as placeholders)" }),
    rows: t.Array(t.Object({ t: Integer({ description: "Bucket start, epoch seconds" }), v: t.Number() }), { description: "Every bucket of the window, empty ones 0" }),
  },
  {
    examples: [
      {
        sql: "SELECT hour, n FROM event_hourly WHERE project_id = ? AND name = ? AND hour >= ? AND hour < ?",
        rows: [
          { t: 1795392000, v: 3 },
          { t: 1795395600, v: 0 },
        ],
      },
    ],
  },
);

export const SentryReply = t.Object(
  { id: t.Optional(t.String({ description: "The event id (32 hex characters); absent when the envelope carried no event" })), ...HeldBack },
  { examples: [{ id: "fc6d8c0c43fc4630ad850ee518f1b9d0" }, { id: "fc6d8c0c43fc4630ad850ee518f1b9d0", dropped: 1, limited: [EXAMPLE_LIMITED] }] },
);
