import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { Comparator } from "./types";
import type { AlertRuleSchema, CreateAlertRuleBody, UpdateAlertRuleBody } from "./contract";
import type { alertRoutes } from "./routes";
import type { metricRoutes } from "../metrics/routes";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, openClient, str, table, when, oneOf } from "../../cli/client-command";
import type { ArgValues, Command, Flags } from "../../cli/command";
import { CliError } from "../../cli/errors";
import { durationSeconds, valueText } from "../metrics/cli";

type AlertRule = Static<typeof AlertRuleSchema>;
/** The fields create and update share (an update never carries metricId: the server refuses it). */
type Fields = Omit<Static<typeof UpdateAlertRuleBody>, "metricId">;

/** The alert rule routes, typed from their own schemas. */
const rules = (client: SvcClient) => client.api<ReturnType<typeof alertRoutes>>().api.admin["alert-rules"];

/** Every comparator with its symbol (a Record, so a comparator the server adds is a compile error here). */
const COMPARATORS: Record<Comparator, string> = { gt: ">", gte: ">=", lt: "<", lte: "<=" };
const COMPARATOR_NAMES = Object.keys(COMPARATORS) as Comparator[];
/** The longest window the server takes, in hours. */
const WINDOW_HOURS_MAX = 720;

function comparatorFlag(value: string): Comparator {
  // Not found: the value is none of the names either, and oneOf says so.
  return COMPARATOR_NAMES.find((name) => name === value.toLowerCase() || COMPARATORS[name] === value) ?? oneOf(value, COMPARATOR_NAMES, "--comparator", ` (or ${Object.values(COMPARATORS).join(" ")})`);
}

function thresholdFlag(value: string): number {
  const n = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw new UsageError(`--threshold must be a number, e.g. 50 or 0.25 (got "${value}")`);
  return n;
}

/** `--window 1h`, `24h`, `2d`, `1w`, or plain hours: whole hours, 1 to 720. */
function windowFlag(value: string): number {
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) * 3600 : durationSeconds(value);
  const hours = seconds === undefined ? Number.NaN : seconds / 3600;
  if (!(Number.isInteger(hours) && hours >= 1 && hours <= WINDOW_HOURS_MAX)) {
    throw new UsageError(`--window must be whole hours from 1h to ${WINDOW_HOURS_MAX}h (30d), e.g. 1h, 24h or 7d (got "${value}")`);
  }
  return hours;
}

/** `1h`, `24h`, `7d` (a whole number of days reads as days). */
const windowText = (hours: number) => (hours % 24 === 0 && hours >= 48 ? `${hours / 24}d` : `${hours}h`);

/** `orders > 50 over 1h`. */
const conditionText = (r: Pick<AlertRule, "comparator" | "threshold" | "windowHours">, metric: string) =>
  `${metric} ${COMPARATORS[r.comparator as Comparator] ?? r.comparator} ${valueText(r.threshold)} over ${windowText(r.windowHours)}`;

const notifyText = (r: AlertRule) =>
  r.notify === null ? "the project default" : [r.notify.webhookUrl && `webhook ${r.notify.webhookUrl}`, r.notify.connectorId && `connector ${r.notify.connectorId}`, r.notify.channel && `channel ${r.notify.channel}`].filter(Boolean).join(", ");

const stateText = (r: AlertRule) => (r.enabled ? r.state : "disabled");

/** Metric id → name, to show rules by the names people use. */
async function metricNames(client: SvcClient): Promise<Map<string, string>> {
  const metrics = await dataOf(client.api<ReturnType<typeof metricRoutes>>().api.admin.metrics.get());
  return new Map(metrics.map((m) => [m.id, m.name]));
}

function ruleText(r: AlertRule, metric: string): string {
  return [
    `${r.name} (${r.id})`,
    `  fires when:   ${conditionText(r, metric)} (checked every minute)`,
    `  metric:       ${metric === r.metricId ? r.metricId : `${metric} (${r.metricId})`}`,
    `  state:        ${stateText(r)}${r.enabled && r.lastTransitionAt ? ` since ${when(r.lastTransitionAt)}` : ""}`,
    `  last value:   ${r.lastValue === null ? "-" : valueText(r.lastValue)}${r.lastCheckedAt ? ` at ${when(r.lastCheckedAt)}` : " (not checked yet)"}`,
    `  notifies:     ${notifyText(r)}`,
    `  created:      ${when(r.createdAt)}`,
    `  updated:      ${when(r.updatedAt)}`,
  ].join("\n");
}

