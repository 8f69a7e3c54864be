import { validation } from "../../lib/errors";
import { NAME_UNSAFE_CHARS } from "../../lib/validate";
import { BUCKETS, type BucketRange, type ConfigRule, type SplitEntry, contiguousRanges, splitRanges } from "../../sdk/configs";
import type { GateRule } from "../../sdk/gates";
import { checkConditions } from "../gates/rules";

/** Rules of one config on one env: fewer than a gate may have, since each can serve a large value. */
export const CONFIG_RULES_MAX = 50;
/** Values of one split (GrowthBook's and LaunchDarkly's UIs go about this far). */
export const SPLIT_VALUES_MAX = 20;
/**
 * Ranges a split may be cut into by successive publishes before its buckets are laid out afresh (weights
 * in order, units reshuffled): keeps an evaluation's range scan bounded.
 */
export const SPLIT_RANGES_MAX = 200;

const ATTR = /^[A-Za-z0-9_.:$-]{1,128}$/;
const RULE_FIELDS = ["name", "conditions", "value", "split", "unit"];

function fail(field: string, message: string): never {
  throw validation(`Invalid config rule: ${message}`, `${field}: ${message}`);
}

/**
 * A config's rules for one env, checked and normalised (DECISIONS: `{name?, conditions, value}` or
 * `{name?, conditions, split: [{value, weight}], unit?}`, weights integers summing to 100). Conditions
 * are the gates' own (segments and gates named are checked by the service). Values are checked against
 * the schema by the caller (`ruleValues`).
 */
export function checkConfigRules(rules: unknown, field = "rules"): ConfigRule[] {
  if (!Array.isArray(rules)) fail(field, "a list of rules");
  if (rules.length > CONFIG_RULES_MAX) fail(field, `at most ${CONFIG_RULES_MAX} rules`);
  return rules.map((rule, i): ConfigRule => {
    const at = `${field}[${i}]`;
    if (typeof rule !== "object" || rule === null || Array.isArray(rule)) fail(at, "a rule is an object {conditions, value} or {conditions, split, unit?}");
    const r = rule as Record<string, unknown>;
    const extra = Object.keys(r).filter((k) => !RULE_FIELDS.includes(k));
    if (extra.length) fail(`${at}.${extra[0]}`, "unknown field (a rule has name, conditions, and value or split with unit)");
    if (r.name !== undefined && (typeof r.name !== "string" || r.name.length > 100 || NAME_UNSAFE_CHARS.test(r.name) || r.name.includes("/"))) {
      fail(`${at}.name`, "text of at most 100 characters, no '/', control or bidirectional formatting characters");
    }
    const out: ConfigRule = { conditions: checkConditions(r.conditions ?? [], `${at}.conditions`) };
    if (typeof r.name === "string" && r.name !== "") out.name = r.name;
    const hasValue = Object.hasOwn(r, "value") && r.value !== undefined;
    if (hasValue === (r.split !== undefined)) fail(at, "a rule serves either `value` or `split`, exactly one of them");
    if (hasValue) {
      if (r.unit !== undefined) fail(`${at}.unit`, "only a split buckets units");
      out.value = r.value;
      return out;
    }
    out.split = checkSplit(r.split, `${at}.split`);
    if (r.unit !== undefined) {
      if (typeof r.unit !== "string" || !ATTR.test(r.unit)) fail(`${at}.unit`, "an attribute name (default user_id)");
      out.unit = r.unit;
    }
    return out;
  });
}

