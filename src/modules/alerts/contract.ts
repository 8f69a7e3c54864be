import { t } from "elysia";
import { BodyObject, Integer } from "../../lib/http";
import { CHANNEL_MAX, NAME_MAX, URL_MAX, WINDOW_HOURS_MAX } from "./types";

// The literals one by one, so that typed clients see the union.
const Comparator = t.Union([t.Literal("gt"), t.Literal("gte"), t.Literal("lt"), t.Literal("lte")], {
  description: "How the metric's value over the window compares with the threshold for the rule to fire",
});
const WindowHours = t.Number({ minimum: 1, maximum: WINDOW_HOURS_MAX, multipleOf: 1, description: `The trailing window the metric is measured over, in hours (1 to ${WINDOW_HOURS_MAX})` });
const Threshold = t.Number({ description: "A finite number" });

const NotifyTarget = BodyObject(
  {
    connectorId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "A connector of the project, by id (404 NOT_FOUND otherwise)" })),
    channel: t.Optional(t.String({ minLength: 1, maxLength: CHANNEL_MAX, description: "A channel of that connector, e.g. #ops" })),
    webhookUrl: t.Optional(t.String({ minLength: 1, maxLength: URL_MAX, description: "An http(s) URL, without credentials" })),
  },
  { description: "Where the rule's notifications go: at least one field" },
);
const Notify = t.Union([NotifyTarget, t.Null()], { description: "null: the project default" });

export const CreateAlertRuleBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; usable in place of the id" }),
    metricId: t.String({ minLength: 1, maxLength: 128, description: "The metric (id or name); fixed for the rule's life" }),
    threshold: Threshold,
    comparator: Comparator,
    windowHours: t.Optional(WindowHours),
    enabled: t.Optional(t.Boolean({ description: "Default true" })),
    notify: t.Optional(Notify),
  },
  {
    examples: [
      { name: "checkout-errors-high", metricId: "checkout-errors", threshold: 50, comparator: "gt", windowHours: 1 },
      { name: "signups-low", metricId: "signups", threshold: 10, comparator: "lt", windowHours: 24, notify: { webhookUrl: "https://hooks.example.com/alerts" } },
    ],
  },
);

export const UpdateAlertRuleBody = BodyObject(
  {
    threshold: t.Optional(Threshold),
    comparator: t.Optional(Comparator),
    windowHours: t.Optional(WindowHours),
    enabled: t.Optional(t.Boolean({ description: "false stops evaluating it (and puts it back to ok, without a notification)" })),
    notify: t.Optional(Notify),
    metricId: t.Optional(t.Unknown({ description: "Never accepted: a body carrying it is 409 IMMUTABLE_FIELD" })),
  },
  { examples: [{ threshold: 80 }, { enabled: false }, { notify: null }] },
);

const NotifyView = t.Union([
  t.Object({ connectorId: t.Optional(t.String()), channel: t.Optional(t.String()), webhookUrl: t.Optional(t.String()) }),
  t.Null(),
]);

export const AlertRuleSchema = t.Object(
  {
    id: t.String({ description: "ar_…" }),
    name: t.String(),
    metricId: t.String(),
    threshold: t.Number(),
    comparator: t.String({ description: "gt, gte, lt or lte" }),
    windowHours: Integer(),
    enabled: t.Boolean(),
    notify: NotifyView,
    state: t.Union([t.Literal("ok"), t.Literal("firing")]),
    lastValue: t.Union([t.Number(), t.Null()], { description: "The metric's value over the window at the last evaluation" }),
    lastCheckedAt: t.Union([t.String(), t.Null()]),
    lastTransitionAt: t.Union([t.String(), t.Null()], { description: "When it last went firing or ok" }),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "AlertRule",
    examples: [
      {
        id: "ar_5Kd9…",
        name: "checkout-errors-high",
        metricId: "met_7Hq2…",
        threshold: 50,
        comparator: "gt",
        windowHours: 1,
        enabled: true,
        notify: null,
        state: "firing",
        lastValue: 73,
        lastCheckedAt: "2026-11-23T10:15:00.000Z",
        lastTransitionAt: "2026-11-23T10:14:00.000Z",
        createdAt: "2026-11-20T09:00:00.000Z",
        updatedAt: "2026-11-20T09:00:00.000Z",
      },
    ],
  },
);

export const CreatedSchema = t.Object({ id: t.String(), name: t.String() });
export const UpdatedSchema = t.Object({ id: t.String() });
