import { notFound, validation } from "../../lib/errors";
import { compileRegex } from "../../lib/re2";
import { CONTROL_CHARS, NAME_UNSAFE_CHARS } from "../../lib/validate";
import { GATE_OPS, type GateCondition, type GateOp, type GateRule, parseSemver } from "../../sdk/gates";
import { CONDITIONS_MAX, LIST_VALUES_MAX, RULES_MAX, TEXT_VALUE_MAX } from "./types";


const ATTR = /^[A-Za-z0-9_.:$-]{1,128}$/;
const TEXT_OPS: readonly GateOp[] = ["contains", "starts_with", "ends_with"];
const NUMBER_OPS: readonly GateOp[] = ["gt", "gte", "lt", "lte"];
const SEMVER_OPS: readonly GateOp[] = ["semver_eq", "semver_gt", "semver_gte", "semver_lt", "semver_lte"];
const DATE_OPS: readonly GateOp[] = ["before", "after"];
const GATE_REF_OPS: readonly GateOp[] = ["passes_gate", "fails_gate"];
export const SEGMENT_REF_OPS: readonly GateOp[] = ["in_segment", "not_in_segment"];

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";

function fail(field: string, message: string): never {
  throw validation(`Invalid gate rule: ${message}`, `${field}: ${message}`);
}

function checkText(field: string, value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0) fail(field, `${what} must be non-empty text`);
  if (value.length > TEXT_VALUE_MAX) fail(field, `at most ${TEXT_VALUE_MAX} characters`);
  return value;
}

/** One condition, its value typed for its operator; every message names the rule and the field. */
function checkCondition(c: GateCondition, field: string): GateCondition {
  if (typeof c !== "object" || c === null || Array.isArray(c)) fail(field, "a condition is an object {attr, op, value}");
  const extra = Object.keys(c).filter((k) => !["attr", "op", "value"].includes(k));
  if (extra.length) fail(`${field}.${extra[0]}`, "unknown field (a condition has attr, op and value)");
  if (typeof c.attr !== "string" || !ATTR.test(c.attr)) fail(`${field}.attr`, "an attribute name: 1 to 128 letters, digits, _ . : $ or -");
  if (!(GATE_OPS as readonly string[]).includes(c.op as string)) fail(`${field}.op`, `unknown operator ${JSON.stringify(c.op)}; one of ${GATE_OPS.join(", ")}`);
  const op = c.op;
  const v = c.value;
  const at = `${field}.value`;
  if (op === "exists" || op === "not_exists") {
    if (v !== undefined && v !== null) fail(at, `${op} takes no value`);
    return { attr: c.attr, op };
  }
  if (op === "eq" || op === "neq") {
    if (!isScalar(v)) fail(at, `${op} compares with text, a number or a boolean`);
    if (typeof v === "string" && v.length > TEXT_VALUE_MAX) fail(at, `at most ${TEXT_VALUE_MAX} characters`);
  } else if (op === "in" || op === "not_in") {
    if (!Array.isArray(v) || v.length === 0) fail(at, `${op} takes a non-empty list`);
    if (v.length > LIST_VALUES_MAX) fail(at, `at most ${LIST_VALUES_MAX} entries`);
    v.forEach((item, i) => {
      if (!isScalar(item)) fail(`${at}[${i}]`, "list entries are text, numbers or booleans");
    });
  } else if (TEXT_OPS.includes(op)) {
    checkText(at, v, `${op}'s value`);
  } else if (op === "regex") {
    const pattern = checkText(at, v, "the pattern");
    try {
      compileRegex(pattern);
    } catch (err) {
      fail(at, `not a valid RE2 pattern (${(err as Error).message.slice(0, 200)})`);
    }
  } else if (NUMBER_OPS.includes(op)) {
    if (typeof v !== "number" || !Number.isFinite(v)) fail(at, `${op} compares with a number`);
  } else if (SEMVER_OPS.includes(op)) {
    if (!parseSemver(v)) fail(at, `${op} compares with a version such as 2.4.0`);
  } else if (DATE_OPS.includes(op)) {
    if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(Date.parse(v))) fail(at, `${op} compares with an ISO date such as 2026-06-01 or 2026-06-01T12:00:00Z`);
  } else if (GATE_REF_OPS.includes(op)) {
    checkText(at, v, "the gate's name");
  } else if (SEGMENT_REF_OPS.includes(op)) {
    checkText(at, v, "the segment's name");
  }
  if (typeof v === "string" && CONTROL_CHARS.test(v)) fail(at, "control characters are not allowed");
  return { attr: c.attr, op, value: v };
}

/**
 * The rule list of one env, checked and normalised (only known fields kept);
 * VALIDATION names the rule and the field (`rules[2].conditions[0].op`).
 */
