import { FILTER_OPS, type FilterOp, type Measure, type PropertyFilter } from "../../lib/eventstore/types";
import { ApiError, validation } from "../../lib/errors";
import { EVENT_NAME, PROPERTY_NAME } from "../events/service";

// Metric definitions: their shape (checked when saved), and their compilation into the event store's
// `Measure`s against the event catalog (when saved: 400 naming the field; when run: 422, re-save it).
// Pure: the catalog entries come in as a lookup, so the service fetches them and the tests make them up.

export const METRIC_KINDS = ["count", "sum", "unique", "ratio"] as const;
export type MetricKind = (typeof METRIC_KINDS)[number];
/** What a ratio's numerator and denominator measure (no nested ratios). */
export const PART_KINDS = ["count", "sum", "unique"] as const;
export type PartKind = (typeof PART_KINDS)[number];

export const FILTERS_MAX = 20;
export const FILTER_TEXT_MAX = 1000;
export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;

/** Operators that order values: they compare numbers only. */
const ORDERING_OPS: readonly FilterOp[] = ["gt", "gte", "lt", "lte"];

/** One measured series: count of events, sum of a numeric property (absent: the event's value), or distinct units. */
export type MetricPart = { kind: PartKind; event: string; property?: string; filters: PropertyFilter[] };

/** A metric as stored: one part for count/sum/unique, numerator and denominator for a ratio. */
export type MetricDefinition =
  | { kind: PartKind; event: string; property?: string; filters: PropertyFilter[] }
  | { kind: "ratio"; numerator: MetricPart; denominator: MetricPart };

/** A definition as a client sends it (create, or create merged with a PATCH): anything may be missing or null. */
export type DefinitionInput = {
  kind: string;
  event?: string | null;
  property?: string | null;
  filters?: unknown[] | null;
  numerator?: unknown;
  denominator?: unknown;
};

/** What the compiler needs of a catalog event. */
export type CatalogEntry = { name: string; properties: { name: string; type: string }[] };
export type CatalogLookup = (event: string) => CatalogEntry | undefined;

type Problem = { field: string; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function checkFilters(filters: unknown, field: string, problems: Problem[]): PropertyFilter[] {
  if (filters === undefined || filters === null) return [];
  if (!Array.isArray(filters)) {
    problems.push({ field, message: "a list of {property, op, value}" });
    return [];
  }
  if (filters.length > FILTERS_MAX) problems.push({ field, message: `at most ${FILTERS_MAX} filters` });
  const out: PropertyFilter[] = [];
  filters.forEach((f, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(f)) return problems.push({ field: at, message: "an object {property, op, value}" });
    const extra = Object.keys(f).filter((k) => k !== "property" && k !== "op" && k !== "value");
    if (extra.length) problems.push({ field: `${at}.${extra[0]}`, message: "is not a field of a filter" });
    const { property, op, value } = f;
    if (typeof property !== "string" || !PROPERTY_NAME.test(property)) problems.push({ field: `${at}.property`, message: "1 to 128 letters, digits, _ . : $ or -" });
    if (typeof op !== "string" || !(FILTER_OPS as readonly string[]).includes(op)) problems.push({ field: `${at}.op`, message: `one of ${FILTER_OPS.join(", ")}` });
    if (typeof value === "string") {
      if (value.length > FILTER_TEXT_MAX) problems.push({ field: `${at}.value`, message: `at most ${FILTER_TEXT_MAX} characters` });
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) problems.push({ field: `${at}.value`, message: "a finite number" });
    } else if (typeof value !== "boolean") {
      problems.push({ field: `${at}.value`, message: "a string, number or boolean" });
    }
    if (typeof op === "string" && ORDERING_OPS.includes(op as FilterOp) && typeof value !== "number") {
      problems.push({ field: `${at}.value`, message: `${op} compares numbers: give a number` });
    }
    if (typeof property === "string" && typeof op === "string" && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) {
      out.push({ property, op: op as FilterOp, value });
    }
  });
  return out;
}

function checkEvent(event: unknown, field: string, problems: Problem[]): string {
  if (typeof event !== "string" || event === "") {
    problems.push({ field, message: "the catalogued event it measures is required" });
    return "";
  }
  if (!EVENT_NAME.test(event)) problems.push({ field, message: "1 to 128 letters, digits, _ . : or -, not starting with $" });
  return event;
}

function checkPart(input: unknown, field: string, problems: Problem[]): MetricPart | undefined {
  if (!isObject(input)) {
    problems.push({ field, message: "a ratio has a numerator and a denominator, each {kind, event, property?, filters?}" });
    return undefined;
  }
  const extra = Object.keys(input).filter((k) => !["kind", "event", "property", "filters"].includes(k));
  if (extra.length) problems.push({ field: `${field}.${extra[0]}`, message: "is not a field of a ratio's part" });
  const kind = input.kind;
  if (typeof kind !== "string" || !(PART_KINDS as readonly string[]).includes(kind)) {
    problems.push({ field: `${field}.kind`, message: kind === "ratio" ? "count, sum or unique (ratios do not nest)" : "count, sum or unique" });
    return undefined;
  }
  return checkSingle(kind as PartKind, input, field, problems);
}

function checkSingle(kind: PartKind, input: { event?: unknown; property?: unknown; filters?: unknown }, prefix: string, problems: Problem[]): MetricPart {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const event = checkEvent(input.event, at("event"), problems);
  const filters = checkFilters(input.filters, at("filters"), problems);
  const part: MetricPart = { kind, event, filters };
  if (input.property !== undefined && input.property !== null) {
    if (kind !== "sum") problems.push({ field: at("property"), message: `only a sum adds up a property (a ${kind} takes none)` });
    else if (typeof input.property !== "string" || !PROPERTY_NAME.test(input.property)) problems.push({ field: at("property"), message: "1 to 128 letters, digits, _ . : $ or -" });
    else part.property = input.property;
  }
  return part;
}

