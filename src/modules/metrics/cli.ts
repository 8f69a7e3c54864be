import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { FilterOp, PropertyFilter } from "../../lib/eventstore/types";
import type { CreateMetricBody, MetricSchema, UpdateMetricBody } from "./contract";
import type { metricRoutes } from "./routes";
import { ApiRequestError, type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, list, openClient, str, table, when, deleteCommand, oneOf } from "../../cli/client-command";
import type { ArgValues, Command, Flag, Flags } from "../../cli/command";

// ---------------------------------------------------------------------------
// Time series, shared with `svc errors series` (tracked-errors.ts).
// ---------------------------------------------------------------------------

export type SeriesRow = { t: number; v: number };
export type Series = { sql: string; rows: SeriesRow[] };
export type Window = { from: number; to: number; bucket: number };

/** The server's limit on buckets per series. */
const MAX_BUCKETS = 10_000;
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const DAY = 86_400;

/** `90s`, `15m`, `1h`, `7d`, `2w`, or plain seconds (`3600`); undefined when it is none of these. */
export function durationSeconds(text: string): number | undefined {
  const m = /^(\d+)\s*([smhdw]?)$/i.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]) * UNITS[(m[2] || "s").toLowerCase()]!;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** 3600 → `1h`, 86400 → `1d`, 90 → `90s`. */