export function checkRules(rules: unknown, field = "rules"): GateRule[] {
  if (!Array.isArray(rules)) fail(field, "a list of rules");
  if (rules.length > RULES_MAX) fail(field, `at most ${RULES_MAX} rules`);
  return rules.map((rule, i): GateRule => {
    const at = `${field}[${i}]`;
    if (typeof rule !== "object" || rule === null || Array.isArray(rule)) fail(at, "a rule is an object {conditions, passPercentage, name?, unit?}");
    const r = rule as Record<string, unknown>;
    const extra = Object.keys(r).filter((k) => !["name", "conditions", "passPercentage", "unit"].includes(k));
    if (extra.length) fail(`${at}.${extra[0]}`, "unknown field (a rule has name, conditions, passPercentage and unit)");
    if (r.name !== undefined && (typeof r.name !== "string" || r.name.length > 100 || NAME_UNSAFE_CHARS.test(r.name))) fail(`${at}.name`, "text of at most 100 characters, no control or bidirectional formatting characters");
    const conditions = r.conditions ?? [];
    if (!Array.isArray(conditions)) fail(`${at}.conditions`, "a list of conditions (empty: everyone)");
    if (conditions.length > CONDITIONS_MAX) fail(`${at}.conditions`, `at most ${CONDITIONS_MAX} conditions`);
    const pct = r.passPercentage;
    if (typeof pct !== "number" || !Number.isFinite(pct) || pct < 0 || pct > 100) fail(`${at}.passPercentage`, "a number from 0 to 100");
    if (r.unit !== undefined && (typeof r.unit !== "string" || !ATTR.test(r.unit))) fail(`${at}.unit`, "an attribute name (default user_id)");
    const out: GateRule = { conditions: conditions.map((c, j) => checkCondition(c as GateCondition, `${at}.conditions[${j}]`)), passPercentage: pct };
    if (typeof r.name === "string" && r.name !== "") out.name = r.name;
    if (typeof r.unit === "string") out.unit = r.unit;
    return out;
  });
}

/** A template's condition list (`{attr, op, value}` each), checked like a rule's. */
export function checkConditions(conditions: unknown, field = "rules"): GateCondition[] {
  if (!Array.isArray(conditions)) fail(field, "a list of conditions {attr, op, value}");
  if (conditions.length > CONDITIONS_MAX) fail(field, `at most ${CONDITIONS_MAX} conditions`);
  return conditions.map((c, i) => checkCondition(c as GateCondition, `${field}[${i}]`));
}

/** The gates one rule list names through passes_gate / fails_gate. */
export function referencedGates(rules: GateRule[]): { name: string; field: string }[] {
  const out: { name: string; field: string }[] = [];
  rules.forEach((r, i) =>
    r.conditions.forEach((c, j) => {
      if (c.op === "passes_gate" || c.op === "fails_gate") out.push({ name: String(c.value), field: `rules[${i}].conditions[${j}].value` });
    }),
  );
  return out;
}

/** The segments one rule list names through in_segment / not_in_segment. */
export function referencedSegments(rules: GateRule[]): { name: string; field: string }[] {
  const out: { name: string; field: string }[] = [];
  rules.forEach((r, i) =>
    r.conditions.forEach((c, j) => {
      if (SEGMENT_REF_OPS.includes(c.op)) out.push({ name: String(c.value), field: `rules[${i}].conditions[${j}].value` });
    }),
  );
  return out;
}

/**
 * Refuses a rule list that names a gate that does not exist, or that closes a
 * cycle of prerequisites (`graph`: each gate's prerequisites on the env, with
 * this gate's new list in place).
 */
export function checkPrerequisites(gateName: string, rules: GateRule[], graph: Map<string, string[]>): void {
  for (const ref of referencedGates(rules)) {
    if (ref.name === gateName) fail(ref.field, "a gate cannot depend on itself");
    // A reference to nothing of the project (another project's gate included) is NOT_FOUND, as every reference in a body.
    if (!graph.has(ref.name)) throw notFound(`Gate ${ref.name} not found`, `${ref.field}: no gate named ${ref.name} in this project`);
  }
  const path: string[] = [];
  const done = new Set<string>();
  const visit = (name: string): void => {
    if (done.has(name)) return;
    const at = path.indexOf(name);
    if (at >= 0) {
      const cycle = [...path.slice(at), name].join(" → ");
      const first = referencedGates(rules).find((r) => path.includes(r.name) || r.name === name);
      fail(first?.field ?? "rules", `prerequisites would form a cycle: ${cycle}`);
    }
    path.push(name);
    for (const next of graph.get(name) ?? []) visit(next);
    path.pop();
    done.add(name);
  };
  visit(gateName);
}
