/**
 * svc gate conditions in GrowthBook's condition syntax (its MongoDB-like
 * `evalCondition`), written so that GrowthBook's evaluator holds exactly when
 * svc's (src/sdk/gates.ts `holds`) does, for the values clients send: each
 * operator carries `$type` / `$regex` guards where GrowthBook would coerce a
 * value that svc refuses (GrowthBook's `$gt` compares `null` as 0, its `$in`
 * intersects arrays, its `$regex` tests numbers as text). The remaining
 * differences are listed in docs/sdk.md ("GrowthBook SDKs").
 *
 * Pure: imports only the SDK's evaluator helpers, so the edge relay maps its
 * copy of the snapshot the same way. RE2 is the server's lazily loaded one
 * (lib/re2, the same re2js): the SDK's helper imports re2js (263 KB of source,
 * ~0.4 MB of heap) at every server start, for the first regex condition mapped.
 */
import { compileRegex } from "../../lib/re2";
import { type GateCondition, parseSemver } from "../../sdk/gates";

export type GbCondition = Record<string, unknown>;
/** A prerequisite: the feature `id`'s value must satisfy `condition` (evaluated on `{value}`). */
export type GbParentCondition = { id: string; condition: GbCondition };

/** Never holds: `$not` of the empty condition (which always holds). `{$or: []}` would hold: GrowthBook's empty `$or` is true. */
export const NEVER: GbCondition = { $not: {} };

/** What one svc condition becomes: a GrowthBook condition, a prerequisite on another feature, or a reason it cannot be mapped. */
export type MappedCondition = { condition: GbCondition } | { parent: GbParentCondition } | { always: true } | { unmappable: string };

/** svc's number syntax (gates.ts NUMBER), around the whitespace svc trims: the strings svc reads as numbers. */
const NUMBER_TEXT = "^\\s*[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?\\s*$";
/**
 * Versions GrowthBook's `paddedVersionString` orders as svc's semver does: three parts of at most 5 digits
 * without leading zeros (it pads each to 5), pre-release identifiers without hyphens (it splits on them).
 */
const SEMVER_TEXT = "^v?(?:0|[1-9]\\d{0,4})\\.(?:0|[1-9]\\d{0,4})\\.(?:0|[1-9]\\d{0,4})(?:-(?:0|[1-9]\\d{0,4}|\\d*[A-Za-z][0-9A-Za-z]*)(?:\\.(?:0|[1-9]\\d{0,4}|\\d*[A-Za-z][0-9A-Za-z]*))*)?(?:\\+[0-9A-Za-z.-]+)?$";
/** The three UTC ISO forms whose text order is their time order: date, seconds, milliseconds. */
const DATE_ONLY = "^\\d{4}-\\d{2}-\\d{2}$";
const DATE_SECONDS = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$";
const DATE_MILLIS = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$";
const DAY_MS = 86_400_000;

const NOT_ARRAY = { $type: "array" };
const NUMBER_RE = new RegExp(NUMBER_TEXT);
const SEMVER_RE = new RegExp(SEMVER_TEXT);

function numberOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || value.length > 64) return null;
  const text = value.trim();
  return text !== "" && NUMBER_RE.test(text) ? Number(text) : null;
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** `attr` equals the scalar `v` as svc's `sameScalar` says: numerically when `v` reads as a number, else as text. */
function equalsScalar(attr: string, v: string | number | boolean): GbCondition {
  const n = numberOf(v);
  if (n !== null) {
    // A number attribute equal to n, or a numeric string (GrowthBook's bare-number form compares `value * 1`).
    return { $or: [{ [attr]: { $type: "number", $eq: n } }, { $and: [{ [attr]: { $type: "string", $regex: NUMBER_TEXT } }, { [attr]: n }] }] };
  }
  const text = String(v);
  // `true` equals "true" in svc (both compare as text); a number never prints as non-numeric text.
  const values: unknown[] = text === "true" ? [text, true] : text === "false" ? [text, false] : [text];
  return { [attr]: { $in: values, $not: NOT_ARRAY } };
}

