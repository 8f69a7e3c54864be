import { apiOf } from "../../../web/dashboard/api";
import { GATE_OPS, type GateCondition, type GateOp, type GateRule } from "../../../sdk/gates";
import type { gateRoutes } from "../routes";

export const gateApi = apiOf<ReturnType<typeof gateRoutes>>();
export { ENVS, type Env } from "../../../lib/envs";
export { GATE_OPS };
export type { GateOp, GateRule };

/** How each operator reads in the editor's select (the operator's own name first: it is what the API, CLI and docs say). */
export const OP_LABELS: Record<GateOp, string> = {
  eq: "eq: equals",
  neq: "neq: does not equal",
  in: "in: is one of",
  not_in: "not_in: is none of",
  contains: "contains",
  starts_with: "starts_with",
  ends_with: "ends_with",
  regex: "regex: matches an RE2 pattern",
  gt: "gt: greater than",
  gte: "gte: at least",
  lt: "lt: less than",
  lte: "lte: at most",
  semver_eq: "semver_eq: version equals",
  semver_gt: "semver_gt: version after",
  semver_gte: "semver_gte: version at least",
  semver_lt: "semver_lt: version before",
  semver_lte: "semver_lte: version at most",
  before: "before: date before",
  after: "after: date after",
  exists: "exists: is set",
  not_exists: "not_exists: is not set",
  passes_gate: "passes_gate: another gate is on",
  fails_gate: "fails_gate: another gate is off",
  in_segment: "in_segment: in a segment",
  not_in_segment: "not_in_segment: not in a segment",
};

export type ValueKind = "none" | "list" | "number" | "text";

/** What kind of value an operator takes in the editor. */
export function valueKind(op: GateOp): ValueKind {
  if (op === "exists" || op === "not_exists") return "none";
  if (op === "in" || op === "not_in") return "list";
  if (op === "gt" || op === "gte" || op === "lt" || op === "lte") return "number";
  return "text";
}

/** A hint shown under the value, per operator. */
export function valueHint(op: GateOp): string | undefined {
  if (op === "in" || op === "not_in") return "Comma-separated list";
  if (op === "regex") return "RE2 pattern, e.g. ^ana@";
  if (op.startsWith("semver_")) return "A version, e.g. 2.4.0";
  if (op === "before" || op === "after") return "An ISO date, e.g. 2026-06-01";
  if (op === "passes_gate" || op === "fails_gate") return "Another gate's name";
  return undefined;
}

let nextKey = 0;
const newKey = () => ++nextKey;

/** A condition as the editor holds it: the value as typed; `original` kept so an untouched value goes back as it was (a number stays a number). */
export type DraftCondition = { key: number; attr: string; op: GateOp; text: string; original: { op: GateOp; text: string; value: unknown } | null };
export type DraftRule = { key: number; name: string; percentage: string; unit: string; conditions: DraftCondition[] };

/** The text the editor shows for a stored value. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map((v) => String(v)).join(", ");
  return String(value);
}

export function toDraftCondition(c: GateCondition): DraftCondition {
  const text = valueText(c.value);
  return { key: newKey(), attr: c.attr, op: c.op, text, original: { op: c.op, text, value: c.value } };
}

export function toDraft(rules: GateRule[]): DraftRule[] {
  return rules.map((r) => ({ key: newKey(), name: r.name ?? "", percentage: String(r.passPercentage), unit: r.unit ?? "", conditions: r.conditions.map(toDraftCondition) }));
}

export function emptyCondition(): DraftCondition {
  return { key: newKey(), attr: "", op: "eq", text: "", original: null };
}

export function emptyRule(): DraftRule {
  return { key: newKey(), name: "", percentage: "100", unit: "", conditions: [] };
}

/**
 * The value sent for a condition. Only the shape is made here (a list from
 * commas, a number from a number field): the server is the one validator, and
 * what it refuses comes back naming the rule and field.
 */
function conditionValue(c: DraftCondition): unknown {
  if (c.original && c.original.op === c.op && c.original.text === c.text) return c.original.value;
  const text = c.text.trim();
  switch (valueKind(c.op)) {
    case "none":
      return undefined;
    case "list":
      return text
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
    case "number":
      return text !== "" && Number.isFinite(Number(text)) ? Number(text) : c.text;
    default:
      // Patterns keep their spaces; other text is trimmed.
      return c.op === "regex" ? c.text : text;
  }
}

/** The rule list to publish, from the editor's draft. */
export function fromDraft(draft: DraftRule[]): GateRule[] {
  return draft.map((r) => {
    const pct = r.percentage.trim();
    const rule: GateRule = {
      conditions: r.conditions.map((c) => {
        const value = conditionValue(c);
        return value === undefined ? { attr: c.attr.trim(), op: c.op } : { attr: c.attr.trim(), op: c.op, value };
      }),
      // Anything but a number goes as typed, for the server to refuse by name.
      passPercentage: (pct !== "" && Number.isFinite(Number(pct)) ? Number(pct) : pct) as number,
    };
    if (r.name.trim()) rule.name = r.name.trim();
    if (r.unit.trim()) rule.unit = r.unit.trim();
    return rule;
  });
}

/** Where a VALIDATION detail points: `rules[1].conditions[0].value` (the service) or `rules.1.passPercentage` (the schema). 0-based. */
export type FieldRef = { rule: number; condition?: number; field?: string; path: string; message: string };

export function fieldOfDetail(detail: string | undefined): FieldRef | null {
  if (!detail) return null;
  const m = /(rules(?:\[(\d+)\]|\.(\d+))(?:\.conditions(?:\[(\d+)\]|\.(\d+)))?(?:\.([A-Za-z]+))?(?:\[\d+\])?)\s*:\s*([\s\S]*?)(?=; rules|$)/.exec(detail);
  if (!m) return null;
  const rule = Number(m[2] ?? m[3]);
  const condition = m[4] ?? m[5];
  return { rule, condition: condition === undefined ? undefined : Number(condition), field: m[6], path: m[1]!, message: m[7]!.trim() };
}

/** "rule 2, condition 1, value" for a FieldRef (1-based, as the editor's labels say). */
export function describeField(ref: FieldRef): string {
  const parts = [`rule ${ref.rule + 1}`];
  if (ref.condition !== undefined) parts.push(`condition ${ref.condition + 1}`);
  if (ref.field) parts.push(ref.field === "passPercentage" ? "pass percentage" : ref.field === "op" ? "operator" : ref.field === "attr" ? "attribute" : ref.field);
  return parts.join(", ");
}

/** One line per rule for tables: `email ends_with "@acme.com" and country in [de] → 20%`. */
export function ruleSummary(rule: GateRule): string {
  const conditions = rule.conditions.map((c) => (c.value === undefined ? `${c.attr} ${c.op}` : `${c.attr} ${c.op} ${JSON.stringify(c.value)}`)).join(" and ");
  return `${rule.name ? `${rule.name}: ` : ""}${conditions || "everyone"} → ${rule.passPercentage}%${rule.unit ? ` by ${rule.unit}` : ""}`;
}

export function rulesCount(n: number): string {
  return n === 1 ? "1 rule" : `${n} rules`;
}