const FIELD_FLAGS = {
  comparator: { type: "string", value: "OP", help: `How the metric compares with the threshold to fire: ${COMPARATOR_NAMES.map((c) => `${c} (${COMPARATORS[c]})`).join(", ")}` },
  threshold: { type: "string", value: "N", help: "The value it compares with, e.g. 50 or 0.25" },
  window: { type: "string", value: "HOURS", help: `The trailing window the metric is measured over: 1h to ${WINDOW_HOURS_MAX}h, e.g. 1h, 24h, 7d (default 1h)` },
  webhook: { type: "string", value: "URL", help: "Send its notifications to this http(s) webhook instead of the project default" },
} satisfies Flags;

/** The rule fields both create and update send, as the API names them. */
function fields(values: ArgValues): Fields {
  const body: Fields = {};
  const comparator = str(values, "comparator");
  if (comparator !== undefined) body.comparator = comparatorFlag(comparator);
  const threshold = str(values, "threshold");
  if (threshold !== undefined) body.threshold = thresholdFlag(threshold);
  const window = str(values, "window");
  if (window !== undefined) body.windowHours = windowFlag(window);
  const webhook = str(values, "webhook");
  if (webhook !== undefined) {
    if (!/^https?:\/\/\S+$/i.test(webhook)) throw new UsageError(`--webhook must be an http(s) URL (got "${webhook}")`);
    body.notify = { webhookUrl: webhook };
  }
  return body;
}