function checkSplit(split: unknown, field: string): SplitEntry[] {
  if (!Array.isArray(split) || split.length < 1) fail(field, "a non-empty list of {value, weight}");
  if (split.length > SPLIT_VALUES_MAX) fail(field, `at most ${SPLIT_VALUES_MAX} values`);
  let total = 0;
  const out = split.map((entry, j): SplitEntry => {
    const at = `${field}[${j}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) fail(at, "an object {value, weight}");
    const e = entry as Record<string, unknown>;
    const extra = Object.keys(e).filter((k) => k !== "value" && k !== "weight");
    if (extra.length) fail(`${at}.${extra[0]}`, "unknown field (a split value has value and weight)");
    if (e.value === undefined) fail(`${at}.value`, "required (any JSON value, null included)");
    const w = e.weight;
    if (typeof w !== "number" || !Number.isInteger(w) || w < 0 || w > 100) fail(`${at}.weight`, "an integer from 0 to 100");
    total += w;
    return { value: e.value, weight: w };
  });
  if (total !== 100) fail(field, `the weights sum to ${total}; they must sum to 100`);
  return out;
}

/** Every value the rules can serve, labelled by field, for the schema check. */
export function ruleValues(rules: ConfigRule[], prefix = "rules"): { value: unknown; label: string }[] {
  const out: { value: unknown; label: string }[] = [];
  rules.forEach((r, i) => {
    if (r.split) r.split.forEach((e, j) => out.push({ value: e.value, label: `${prefix}[${i}].split[${j}].value` }));
    else out.push({ value: r.value, label: `${prefix}[${i}].value` });
  });
  return out;
}

/** The rules as gate rules, for the gates' reference and cost checks (a config rule costs what its conditions cost). */
export function asGateRules(rules: ConfigRule[]): GateRule[] {
  return rules.map((r) => ({ conditions: r.conditions, passPercentage: 100 }));
}

/** The rules as the API shows and takes them: a split's buckets are the server's business. */
export function publicRules(rules: ConfigRule[]): ConfigRule[] {
  return rules.map((r) => (r.split ? { ...r, split: r.split.map(({ value, weight }) => ({ value, weight })) } : r));
}

const size = (ranges: BucketRange[]) => ranges.reduce((n, [a, b]) => n + (b - a), 0);

function normalise(ranges: BucketRange[]): BucketRange[] {
  const sorted = ranges.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: BucketRange[] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && last[1] === a) last[1] = b;
    else out.push([a, b]);
  }
  return out;
}

/**
 * The buckets of a split about to be published, given the split the env serves now (`previous`, with its
 * ranges): each value keeps the buckets it had (matched by value), trimmed from its end when its weight
 * shrank; the buckets freed go to the values that grew. So a unit only moves from a value that shrank to
 * one that grew, never between two others (issue 29). A new split, or one cut into more than
 * SPLIT_RANGES_MAX pieces, is laid out in order.
 */
export function assignRanges(previous: SplitEntry[] | undefined, next: SplitEntry[]): SplitEntry[] {
  const fresh = () => {
    const laid = contiguousRanges(next);
    return next.map((e, j) => ({ value: e.value, weight: e.weight, ranges: laid[j]! }));
  };
  if (!previous || previous.length === 0) return fresh();
  const before = splitRanges(previous);
  const keys = previous.map((e) => JSON.stringify(e.value));
  const used = new Set<number>();
  const have: BucketRange[][] = next.map((e) => {
    const key = JSON.stringify(e.value);
    const i = keys.findIndex((k, n) => k === key && !used.has(n));
    if (i < 0) return [];
    used.add(i);
    return before[i]!.map(([a, b]): BucketRange => [a, b]);
  });
  const free: BucketRange[] = [];
  previous.forEach((_, i) => {
    if (!used.has(i)) free.push(...before[i]!.map(([a, b]): BucketRange => [a, b]));
  });
  const want = next.map((e) => Math.round(e.weight * (BUCKETS / 100)));
  have.forEach((ranges, j) => {
    let excess = size(ranges) - want[j]!;
    while (excess > 0) {
      const last = ranges.at(-1)!;
      const cut = Math.min(excess, last[1] - last[0]);
      free.push([last[1] - cut, last[1]]);
      last[1] -= cut;
      if (last[0] === last[1]) ranges.pop();
      excess -= cut;
    }
  });
  const pool = normalise(free);
  have.forEach((ranges, j) => {
    let need = want[j]! - size(ranges);
    while (need > 0 && pool.length > 0) {
      const first = pool[0]!;
      const take = Math.min(need, first[1] - first[0]);
      ranges.push([first[0], first[0] + take]);
      first[0] += take;
      if (first[0] === first[1]) pool.shift();
      need -= take;
    }
  });
  const out = next.map((e, j) => ({ value: e.value, weight: e.weight, ranges: normalise(have[j]!) }));
  // A previous split that did not cover every bucket (never from this server) is laid out afresh, as is a too-fragmented one.
  if (out.reduce((n, e) => n + size(e.ranges), 0) !== BUCKETS || out.reduce((n, e) => n + e.ranges.length, 0) > SPLIT_RANGES_MAX) return fresh();
  return out;
}

/**
 * The rules about to be published on an env, each split given its buckets from the rule it continues in
 * the rules the env serves now: the rule of the same name, else the one at the same place when neither
 * has a name.
 */
export function withRanges(previous: ConfigRule[], next: ConfigRule[]): ConfigRule[] {
  return next.map((rule, i) => {
    if (!rule.split) return rule;
    const before = rule.name !== undefined ? previous.find((p) => p.name === rule.name) : previous[i]?.name === undefined ? previous[i] : undefined;
    return { ...rule, split: assignRanges(before?.split, rule.split) };
  });
}