/** `attr` equals some scalar of the list (svc's `inList`: non-scalar entries are skipped). */
function inList(attr: string, list: unknown): GbCondition {
  if (!Array.isArray(list)) return NEVER;
  const texts: unknown[] = [];
  const others: GbCondition[] = [];
  for (const v of list) {
    if (!isScalar(v)) continue;
    if (numberOf(v) !== null) others.push(equalsScalar(attr, v));
    else {
      const text = String(v);
      texts.push(text);
      if (text === "true") texts.push(true);
      if (text === "false") texts.push(false);
    }
  }
  const parts = texts.length > 0 ? [{ [attr]: { $in: texts, $not: NOT_ARRAY } }, ...others] : others;
  return parts.length === 0 ? NEVER : parts.length === 1 ? parts[0]! : { $or: parts };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** RE2 syntax that JavaScript reads differently (or not at all); such a pattern is not mapped. */
const RE2_ONLY = /\\[AzpPQECx]|\[:|\(\?/;

function regexCondition(attr: string, pattern: string): MappedCondition {
  try {
    compileRegex(pattern);
  } catch {
    // svc's evaluator never matches a pattern RE2 refuses (the server refuses it when saved).
    return { condition: NEVER };
  }
  let source = pattern;
  let op = "$regex";
  // RE2's case-insensitive flag, when it leads, is GrowthBook's `$regexi`.
  if (source.startsWith("(?i)")) {
    source = source.slice(4);
    op = "$regexi";
  }
  if (RE2_ONLY.test(source)) return { unmappable: `regex /${pattern}/ uses RE2-only syntax` };
  try {
    new RegExp(source);
  } catch {
    return { unmappable: `regex /${pattern}/ is not a JavaScript pattern` };
  }
  return { condition: { [attr]: { $type: "string", [op]: source } } };
}

function comparison(attr: string, op: "gt" | "gte" | "lt" | "lte", value: unknown): GbCondition {
  const y = numberOf(value);
  if (y === null) return NEVER;
  const gbOp = `$${op}`;
  return { $or: [{ [attr]: { $type: "number", [gbOp]: y } }, { [attr]: { $type: "string", $regex: NUMBER_TEXT, [gbOp]: y } }] };
}

const SEMVER_OPS = { semver_eq: "$veq", semver_gt: "$vgt", semver_gte: "$vgte", semver_lt: "$vlt", semver_lte: "$vlte" } as const;

function semverCondition(attr: string, op: keyof typeof SEMVER_OPS, value: unknown): MappedCondition {
  const v = parseSemver(value);
  if (!v) return { condition: NEVER };
  const canonical = `${v.parts.join(".")}${v.pre.length > 0 ? `-${v.pre.join(".")}` : ""}`;
  if (!SEMVER_RE.test(canonical)) return { unmappable: `version ${String(value)} has a part GrowthBook cannot order (over 5 digits, a leading zero or a hyphenated pre-release)` };
  return { condition: { [attr]: { $type: "string", $regex: SEMVER_TEXT, [SEMVER_OPS[op]]: canonical } } };
}

function timeOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || value.length > 64 || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/**
 * `before` / `after`: GrowthBook has no date operator, but its `$lt` / `$gt` on text are svc's time order for
 * the UTC ISO forms of one length, so each form is compared with the bound written in that form (rounded
 * so that whole days or seconds compare as svc's milliseconds do). Numbers are epoch milliseconds in both.
 */
function dateCondition(attr: string, op: "before" | "after", value: unknown): GbCondition {
  const y = timeOf(value);
  if (y === null) return NEVER;
  const iso = (ms: number) => new Date(ms).toISOString();
  const floorDay = Math.floor(y / DAY_MS) * DAY_MS;
  const floorSecond = Math.floor(y / 1000) * 1000;
  if (op === "before") {
    // x < y: a whole day D (its midnight) is before y when D < the first midnight at or after y; seconds likewise.
    const day = iso(floorDay === y ? y : floorDay + DAY_MS).slice(0, 10);
    const second = `${iso(floorSecond === y ? y : floorSecond + 1000).slice(0, 19)}Z`;
    return {
      $or: [
        { [attr]: { $type: "number", $lt: y } },
        { [attr]: { $type: "string", $regex: DATE_ONLY, $lt: day } },
        { [attr]: { $type: "string", $regex: DATE_SECONDS, $lt: second } },
        { [attr]: { $type: "string", $regex: DATE_MILLIS, $lt: iso(y) } },
      ],
    };
  }
  return {
    $or: [
      { [attr]: { $type: "number", $gt: y } },
      { [attr]: { $type: "string", $regex: DATE_ONLY, $gt: iso(floorDay).slice(0, 10) } },
      { [attr]: { $type: "string", $regex: DATE_SECONDS, $gt: `${iso(floorSecond).slice(0, 19)}Z` } },
      { [attr]: { $type: "string", $regex: DATE_MILLIS, $gt: iso(y) } },
    ],
  };
}

/** Whether GrowthBook reads an attribute name as svc does: it reads `a.b` as a path into objects, and `$x` as an operator. */
export function plainAttribute(attr: unknown): attr is string {
  return typeof attr === "string" && !attr.includes(".") && !attr.startsWith("$") && attr !== "";
}

const attributeProblem = (attr: unknown) => `attribute name ${JSON.stringify(attr)} (GrowthBook reads dots as paths)`;

/**
 * A saved group's values for an id list: the ids, and each id that a number prints as, as that number too
 * (svc compares a number attribute by its text, `String(7)`; GrowthBook's `$inGroup` compares strictly).
 */
export function savedGroupValues(ids: readonly string[]): (string | number)[] {
  const out: (string | number)[] = [...ids];
  for (const id of ids) {
    const n = Number(id);
    if (Number.isFinite(n) && String(n) === id) out.push(n);
  }
  return out;
}

/**
 * "The unit is in the segment" (svc's `inSegment`): its `attribute` is a text or number listed in the id list
 * (saved group `group`, GrowthBook's `$inGroup`, arrays excluded: GrowthBook would intersect them), or the
 * segment's conditions, non-empty, all hold; either one. `group` undefined: no id list.
 */
export function segmentMembership(attribute: string, group: string | undefined, conditions: readonly GateCondition[]): MappedCondition {
  const parts: GbCondition[] = [];
  if (group !== undefined) {
    if (!plainAttribute(attribute)) return { unmappable: attributeProblem(attribute) };
    parts.push({ [attribute]: { $inGroup: group, $not: NOT_ARRAY } });
  }
  if (conditions.length > 0) {
    const all: GbCondition[] = [];
    let everyone = true;
    for (const c of conditions) {
      // A segment's conditions never name gates or segments (refused when saved): nothing to resolve.
      const m = mapCondition(c, () => undefined);
      if ("unmappable" in m) return m;
      if ("parent" in m) return { unmappable: `operator ${c.op} inside a segment` };
      if ("condition" in m) {
        all.push(m.condition);
        everyone = false;
      }
    }
    if (everyone) return { always: true };
    parts.push(allOf(all)!);
  }
  if (parts.length === 0) return { condition: NEVER };
  return { condition: parts.length === 1 ? parts[0]! : { $or: parts } };
}

/**
 * One svc condition. `gateKey(name)` is the feature a `passes_gate` / `fails_gate` prerequisite reads
 * (undefined when svc has no such gate: it is off, so passes_gate never holds and fails_gate always does).
 * `segment(name)` is "in segment `name`" (segmentMembership); without it a segment's condition is not mapped.
 */
export function mapCondition(c: GateCondition, gateKey: (name: string) => string | undefined, segment?: (name: string) => MappedCondition): MappedCondition {
  const attr = c.attr;
  if (c.op === "passes_gate" || c.op === "fails_gate") {
    const id = gateKey(String(c.value));
    if (id === undefined) return c.op === "passes_gate" ? { condition: NEVER } : { always: true };
    // A gate's feature is a boolean: `{value: true}` holds for true only, `{value: false}` for false only.
    return { parent: { id, condition: { value: c.op === "passes_gate" } } };
  }
  if (c.op === "in_segment" || c.op === "not_in_segment") {
    if (!segment) return { unmappable: `operator ${c.op} inside a segment` };
    const m = segment(String(c.value));
    if (c.op === "in_segment" || "unmappable" in m || "parent" in m) return m;
    return "always" in m ? { condition: NEVER } : { condition: { $not: m.condition } };
  }
  if (!plainAttribute(attr)) return { unmappable: attributeProblem(attr) };
  switch (c.op) {
    case "exists":
      return { condition: { [attr]: { $exists: true } } };
    case "not_exists":
      return { condition: { [attr]: { $exists: false } } };
    case "eq":
      return { condition: isScalar(c.value) ? equalsScalar(attr, c.value) : NEVER };
    case "neq":
      return isScalar(c.value) ? { condition: { $not: equalsScalar(attr, c.value) } } : { always: true };
    case "in":
      return { condition: inList(attr, c.value) };
    case "not_in":
      return { condition: { $not: inList(attr, c.value) } };
    case "contains":
    case "starts_with":
    case "ends_with": {
      if (typeof c.value !== "string") return { condition: NEVER };
      const text = escapeRegex(c.value);
      const source = c.op === "contains" ? text : c.op === "starts_with" ? `^${text}` : `${text}$`;
      return { condition: { [attr]: { $type: "string", $regex: source } } };
    }
    case "regex":
      return typeof c.value === "string" ? regexCondition(attr, c.value) : { condition: NEVER };
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return { condition: comparison(attr, c.op, c.value) };
    case "semver_eq":
    case "semver_gt":
    case "semver_gte":
    case "semver_lt":
    case "semver_lte":
      return semverCondition(attr, c.op, c.value);
    case "before":
    case "after":
      return { condition: dateCondition(attr, c.op, c.value) };
    default:
      return { unmappable: `operator ${String((c as { op: unknown }).op)}` };
  }
}

/** Several conditions that must all hold, as one. */
export function allOf(conditions: GbCondition[]): GbCondition | undefined {
  return conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : { $and: conditions };
}