function refuse(problems: Problem[]): never {
  throw validation(`Invalid metric definition: ${problems[0]!.field}: ${problems[0]!.message}`, problems.map((p) => `${p.field}: ${p.message}`).join("; "));
}

/**
 * The shape of a definition (no catalog yet): a count, sum or unique names
 * its event (a sum may name the numeric property it adds up), a ratio has a
 * numerator and a denominator and nothing else. 400 VALIDATION naming every
 * failing field.
 */
export function checkDefinition(input: DefinitionInput): MetricDefinition {
  const problems: Problem[] = [];
  let definition: MetricDefinition | undefined;
  if (input.kind === "ratio") {
    for (const field of ["event", "property", "filters"] as const) {
      const v = input[field];
      if (v !== undefined && v !== null && !(field === "filters" && Array.isArray(v) && v.length === 0)) {
        problems.push({ field, message: "a ratio takes none: give it to the numerator or the denominator" });
      }
    }
    const numerator = checkPart(input.numerator, "numerator", problems);
    const denominator = checkPart(input.denominator, "denominator", problems);
    if (numerator && denominator) definition = { kind: "ratio", numerator, denominator };
  } else if ((PART_KINDS as readonly string[]).includes(input.kind)) {
    for (const field of ["numerator", "denominator"] as const) {
      if (input[field] !== undefined && input[field] !== null) problems.push({ field, message: `only a ratio has one (this metric is a ${input.kind})` });
    }
    definition = checkSingle(input.kind as PartKind, input, "", problems);
  } else {
    problems.push({ field: "kind", message: "count, sum, unique or ratio" });
  }
  if (problems.length > 0 || !definition) refuse(problems);
  return definition;
}

/** The catalog events a definition measures, each once. */
export function referencedEvents(definition: MetricDefinition): string[] {
  const parts = definition.kind === "ratio" ? [definition.numerator, definition.denominator] : [definition];
  return [...new Set(parts.map((p) => p.event))];
}

function catalogProblems(part: MetricPart, prefix: string, catalog: CatalogLookup): Problem[] {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const entry = catalog(part.event);
  if (!entry) return [{ field: at("event"), message: `event ${part.event} is not in the event catalog` }];
  const properties = new Map(entry.properties.map((p) => [p.name, p.type]));
  const problems: Problem[] = [];
  if (part.property !== undefined) {
    const type = properties.get(part.property);
    if (type === undefined) problems.push({ field: at("property"), message: `property ${part.property} is not a catalogued property of event ${part.event}` });
    else if (type !== "number") problems.push({ field: at("property"), message: `property ${part.property} of event ${part.event} is a ${type}; a sum adds up a number` });
  }
  part.filters.forEach((f, i) => {
    if (!properties.has(f.property)) problems.push({ field: `${at("filters")}[${i}].property`, message: `property ${f.property} is not a catalogued property of event ${part.event}` });
  });
  return problems;
}

function toMeasure(part: MetricPart): Measure {
  const filters = part.filters.map((f) => ({ property: f.property, op: f.op, value: f.value }));
  if (part.kind === "sum") return part.property === undefined ? { kind: "sum", event: part.event, filters } : { kind: "sum", event: part.event, property: part.property, filters };
  return { kind: part.kind, event: part.event, filters };
}

/**
 * A definition against the catalog, as the metric is saved: every event it
 * measures is catalogued, and every property it names (the summed one, the
 * filtered ones) is among that event's catalogued properties (a summed one
 * of a numeric type). 400 VALIDATION naming each failing field.
 */
export function checkAgainstCatalog(definition: MetricDefinition, catalog: CatalogLookup): void {
  const problems = definitionParts(definition).flatMap(([part, prefix]) => catalogProblems(part, prefix, catalog));
  if (problems.length > 0) refuse(problems);
}

/**
 * A stored definition into the event store's measures (one, or a ratio's
 * numerator and denominator), checked against today's catalog as in
 * `checkAgainstCatalog`. What a stored metric names may since have left
 * the catalog: then 422 VALIDATION, saying what is gone and that the metric
 * must be re-saved. Values stay values: the event store binds them.
 */
export function compile(metricName: string, definition: MetricDefinition, catalog: CatalogLookup): Measure[] {
  const problems = definitionParts(definition).flatMap(([part, prefix]) => catalogProblems(part, prefix, catalog));
  if (problems.length > 0) {
    const what = problems.map((p) => `${p.field}: ${p.message}`).join("; ");
    throw new ApiError(
      "VALIDATION",
      `Metric ${metricName} cannot be compiled: ${problems[0]!.message}. Re-save the metric (PATCH) once its definition matches the event catalog`,
      what,
      422,
    );
  }
  return definitionParts(definition).map(([part]) => toMeasure(part));
}

function definitionParts(definition: MetricDefinition): [MetricPart, string][] {
  return definition.kind === "ratio"
    ? [
        [definition.numerator, "numerator"],
        [definition.denominator, "denominator"],
      ]
    : [[definition, ""]];
}

/**
 * A ratio's series from its numerator's and denominator's, bucket by bucket
 * (0 where the denominator is 0).
 */
export function divideRows(numerator: { t: number; v: number }[], denominator: { t: number; v: number }[]): { t: number; v: number }[] {
  const below = new Map(denominator.map((r) => [r.t, r.v]));
  return numerator.map((r) => {
    const d = below.get(r.t) ?? 0;
    return { t: r.t, v: d === 0 ? 0 : r.v / d };
  });
}
