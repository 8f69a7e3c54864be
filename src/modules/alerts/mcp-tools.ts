import { z } from "zod";
import { COMPARATORS, WINDOW_HOURS_MAX } from "./types";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { alertRoutes } from "./routes";

/** The alert rule routes, typed from their own schemas. */
const rules = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof alertRoutes>>().api.admin["alert-rules"];
const ruleName = z.string().min(1).max(128).describe("Alert rule name or id");

// Strict: a misspelt field is refused, never silently dropped.
const notify = z
  .strictObject({
    connectorId: z.string().min(1).max(128).optional(),
    channel: z.string().min(1).max(200).optional(),
    webhookUrl: z.string().url().max(2048).optional().describe("http(s), without credentials"),
  })
  .nullable()
  .describe("Where notifications go; null: the project default");

export const alertTools = [
  defineTool({
    name: "list_alert_rules",
    title: "List alert rules",
    description:
      "The project's alert rules: the metric each watches, its comparator (gt, gte, lt, lte) and threshold over a trailing window of hours, whether it is enabled, its state (ok or firing), the last value seen and when it last changed state.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(rules(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_alert_rule",
    title: "Get an alert rule",
    description: "One alert rule: metric, comparator, threshold, window, enabled, delivery target, state (ok or firing) and the last evaluation.",
    input: { name: ruleName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(rules(open, project_id)({ id: seg(name) }).get());
    },
  }),
  defineTool({
    name: "update_alert_rule",
    title: "Update an alert rule",
    description:
      "Changes a rule's threshold, comparator, window (hours) or delivery target, or enables/disables it; fields not given stay. A rule's metric cannot be changed, and rules are deleted only in the dashboard (disable one instead).",
    input: {
      name: ruleName,
      threshold: z.number().finite().optional(),
      comparator: z.enum(COMPARATORS).optional(),
      window_hours: z.number().int().min(1).max(WINDOW_HOURS_MAX).optional().describe("Trailing window in hours"),
      enabled: z.boolean().optional(),
      notify: notify.optional(),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run({ name, threshold, comparator, window_hours, enabled, notify, project_id }, open) {
      return dataOf(rules(open, project_id)({ id: seg(name) }).patch({ threshold, comparator, windowHours: window_hours, enabled, notify }));
    },
  }),
];