export const alertsCommand: Command = {
  name: "alerts",
  summary: "Alert rules on metrics: list, get, create, update (deleting is done in the dashboard)",
  details: [
    "A rule fires when its metric's value over the trailing window compares with the threshold as its comparator says; rules are checked every minute. A rule's metric never changes. Notifications go to the project default unless --webhook says otherwise.",
  ],
  examples: ["svc alerts list", "svc alerts create orders-low --metric orders --comparator lt --threshold 10 --window 24h", "svc alerts update orders-low --disable"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's alert rules: the condition, whether each is firing, its last value",
      examples: ["svc alerts list", "svc alerts list --query checkout --json"],
      flags: { query: { ...QUERY_FLAG, help: "Only rules whose name contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const client = openClient(values);
        const all = await dataOf(rules(client).get({ query: { q: q || undefined } }));
        if (values.json) {
          emit(true, all, () => "");
          return 0;
        }
        const names = all.length ? await metricNames(client) : new Map<string, string>();
        emit(false, all, () => {
          if (all.length === 0) return q ? `No alert rules match "${q}".` : "No alert rules yet; create one with `svc alerts create <name> --metric M --comparator gt --threshold N`.";
          return table(
            ["NAME", "FIRES WHEN", "STATE", "LAST VALUE", "LAST CHECKED"],
            all.map((r) => [r.name, conditionText(r, names.get(r.metricId) ?? r.metricId), stateText(r), r.lastValue === null ? "" : valueText(r.lastValue), when(r.lastCheckedAt)]),
            { full: ["NAME", "FIRES WHEN"] },
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one alert rule: its condition, state, last value and where it notifies",
      args: ["<name>"],
      examples: ["svc alerts get orders-low", "svc alerts get ar_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const r = await dataOf(rules(client)({ id: seg(positionals[0]!) }).get());
        if (values.json) {
          emit(true, r, () => "");
          return 0;
        }
        const names = await metricNames(client);
        emit(false, r, () => ruleText(r, names.get(r.metricId) ?? r.metricId));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create an alert rule on a metric (its metric never changes afterwards)",
      args: ["<name>"],
      examples: [
        "svc alerts create checkout-errors-high --metric checkout-errors --comparator gt --threshold 50",
        "svc alerts create signups-low --metric signups --comparator lt --threshold 10 --window 24h --webhook https://hooks.example.com/alerts --json",
      ],
      flags: {
        metric: { type: "string", value: "METRIC", help: "The metric it watches, by name or id (`svc metrics list`); required" },
        ...FIELD_FLAGS,
        comparator: { ...FIELD_FLAGS.comparator, help: `${FIELD_FLAGS.comparator.help}; required` },
        threshold: { ...FIELD_FLAGS.threshold, help: `${FIELD_FLAGS.threshold.help}; required` },
        disabled: { type: "boolean", help: "Create it switched off (enable it with `svc alerts update <name> --enable`)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const metric = str(values, "metric");
        const missing = [metric === undefined && "--metric METRIC", values.comparator === undefined && `--comparator ${COMPARATOR_NAMES.join("|")}`, values.threshold === undefined && "--threshold N"].filter(Boolean);
        if (missing.length) throw new UsageError(`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} required: svc alerts create <name> --metric METRIC --comparator gt --threshold N [--window 1h]`);
        const given = fields(values);
        // Both were checked present above; named again, in place, so that the body types as a create.
        const body: Static<typeof CreateAlertRuleBody> = { name: positionals[0]!, metricId: metric!, ...given, comparator: given.comparator!, threshold: given.threshold! };
        if (values.disabled) body.enabled = false;
        const created = await dataOf(rules(openClient(values)).post(body));
        emit(values.json, created, () => {
          const rule = { comparator: body.comparator, threshold: body.threshold, windowHours: body.windowHours ?? 1 };
          return `Created alert rule ${created.name} (${created.id}): fires when ${conditionText(rule, metric!)}${values.disabled ? "; disabled" : "; checked every minute"}.`;
        });
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change an alert rule's comparator, threshold, window, notifications, or switch it on or off",
      args: ["<name>"],
      details: ["Only the flags given change. Disabling puts a firing rule back to ok without a notification. The metric never changes: create another rule for another metric. --json prints the rule as it is now."],
      examples: ["svc alerts update orders-low --threshold 5 --window 48h", "svc alerts update orders-low --disable", "svc alerts update orders-low --notify-default --json"],
      flags: {
        ...FIELD_FLAGS,
        enable: { type: "boolean", help: "Switch the rule on (it is checked again every minute)" },
        disable: { type: "boolean", help: "Switch it off (a firing rule goes back to ok, without a notification)" },
        "notify-default": { type: "boolean", help: "Send its notifications to the project default again" },
        metric: { type: "string", value: "METRIC", help: "Refused: a rule's metric never changes" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        if (values.metric !== undefined) {
          throw new UsageError(`an alert rule's metric never changes: create a new rule with \`svc alerts create <name> --metric ${values.metric} ...\`, then delete ${name} in the dashboard (or \`svc alerts update ${name} --disable\`)`);
        }
        if (values.enable && values.disable) throw new UsageError("--enable and --disable cannot both be given");
        if (values.webhook !== undefined && values["notify-default"]) throw new UsageError("--webhook and --notify-default cannot both be given");
        const body = fields(values);
        if (values.enable) body.enabled = true;
        if (values.disable) body.enabled = false;
        if (values["notify-default"]) body.notify = null;
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give at least one of --comparator, --threshold, --window, --webhook, --notify-default, --enable, --disable");
        const client = openClient(values);
        const { id } = await dataOf(rules(client)({ id: seg(name) }).patch(body));
        const r = await dataOf(rules(client)({ id: seg(id) }).get());
        if (values.json) {
          emit(true, r, () => "");
          return 0;
        }
        const names = await metricNames(client);
        emit(false, r, () => `Updated alert rule ${r.name}:\n${ruleText(r, names.get(r.metricId) ?? r.metricId).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    {
      name: "delete",
      summary: "Explains where: alert rules are deleted in the dashboard only (API tokens and keys may not); nothing is sent",
      args: ["<name>"],
      details: ["The server lets only a person signed in to the dashboard delete an alert rule. From here, `svc alerts update <name> --disable` stops it at once."],
      examples: ["svc alerts delete orders-low"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        let server = str(values, "url") ?? process.env.SERVICE_URL;
        try {
          server = openClient(values).serverUrl;
        } catch {
          // Not signed in: the hint names the server it knows of, if any.
        }
        throw new CliError(
          `alert rules are deleted in the dashboard only; ${name} was not deleted (nothing was sent)`,
          "DASHBOARD_ONLY",
          `sign in to the dashboard${server ? ` at ${server}` : ""} and delete ${name} there, or stop it now with \`svc alerts update ${name} --disable\`.`,
        );
      },
    },
  ],
};