export function durationText(seconds: number): string {
  for (const [unit, size] of [["w", 604_800], ["d", DAY], ["h", 3600], ["m", 60]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** A time flag: an ISO time, epoch seconds, `now`, or a duration back from now (`7d`, `-7d`, `7d ago`): `ago` seconds for the latter. */
function timeFlag(value: string, flag: string): { at: number } | { ago: number } {
  const text = value.trim();
  if (text === "now") return { ago: 0 };
  const relative = /^-?\s*(\d+\s*[smhdw])(\s+ago)?$/i.exec(text);
  if (relative) return { ago: durationSeconds(relative[1]!)! };
  if (/^\d+$/.test(text)) return { at: Number(text) };
  if (/^\d{4}-\d\d-\d\d/.test(text)) {
    // A time without a zone is UTC, as every time the CLI prints (`2026-11-23 13:00` as tables show it, too).
    const spaced = text.replace(/^(\d{4}-\d\d-\d\d) (?=\d)/, "$1T");
    const iso = /T\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(spaced) ? `${spaced}Z` : spaced;
    const ms = Date.parse(iso);
    if (!Number.isNaN(ms)) return { at: Math.floor(ms / 1000) };
  }
  throw new UsageError(`--${flag} must be an ISO time (2026-11-23T09:00Z), epoch seconds, now, or a time back from now such as 24h or 7d (got "${value}")`);
}

export const WINDOW_FLAGS = {
  from: { type: "string", value: "TIME", help: "Start: an ISO time (UTC unless it says), epoch seconds, or back from now: 24h, 7d (default: 24h before --to)" },
  to: { type: "string", value: "TIME", help: "End, the same forms (default: now, rounded up to the end of its bucket)" },
  bucket: { type: "string", value: "SIZE", help: "Bucket width: 1h, 1d, 15m, or seconds (default 1h)" },
} satisfies Flags;

/**
 * The window `--from`, `--to` and `--bucket` ask for. Times back from now
 * (and the defaults) are rounded to whole buckets of the UTC clock, so that
 * `--bucket 1d` buckets are days and the current bucket is the last one.
 */
export function windowFlags(values: ArgValues, nowSeconds = Math.floor(Date.now() / 1000)): Window {
  const bucketText = str(values, "bucket");
  const bucket = bucketText === undefined ? 3600 : durationSeconds(bucketText);
  if (!bucket) throw new UsageError(`--bucket must be a width such as 1h, 1d, 15m or a number of seconds, at least 1 (got "${bucketText}")`);
  const fromText = str(values, "from");
  const toText = str(values, "to");
  const from = fromText === undefined ? undefined : timeFlag(fromText, "from");
  const to = toText === undefined ? undefined : timeFlag(toText, "to");
  const end = Math.ceil(nowSeconds / bucket) * bucket;
  let stop = to === undefined ? undefined : "at" in to ? to.at : Math.ceil((nowSeconds - to.ago) / bucket) * bucket;
  let start: number;
  if (from === undefined) start = (stop ?? end) - DAY;
  else if ("at" in from) start = from.at;
  else start = Math.floor((end - from.ago) / bucket) * bucket;
  // Up to now, on a bucket edge counted from the start.
  stop ??= start + Math.max(1, Math.ceil((nowSeconds - start) / bucket)) * bucket;
  if (stop <= start) throw new UsageError(`--to must be after --from (got ${isoOf(start)} to ${isoOf(stop)})`);
  const n = Math.ceil((stop - start) / bucket);
  if (n > MAX_BUCKETS) throw new UsageError(`that is ${n} buckets of ${durationText(bucket)}; at most ${MAX_BUCKETS}: widen --bucket or shorten --from/--to`);
  return { from: start, to: stop, bucket };
}

const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

/** A bucket start for tables: `2026-11-23 13:00` (UTC), with seconds when the window needs them. */
function bucketText(t: number, seconds: boolean): string {
  const iso = new Date(t * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, seconds ? 19 : 16)}`;
}

/** A value for people: whole numbers as they are, others to 4 decimals. */
export function valueText(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(4)));
}

const BARS = "▁▂▃▄▅▆▇█";
/** Cells of a sparkline at most; longer series show the largest value of each group. */
const SPARK_MAX = 120;

/** One line of block characters, 0 (or the smallest value, if negative) to the largest. */
export function sparkline(values: number[]): string {
  let points = values;
  if (points.length > SPARK_MAX) {
    const size = Math.ceil(points.length / SPARK_MAX);
    points = Array.from({ length: Math.ceil(values.length / size) }, (_, i) => Math.max(...values.slice(i * size, (i + 1) * size)));
  }
  const low = Math.min(0, ...points);
  const high = Math.max(...points);
  if (high === low) return BARS[0]!.repeat(points.length);
  return points.map((v) => BARS[Math.min(BARS.length - 1, Math.floor(((v - low) / (high - low)) * BARS.length))]).join("");
}

/** The table of buckets and a sparkline with min, max and (when adding up makes sense) the total. */
export function seriesText(title: string, window: Window, rows: SeriesRow[], options: { total: boolean }): string {
  const seconds = window.bucket % 60 !== 0 || window.from % 60 !== 0;
  const lines = [
    `${title}: ${rows.length} bucket${rows.length === 1 ? "" : "s"} of ${durationText(window.bucket)}, ${bucketText(window.from, seconds)} to ${bucketText(window.to, seconds)} UTC`,
    "",
    table(["BUCKET (UTC)", "VALUE"], rows.map((r) => [bucketText(r.t, seconds), valueText(r.v)])),
  ];
  if (rows.length) {
    const values = rows.map((r) => r.v);
    const stats = [`min ${valueText(Math.min(...values))}`, `max ${valueText(Math.max(...values))}`];
    if (options.total) stats.push(`total ${valueText(values.reduce((s, v) => s + v, 0))}`);
    lines.push("", `${sparkline(values)}  ${stats.join(", ")}`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------
// Metrics.
// ---------------------------------------------------------------------------

type Metric = Static<typeof MetricSchema>;
type Fields = Static<typeof UpdateMetricBody>;
type Definition = Pick<Fields, "event" | "property" | "filters" | "numerator" | "denominator">;
type MetricKind = NonNullable<Fields["kind"]>;
type PartKind = NonNullable<Fields["numerator"]>["kind"];

/** The metric routes, typed from their own schemas. */
const metrics = (client: SvcClient) => client.api<ReturnType<typeof metricRoutes>>().api.admin.metrics;

/** Every kind, with what it measures (a Record, so a kind the server adds is a compile error here). */
const KINDS: Record<MetricKind, string> = {
  count: "events",
  sum: "a numeric property, or the event's value",
  unique: "distinct units",
  ratio: "numerator / denominator",
};
const KIND_NAMES = Object.keys(KINDS) as MetricKind[];
const PART_KIND_NAMES = KIND_NAMES.filter((k) => k !== "ratio") as PartKind[];

/** Filter operators, with the symbols also understood. */
const OPS: Record<FilterOp, string[]> = { eq: ["=", "=="], neq: ["!="], gt: [">"], gte: [">="], lt: ["<"], lte: ["<="] };
const OP_NAMES = Object.keys(OPS) as FilterOp[];
const opOf = (word: string) => OP_NAMES.find((op) => op === word.toLowerCase() || OPS[op].includes(word));

const FILTER_HELP = `'PROPERTY OP VALUE', OP one of ${OP_NAMES.join(", ")} (or = != > >= < <=); VALUE a number, true, false or text ("42" in quotes is text)`;

/** `country eq de`, `amount >= 10`, `plan != "pro"`, `beta = true`. */
export function filterOf(text: string, flag: string): PropertyFilter {
  const fail = (why: string): never => {
    throw new UsageError(`--${flag} ${JSON.stringify(text)}: ${why}; write it as ${FILTER_HELP}`);
  };
  const m = /^\s*([A-Za-z0-9_.:$-]+)\s*(==|!=|>=|<=|=|>|<)\s*(.*?)\s*$/s.exec(text) ?? /^\s*(\S+)\s+(\S+)\s+(.*?)\s*$/s.exec(text);
  if (!m) return fail("a property, an operator and a value are needed");
  const [, property, opWord, raw] = m as unknown as [string, string, string, string];
  const op = opOf(opWord);
  if (!op) return fail(`unknown operator "${opWord}"`);
  if (raw === "") return fail("the value is missing");
  let value: string | number | boolean;
  const quoted = /^"(.*)"$|^'(.*)'$/s.exec(raw);
  if (quoted) value = quoted[1] ?? quoted[2] ?? "";
  else if (raw === "true" || raw === "false") value = raw === "true";
  else if (/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) value = Number(raw);
  else value = raw;
  if (["gt", "gte", "lt", "lte"].includes(op) && typeof value !== "number") fail(`${op} compares numbers, and ${JSON.stringify(value)} is not one`);
  return { property, op, value };
}

const filtersFlag = (values: ArgValues, flag: string) => list(values, flag).map((f) => filterOf(f, flag));

/** `--numerator 'unique checkout.completed'`, `--numerator 'sum checkout.completed amount'`. */
function partOf(values: ArgValues, flag: "numerator" | "denominator"): { kind: PartKind; event: string; property?: string; filters: PropertyFilter[] } | undefined {
  const text = str(values, flag);
  const filters = filtersFlag(values, `${flag}-filter`);
  if (text === undefined) {
    if (filters.length) throw new UsageError(`--${flag}-filter needs --${flag} 'KIND EVENT [PROPERTY]' (it is saved whole)`);
    return undefined;
  }
  const words = text.trim().split(/\s+/);
  const kind = words[0] as PartKind;
  if (words.length < 2 || words.length > 3 || !PART_KIND_NAMES.includes(kind)) {
    throw new UsageError(`--${flag} must be 'KIND EVENT [PROPERTY]', KIND one of ${PART_KIND_NAMES.join(", ")}: --${flag} 'unique checkout.completed' or 'sum checkout.completed amount' (got "${text}")`);
  }
  if (words[2] !== undefined && kind !== "sum") throw new UsageError(`--${flag} '${text}': only a sum adds up a property (a ${kind} takes none)`);
  return { kind, event: words[1]!, ...(words[2] !== undefined ? { property: words[2] } : {}), filters };
}

function kindFlag(value: unknown): MetricKind {
  return oneOf(value, KIND_NAMES, "--kind");
}

const RATIO_FLAGS = ["numerator", "denominator", "numerator-filter", "denominator-filter"];
const SINGLE_FLAGS = ["event", "property", "filter"];
const given = (values: ArgValues, names: string[]) => names.filter((n) => values[n] !== undefined && !(Array.isArray(values[n]) && (values[n] as string[]).length === 0));

/**
 * The definition flags as the API's fields. `kind` is the kind the metric
 * will have (create: --kind; update: --kind or the stored one), so that a
 * flag of the other shape is refused before anything is sent.
 */
function definitionFields(values: ArgValues, kind: MetricKind | undefined): Definition {
  const body: Definition = {};
  if (kind === "ratio") {
    const wrong = given(values, SINGLE_FLAGS);
    if (wrong.length) throw new UsageError(`a ratio takes --numerator and --denominator, not --${wrong[0]} (filters go in --numerator-filter and --denominator-filter)`);
    const numerator = partOf(values, "numerator");
    const denominator = partOf(values, "denominator");
    if (numerator) body.numerator = numerator;
    if (denominator) body.denominator = denominator;
    return body;
  }
  const wrong = given(values, RATIO_FLAGS);
  if (wrong.length) throw new UsageError(`--${wrong[0]} is for --kind ratio only`);
  const event = str(values, "event");
  if (event !== undefined) body.event = event;
  const property = str(values, "property");
  if (property !== undefined) {
    if (property !== "" && kind !== undefined && kind !== "sum") throw new UsageError(`--property is for --kind sum only (the property it adds up); a ${kind} takes none`);
    body.property = property === "" ? null : property;
  }
  const filters = filtersFlag(values, "filter");
  if (filters.length) body.filters = filters;
  return body;
}

const DEFINITION_FLAGS = {
  event: { type: "string", value: "EVENT", help: "count, sum, unique: the catalogued event measured (`svc events list`)" },
  property: { type: "string", value: "NAME", help: "sum only: the numeric property added up (default: the event's value)" },
  filter: { type: "string", value: "FILTER", multiple: true, help: `Only events that match: ${FILTER_HELP}; all must hold` },
  numerator: { type: "string", value: "PART", help: "ratio only: 'KIND EVENT [PROPERTY]', e.g. 'unique checkout.completed' or 'sum checkout.completed amount'" },
  "numerator-filter": { type: "string", value: "FILTER", multiple: true, help: "ratio only: a filter of the numerator, as --filter" },
  denominator: { type: "string", value: "PART", help: "ratio only: 'KIND EVENT [PROPERTY]' (a bucket where it is 0 gives 0)" },
  "denominator-filter": { type: "string", value: "FILTER", multiple: true, help: "ratio only: a filter of the denominator, as --filter" },
} satisfies Flags;

const DESCRIPTION_FLAG: Flag = { type: "string", value: "TEXT", help: "What it measures, shown in lists (an empty one clears it)" };

const filterText = (f: Metric["filters"][number]) => `${f.property} ${f.op} ${JSON.stringify(f.value)}`;

/** `count of checkout.completed where country eq "de"`. */
function partText(p: Pick<NonNullable<Metric["numerator"]>, "kind" | "event" | "property" | "filters">): string {
  const what = p.kind === "count" ? `count of ${p.event}` : p.kind === "unique" ? `unique units of ${p.event}` : p.property ? `sum of ${p.event} ${p.property}` : `sum of ${p.event} value`;
  return p.filters.length ? `${what} where ${p.filters.map(filterText).join(" and ")}` : what;
}

/** What a metric measures, in one line. */
export function measureText(m: Metric): string {
  if (m.kind === "ratio" && m.numerator && m.denominator) return `(${partText(m.numerator)}) / (${partText(m.denominator)})`;
  return partText({ kind: m.kind, event: m.event ?? "?", property: m.property, filters: m.filters });
}

function metricText(m: Metric): string {
  return [
    `${m.name} (${m.id})`,
    `  kind:        ${m.kind} (${KINDS[m.kind as MetricKind] ?? m.kind})`,
    `  measures:    ${measureText(m)}`,
    `  description: ${m.description ?? "-"}`,
    `  created:     ${when(m.createdAt)}`,
    `  updated:     ${when(m.updatedAt)}`,
  ].join("\n");
}

/** A series refused because the stored metric no longer compiles says how to fix it with the CLI. */
async function seriesOf(client: SvcClient, ref: string, window: Window, name = ref): Promise<Series> {
  try {
    return await dataOf(metrics(client)({ id: seg(ref) }).series.post(window));
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 422) {
      const detail = `${err.detail ? `${err.detail}. ` : ""}Register what it names again (\`svc events create\` or \`svc events update --property\`), or change the metric with \`svc metrics update ${name}\`.`;
      const again = new ApiRequestError(err.status, err.code, err.message.replace(/ \(PATCH\)/, ""), detail);
      again.context = err.context;
      throw again;
    }
    throw err;
  }
}

export const metricsCommand: Command = {
  name: "metrics",
  summary: "Metrics over the project's events: list, get, create, update, delete, series",
  details: [
    "A metric counts a catalogued event, adds up one of its numeric properties (or the event's value), counts distinct units, or divides two of those (ratio). Filters keep only the events whose properties match.",
  ],
  examples: [
    "svc metrics create checkouts --kind count --event checkout.completed",
    "svc metrics create conversion --kind ratio --numerator 'unique checkout.completed' --denominator 'unique cart.viewed'",
    "svc metrics series checkouts --from 7d --bucket 1d",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's metrics and what each measures",
      examples: ["svc metrics list", "svc metrics list --query revenue --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(metrics(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No metrics match "${q}".` : "No metrics yet; define one with `svc metrics create <name> --kind count --event EVENT`.";
          return table(
            ["NAME", "KIND", "MEASURES", "DESCRIPTION"],
            all.map((m) => [m.name, m.kind, measureText(m), m.description]),
            { full: ["NAME", "MEASURES"] },
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one metric: kind, what it measures, description",
      args: ["<name>"],
      examples: ["svc metrics get checkouts", "svc metrics get met_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const m = await dataOf(metrics(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, m, () => metricText(m));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Define a metric over catalogued events (every event and property it names must be in the catalog)",
      args: ["<name>"],
      details: [
        `Kinds: ${KIND_NAMES.map((k) => `${k} (${KINDS[k]})`).join(", ")}. A ratio has --numerator and --denominator, each 'KIND EVENT [PROPERTY]' with its own --numerator-filter / --denominator-filter.`,
      ],
      examples: [
        "svc metrics create checkouts --kind count --event checkout.completed --description 'Completed checkouts'",
        "svc metrics create revenue-de --kind sum --event checkout.completed --property amount --filter 'country eq de'",
        "svc metrics create conversion --kind ratio --numerator 'unique checkout.completed' --denominator 'unique cart.viewed' --json",
      ],
      flags: {
        kind: { type: "string", value: "KIND", help: `${KIND_NAMES.join(", ")} (required)` },
        ...DEFINITION_FLAGS,
        description: DESCRIPTION_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        if (values.kind === undefined) throw new UsageError(`--kind is required: one of ${KIND_NAMES.join(", ")}`);
        const kind = kindFlag(values.kind);
        const body: Static<typeof CreateMetricBody> = { name: positionals[0]!, kind, ...definitionFields(values, kind) };
        if (kind === "ratio" && (!body.numerator || !body.denominator)) {
          throw new UsageError("a ratio needs --numerator 'KIND EVENT [PROPERTY]' and --denominator 'KIND EVENT [PROPERTY]'");
        }
        if (kind !== "ratio" && body.event === undefined) throw new UsageError(`--event EVENT is required: the catalogued event a ${kind} measures (\`svc events list\` shows them)`);
        const description = str(values, "description");
        if (description) body.description = description;
        const m = await dataOf(metrics(openClient(values)).post(body));
        emit(values.json, m, () => `Created metric ${m.name} (${m.id}): ${measureText(m)}.\nSee its values with \`svc metrics series ${m.name}\`.`);
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change a metric's definition, name or description (saving it checks it against today's catalog)",
      args: ["<name>"],
      details: [
        "Only the flags given change; --filter replaces the filters (--clear-filters removes them), --numerator or --denominator replaces that part whole. Another --kind starts the definition afresh from the flags given. Saving a metric whose series answers 422 (an event or property left the catalog) makes it work again once its definition matches the catalog.",
      ],
      examples: ["svc metrics update checkouts --filter 'test != true'", "svc metrics update revenue --kind sum --event checkout.completed --property amount --json", "svc metrics update checkouts --rename orders"],
      flags: {
        kind: { type: "string", value: "KIND", help: `New kind: ${KIND_NAMES.join(", ")}` },
        ...DEFINITION_FLAGS,
        "clear-filters": { type: "boolean", help: "Remove every filter of the metric" },
        description: DESCRIPTION_FLAG,
        rename: { type: "string", value: "NAME", help: "A new name (alert rules keep following it: they hold its id)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const kind = values.kind === undefined ? undefined : kindFlag(values.kind);
        if (values["clear-filters"] && given(values, ["filter"]).length) throw new UsageError("--filter and --clear-filters cannot both be given");
        const client = openClient(values);
        // Without --kind, the flags must fit the kind the metric has.
        const shapeFlags = given(values, [...SINGLE_FLAGS, ...RATIO_FLAGS]);
        // The stored kind is one of the kinds (the answer types it as text).
        const effective = kind ?? (shapeFlags.length ? ((await dataOf(metrics(client)({ id: seg(name) }).get())).kind as MetricKind) : undefined);
        const body: Fields = definitionFields(values, effective);
        if (kind) body.kind = kind;
        if (values["clear-filters"]) body.filters = [];
        const description = str(values, "description");
        if (description !== undefined) body.description = description === "" ? null : description;
        const rename = str(values, "rename");
        if (rename !== undefined) body.name = rename;
        if (Object.keys(body).length === 0) {
          throw new UsageError("nothing to change: give at least one of --kind, --event, --property, --filter, --clear-filters, --numerator, --denominator, --description, --rename");
        }
        const m = await dataOf(metrics(client)({ id: seg(name) }).patch(body));
        emit(values.json, m, () => `Updated metric ${m.name}:\n${metricText(m).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a metric (refused while an alert rule uses it: delete those rules in the dashboard first)",
      examples: ["svc metrics delete old-metric", "svc metrics delete old-metric --yes --json"],
      question: (name) => `Delete metric ${name}? Stored events stay.`,
      remove: async (client, name) => await dataOf(metrics(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted metric ${name}.`],
    }),
    {
      name: "series",
      summary: "A metric's values over time: a table of buckets and a sparkline (--json: the server's {sql, rows})",
      args: ["<name>"],
      details: [
        "Buckets start at --from and are --bucket wide; every bucket is listed, empty ones 0. Times back from now (24h, 7d) and the defaults are rounded to whole buckets of the UTC clock, so the last bucket is the current one, still filling.",
      ],
      examples: ["svc metrics series checkouts", "svc metrics series checkouts --from 7d --bucket 1d", "svc metrics series conversion --from 2026-11-01 --to 2026-11-08 --bucket 1d --json"],
      flags: { ...WINDOW_FLAGS, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const window = windowFlags(values);
        const client = openClient(values);
        if (values.json) {
          emit(true, await seriesOf(client, name, window), () => "");
          return 0;
        }
        const metric = await dataOf(metrics(client)({ id: seg(name) }).get());
        const series = await seriesOf(client, metric.id, window, metric.name);
        emit(false, series, () => seriesText(`${metric.name} (${measureText(metric)})`, window, series.rows, { total: metric.kind !== "ratio" }));
        return 0;
      },
    },
  ],
};
