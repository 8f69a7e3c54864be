import { apiOf, call } from "../../../web/dashboard/api";
import type { metricRoutes } from "../routes";

export const metricApi = apiOf<ReturnType<typeof metricRoutes>>();

export type Metric = NonNullable<Awaited<ReturnType<typeof metricApi.api.admin.metrics.get>>["data"]>[number];
export type MetricFilter = Metric["filters"][number];
type MetricPart = NonNullable<Metric["numerator"]>;

/** The server's kinds and filter operators (the page does not import server code). */
export const KINDS = ["count", "sum", "unique", "ratio"] as const;
export type Kind = (typeof KINDS)[number];
export const PART_KINDS = ["count", "sum", "unique"] as const;
export type PartKind = (typeof PART_KINDS)[number];
export const FILTER_OPS = ["eq", "neq", "gt", "gte", "lt", "lte"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const KIND_LABELS: Record<Kind, string> = {
  count: "count: how many times the event happened",
  sum: "sum: adds up a numeric property (or the event's value)",
  unique: "unique: distinct units (users, accounts) that sent it",
  ratio: "ratio: one measure divided by another",
};
export const OP_LABELS: Record<FilterOp, string> = { eq: "eq: equals", neq: "neq: does not equal", gt: "gt: greater than", gte: "gte: at least", lt: "lt: less than", lte: "lte: at most" };

export const loadMetrics = () => call(metricApi.api.admin.metrics.get({ query: {} }));

const filterText = (f: MetricFilter) => `${f.property} ${f.op} ${JSON.stringify(f.value)}`;
function partSummary(p: { kind: string; event: string | null; property: string | null; filters: MetricFilter[] }): string {
  const what = p.kind === "sum" ? `sum of ${p.property ?? "value"} of ${p.event}` : p.kind === "unique" ? `unique units of ${p.event}` : `count of ${p.event}`;
  return p.filters.length ? `${what} where ${p.filters.map(filterText).join(" and ")}` : what;
}

/** One line per metric: `sum of amount of checkout where country eq "de"`, a ratio as `(…) / (…)`. */
export function metricSummary(m: Metric): string {
  if (m.kind === "ratio" && m.numerator && m.denominator) return `(${partSummary(m.numerator)}) / (${partSummary(m.denominator)})`;
  return partSummary(m);
}

// The editor's rows.
let nextKey = 0;
export type DraftFilter = { key: number; property: string; op: FilterOp; text: string };
export type DraftPart = { kind: PartKind; event: string; property: string; filters: DraftFilter[] };
export type MetricForm = { name: string; description: string; kind: Kind; main: DraftPart; numerator: DraftPart; denominator: DraftPart };

export const emptyFilter = (): DraftFilter => ({ key: ++nextKey, property: "", op: "eq", text: "" });
const emptyPart = (kind: PartKind = "count"): DraftPart => ({ kind, event: "", property: "", filters: [] });
const asOp = (op: string): FilterOp => ((FILTER_OPS as readonly string[]).includes(op) ? (op as FilterOp) : "eq");
const asPartKind = (kind: string): PartKind => ((PART_KINDS as readonly string[]).includes(kind) ? (kind as PartKind) : "count");

function draftPart(p: MetricPart | { kind: string; event: string | null; property: string | null; filters: MetricFilter[] }): DraftPart {
  return { kind: asPartKind(p.kind), event: p.event ?? "", property: p.property ?? "", filters: p.filters.map((f) => ({ key: ++nextKey, property: f.property, op: asOp(f.op), text: String(f.value) })) };
}

export function formOf(m: Metric | null): MetricForm {
  if (!m) return { name: "", description: "", kind: "count", main: emptyPart(), numerator: emptyPart(), denominator: emptyPart() };
  const kind = (KINDS as readonly string[]).includes(m.kind) ? (m.kind as Kind) : "count";
  return {
    name: m.name,
    description: m.description ?? "",
    kind,
    main: kind === "ratio" ? emptyPart() : draftPart(m),
    numerator: m.numerator ? draftPart(m.numerator) : emptyPart(),
    denominator: m.denominator ? draftPart(m.denominator) : emptyPart(),
  };
}

/** A filter's value as sent: a number for a numeric property or comparison, a boolean for a boolean property; anything unparsable as typed, for the server to refuse by name. */
function filterValue(f: DraftFilter, type: string | undefined): string | number | boolean {
  const text = f.text.trim();
  if (type === "boolean" && (text === "true" || text === "false")) return text === "true";
  if ((type === "number" || (f.op !== "eq" && f.op !== "neq")) && text !== "" && Number.isFinite(Number(text))) return Number(text);
  return f.text;
}

type PropertyTypes = (event: string) => Map<string, string>;

export function partBody(p: DraftPart, kind: PartKind, types: PropertyTypes) {
  const known = types(p.event);
  return {
    event: p.event,
    property: kind === "sum" && p.property ? p.property : null,
    filters: p.filters.map((f) => ({ property: f.property, op: f.op, value: filterValue(f, known.get(f.property)) })),
  };
}

/** The request fields a refusal's detail may name, for errorsByPath (web/dashboard/ui.tsx). */
export const METRIC_FIELDS = ["name", "description", "kind", "event", "property", "filters", "numerator", "denominator"] as const;
