// One piece: the gate evaluator, one pure module shared by the server and the SDK bundle so that both answer the same.
/**
 * The gate evaluator: one pure function, imported by the server (admin
 * explain, OFREP) and bundled into the SDK, so that every place answers the
 * same. No imports: regular expressions come from the caller (`compileRegex`),
 * RE2 on the server and in the SDK, so a pattern runs in linear time and means
 * the same everywhere.
 *
 * A gate is an ordered rule list. A rule holds when all its conditions hold;
 * the first rule that holds decides: the unit passes when its bucket (a
 * deterministic hash of the gate's salt and the unit's id, in [0, 1)) is under
 * the rule's pass percentage. No rule holding means off. Growing a percentage
 * keeps every unit that passed before (same salt, same bucket).
 */

export const GATE_OPS = [
  "eq",
  "neq",
  "in",
  "not_in",
  "contains",
  "starts_with",
  "ends_with",
  "regex",
  "gt",
  "gte",
  "lt",
  "lte",
  "semver_eq",
  "semver_gt",
  "semver_gte",
  "semver_lt",
  "semver_lte",
  "before",
  "after",
  "exists",
  "not_exists",
  "passes_gate",
  "fails_gate",
  "in_segment",
  "not_in_segment",
] as const;
export type GateOp = (typeof GATE_OPS)[number];

export type GateCondition = { attr: string; op: GateOp; value?: unknown };
export type GateRule = {
  /** Shown in explanations ("rule 2 (beta testers)"). */
  name?: string;
  conditions: GateCondition[];
  /** 0 to 100; 100 passes every unit whose conditions hold. */
  passPercentage: number;
  /** The context attribute that identifies the unit to bucket; default `user_id`. */
  unit?: string;
};
export type Gate = { salt: string; rules: GateRule[] };

/**
 * A segment as the snapshot carries it (once per env, under `segments`, by name): a unit is in it when the
 * value of its `attribute` is one of `ids`, or when `conditions` (non-empty) all hold. The server refuses
 * passes_gate / fails_gate / in_segment / not_in_segment inside a segment's conditions, so a segment never
 * reaches another segment or a gate.
 */
export type PublishedSegment = { attribute?: string; ids?: string[]; conditions?: GateCondition[] };
export type EvaluationContext = Record<string, unknown>;

/**
 * The context with its unit: `user_id`, else OpenFeature's `targetingKey` (a `user_id` of null counts as none).
 * The SDK and OFREP both evaluate through it, so one unit gets one answer either way.
 */
export function withUserId(context: EvaluationContext): EvaluationContext {
  return (context.user_id === undefined || context.user_id === null) && context.targetingKey !== undefined ? { ...context, user_id: context.targetingKey } : context;
}

/** The size of a context's JSON in UTF-8 bytes: what CONTEXT_BYTES_MAX bounds. */
export function contextBytes(context: EvaluationContext): number {
  const json = JSON.stringify(context) ?? "";
  let bytes = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    // A surrogate pair is 4 bytes, 2 per half (JSON.stringify escapes lone ones).
    bytes += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
  }
  return bytes;
}

/** A compiled pattern: `test` must run in linear time (RE2). */
export type CompiledRegex = { test(value: string): boolean };

export type EvaluatorOptions = {
  compileRegex(pattern: string): CompiledRegex;
  /** Another gate by name, for passes_gate / fails_gate; undefined when there is none. */
  gate?(name: string): Gate | undefined;
  /** A segment by name, for in_segment / not_in_segment; undefined when there is none (not in it). */
  segment?(name: string): PublishedSegment | undefined;
};

export type ConditionOutcome = { attr: string; op: GateOp; holds: boolean; why: string };
export type RuleOutcome = { index: number; name?: string; holds: boolean; conditions: ConditionOutcome[] };

export type GateDecision = {
  value: boolean;
  /** The rule that decided (0-based), or null when none held. */
  ruleIndex: number | null;
  /** The unit's bucket in [0, 1) when a percentage decided, else null. */
  bucket: number | null;
  /** OpenFeature-style reason. */
  reason: "TARGETING_MATCH" | "SPLIT" | "DEFAULT";
};

export type GateExplanation = GateDecision & { rules: RuleOutcome[] };

/**
 * Prerequisite gates nest at most this deep (the server refuses deeper chains when they are saved);
 * deeper, or a cycle that slipped in, evaluates to off.
 */
export const MAX_GATE_DEPTH = 10;

/**
 * An operator reads at most this many characters of a text attribute: a longer text matches
 * nothing (so `neq` and `not_in` hold for it), which bounds every string operator, RE2's
 * patterns included (their cost is linear in pattern size times text length).
 */
export const ATTRIBUTE_TEXT_MAX = 4096;

/**
 * Text read as a number, a date or a version is at most this long (a longer one is none): no real
 * one comes close, and parsing 4,096 digits or a 2,000-part pre-release costs microseconds a
 * condition. 256 is node-semver's own limit.
 */
const NUMBER_TEXT_MAX = 64;
const DATE_TEXT_MAX = 64;
const VERSION_TEXT_MAX = 256;

/** An evaluation context whose JSON is over this many bytes is refused where one arrives over the network (OFREP, explain). */
export const CONTEXT_BYTES_MAX = 64 * 1024;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 16777619;

/**
 * FNV-1a 32 over UTF-16 code units, continuing from `h`. The state stays an int32 between steps (xor and
 * Math.imul keep the low 32 bits, all FNV-1a reads); the caller takes `>>> 0` at the end.
 */
function fnvText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/** FNV-1a 32 continued over the decimal digits of `x` (an int32 ≥ 0), zero-padded to `width` digits when given. */
function fnvDigitsOf(h: number, x: number, width: number): number {
  let div = 1;
  if (width > 0) for (let i = 1; i < width; i++) div *= 10;
  else while (div * 10 <= x) div *= 10;
  for (; div > 0; div = (div / 10) | 0) h = Math.imul(h ^ (48 + (((x / div) | 0) % 10)), FNV_PRIME);
  return h;
}

/**
 * FNV-1a 32 of `String(n)` for a uint32 `n`, without building the string: bucketOf runs on every
 * evaluation of a percentage, and the string (and the double arithmetic of a uint32 over 2^31) cost more
 * than the hashing. `n` is split at 10^5 so each half is an int32.
 */
function fnvOfDecimal(n: number): number {
  const high = Math.floor(n / 100000);
  const low = n - high * 100000;
  const h = high > 0 ? fnvDigitsOf(fnvDigitsOf(FNV_OFFSET, high, 0), low, 5) : fnvDigitsOf(FNV_OFFSET, low, 0);
  return h >>> 0;
}

/**
 * The unit's bucket in [0, 1), in steps of 1/10000: GrowthBook's hash v2,
 * `fnv(String(fnv(seed + id))) % 10000 / 10000` (vectors in NOTES.md), computed
 * without the concatenation or the inner number's string (the same value: test/sdk/gates.test.ts).
 */
export function bucketOf(seed: string, id: string): number {
  return (fnvOfDecimal(fnvText(fnvText(FNV_OFFSET, seed), id) >>> 0) % 10000) / 10000;
}

type Semver = { parts: [number, number, number]; pre: string[] };

/** `1.2.3`, `v1.2`, `1.2.3-beta.2` (build metadata ignored); null when it is not one. */
export function parseSemver(text: unknown): Semver | null {
  if (typeof text !== "string" || text.length > VERSION_TEXT_MAX) return null;
  const m = /^v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!m) return null;
  return { parts: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)], pre: m[4] ? m[4].split(".") : [] };
}

/** Semver precedence: -1, 0 or 1 (a pre-release sorts before its release). */
export function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) if (a.parts[i] !== b.parts[i]) return a.parts[i]! < b.parts[i]! ? -1 : 1;
  if (a.pre.length === 0 || b.pre.length === 0) return a.pre.length === b.pre.length ? 0 : a.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) < Number(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

// Linear: `\d+\.?\d*` (two digit runs with nothing between) backtracks quadratically on a long run of digits.
const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** A number from a number or a numeric string (of at most NUMBER_TEXT_MAX characters); null otherwise. */
function numberOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || value.length > NUMBER_TEXT_MAX || value.length === 0) return null;
  // Most text is no number: its first character says so without the regex (a number starts with a digit, a sign or a dot; trim drops whitespace first).
  const first = value.charCodeAt(0);
  if (!((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 46 || first <= 32 || first === 160 || first >= 0x1680)) return null;
  const text = value.trim();
  return text !== "" && NUMBER.test(text) ? Number(text) : null;
}

/** Epoch milliseconds from an ISO date string or a number of milliseconds; null otherwise. */
function timeOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || value.length > DATE_TEXT_MAX || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** Text an operator may read: not over ATTRIBUTE_TEXT_MAX characters. */
const readable = (v: unknown): v is Scalar => (typeof v === "string" ? v.length <= ATTRIBUTE_TEXT_MAX : typeof v === "number" || typeof v === "boolean");

/** Scalars are equal as numbers when both read as numbers, else as text (so `"42"` equals `42`, `true` equals `"true"`). */
function sameScalar(a: Scalar, b: Scalar): boolean {
  const x = numberOf(a);
  const y = numberOf(b);
  if (x !== null && y !== null) return x === y;
  return String(a) === String(b);
}

/** `sameScalar(actual, v)` for some entry of the list; the attribute is read once, not once per entry. */
function inList(actual: Scalar, list: unknown): boolean {
  if (!Array.isArray(list)) return false;
  const x = numberOf(actual);
  const text = typeof actual === "string" ? actual : String(actual);
  for (let i = 0; i < list.length; i++) {
    const v: unknown = list[i];
    if (!isScalar(v)) continue;
    if (x !== null) {
      const y = numberOf(v);
      if (y !== null) {
        if (x === y) return true;
        continue;
      }
    }
    if (text === (typeof v === "string" ? v : String(v))) return true;
  }
  return false;
}

/** A short, bounded rendering for explanations: never serialises a whole large value. */
function show(value: unknown): string {
  if (typeof value === "string") {
    const text = JSON.stringify(value.length > 60 ? value.slice(0, 60) : value);
    return value.length > 60 ? `${text.slice(0, 57)}..." (${value.length} characters)` : text;
  }
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === "object" && value !== null) return "an object";
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text;
}

/** Per gate reference: computed once per evaluation (ON/OFF), or being computed (a cycle that slipped in reads it as off). */
const OFF = 0;
const ON = 1;
const PENDING = 2;

/**
 * One evaluator's state. `memo` holds the gates referenced during the current evaluation (cleared
 * after it, allocated once per evaluator), so a prerequisite reached along many paths costs once:
 * an evaluation is linear in the rules of the gates it can reach, never rules^depth.
 */
type Evaluation = Compiled & {
  options: EvaluatorOptions;
  memo: Map<string, number>;
  depth: number;
  busy: boolean;
  /** Set while a segment's conditions are evaluated: a segment reference inside one (refused when saved) is not followed. */
  inSegment: boolean;
};

/**
 * What an evaluator compiles once and keeps for its life (a snapshot's rules): the hot path never compiles
 * a pattern or parses a rule's version or date twice. Keyed by the rule's text, so bounded by the rules.
 */
type Compiled = {
  regexes: Map<string, CompiledRegex>;
  /** Segments by name with their ids as a Set, built once per evaluator (a snapshot's), so membership is O(1). */
  segments: Map<string, CompiledSegment | null>;
  /** A rule's version (semver_*) parsed. */
  versions: Map<string, Semver | null>;
  /** A rule's date (before / after) in epoch milliseconds. */
  times: Map<string, number | null>;
};

/** A rule's version, parsed once per evaluator (parseSemver's answer). */
function ruleVersion(value: unknown, ev: Evaluation): Semver | null {
  if (typeof value !== "string") return null;
  let version = ev.versions.get(value);
  if (version === undefined) {
    version = parseSemver(value);
    ev.versions.set(value, version);
  }
  return version;
}

/** A rule's date, parsed once per evaluator (timeOf's answer). */
function ruleTime(value: unknown, ev: Evaluation): number | null {
  if (typeof value !== "string") return timeOf(value);
  let time = ev.times.get(value);
  if (time === undefined) {
    time = timeOf(value);
    ev.times.set(value, time);
  }
  return time;
}

type CompiledSegment = { attribute: string; ids: Set<string> | null; conditions: GateCondition[] };

function compiledSegment(name: string, ev: Evaluation): CompiledSegment | null {
  let compiled = ev.segments.get(name);
  if (compiled === undefined) {
    const s = ev.options.segment?.(name);
    compiled = s ? { attribute: s.attribute ?? "user_id", ids: Array.isArray(s.ids) && s.ids.length > 0 ? new Set(s.ids) : null, conditions: Array.isArray(s.conditions) ? s.conditions : [] } : null;
    ev.segments.set(name, compiled);
  }
  return compiled;
}

/** Whether the context is in the named segment: its id listed (one Set lookup), or the segment's conditions all holding. */
function inSegment(name: string, context: EvaluationContext, ev: Evaluation): boolean {
  if (ev.inSegment) return false;
  const s = compiledSegment(name, ev);
  if (!s) return false;
  if (s.ids) {
    const actual = Object.prototype.hasOwnProperty.call(context, s.attribute) ? context[s.attribute] : undefined;
    if ((typeof actual === "string" || typeof actual === "number") && s.ids.has(String(actual))) return true;
  }
  if (s.conditions.length === 0) return false;
  ev.inSegment = true;
  try {
    for (let i = 0; i < s.conditions.length; i++) if (!holds(s.conditions[i]!, context, ev)) return false;
    return true;
  } finally {
    ev.inSegment = false;
  }
}

function regexOf(pattern: string, ev: Evaluation): CompiledRegex {
  let re = ev.regexes.get(pattern);
  if (!re) {
    try {
      re = ev.options.compileRegex(pattern);
    } catch {
      // The server refuses such a pattern when it is saved; an engine here that cannot compile it never matches rather than throw.
      re = NEVER;
    }
    ev.regexes.set(pattern, re);
  }
  return re;
}
const NEVER: CompiledRegex = { test: () => false };

/** Whether another gate passes for the context: once per evaluation (memoised by name). */
function gatePasses(name: string, context: EvaluationContext, ev: Evaluation): boolean {
  const known = ev.memo.get(name);
  if (known !== undefined) return known === ON;
  const other = ev.options.gate?.(name);
  // Too deep (the server refuses such chains when they are saved): off, and not remembered, so the gate reached by a shorter path is evaluated.
  if (other === undefined || ev.depth >= MAX_GATE_DEPTH) return false;
  ev.memo.set(name, PENDING);
  ev.depth++;
  const index = decidingRule(other.rules, context, ev, 0);
  const passes = index >= 0 && rulePasses(other, other.rules[index]!, context);
  ev.depth--;
  ev.memo.set(name, passes ? ON : OFF);
  return passes;
}

/**
 * Whether one condition holds: the hot path, so no explanation is built here. A text attribute
 * over ATTRIBUTE_TEXT_MAX characters is read by no operator: it matches nothing (so `neq` and
 * `not_in` hold for it, as they do for any other value that equals nothing listed).
 */
function holds(c: GateCondition, context: EvaluationContext, ev: Evaluation): boolean {
  const actual = Object.prototype.hasOwnProperty.call(context, c.attr) ? context[c.attr] : undefined;
  const has = actual !== null && actual !== undefined;
  switch (c.op) {
    case "exists":
      return has;
    case "not_exists":
      return !has;
    // A missing attribute equals nothing, so `neq` holds for it.
    case "eq":
      return has && readable(actual) && isScalar(c.value) && sameScalar(actual, c.value);
    case "neq":
      return !(has && readable(actual) && isScalar(c.value) && sameScalar(actual, c.value));
    case "in":
      return has && readable(actual) && inList(actual, c.value);
    case "not_in":
      return !(has && readable(actual) && inList(actual, c.value));
    case "contains":
      return typeof actual === "string" && typeof c.value === "string" && actual.length <= ATTRIBUTE_TEXT_MAX && actual.includes(c.value);
    case "starts_with":
      return typeof actual === "string" && typeof c.value === "string" && actual.length <= ATTRIBUTE_TEXT_MAX && actual.startsWith(c.value);
    case "ends_with":
      return typeof actual === "string" && typeof c.value === "string" && actual.length <= ATTRIBUTE_TEXT_MAX && actual.endsWith(c.value);
    case "regex":
      return typeof actual === "string" && typeof c.value === "string" && actual.length <= ATTRIBUTE_TEXT_MAX && regexOf(c.value, ev).test(actual);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (!has) return false;
      const x = numberOf(actual);
      const y = numberOf(c.value);
      if (x === null || y === null) return false;
      return c.op === "gt" ? x > y : c.op === "gte" ? x >= y : c.op === "lt" ? x < y : x <= y;
    }
    case "semver_eq":
    case "semver_gt":
    case "semver_gte":
    case "semver_lt":
    case "semver_lte": {
      if (!has) return false;
      const x = parseSemver(actual);
      const y = ruleVersion(c.value, ev);
      if (!x || !y) return false;
      const order = compareSemver(x, y);
      return c.op === "semver_eq" ? order === 0 : c.op === "semver_gt" ? order > 0 : c.op === "semver_gte" ? order >= 0 : c.op === "semver_lt" ? order < 0 : order <= 0;
    }
    case "before":
    case "after": {
      if (!has) return false;
      const x = timeOf(actual);
      const y = ruleTime(c.value, ev);
      if (x === null || y === null) return false;
      return c.op === "before" ? x < y : x > y;
    }
    case "passes_gate":
      return gatePasses(String(c.value), context, ev);
    case "fails_gate":
      return !gatePasses(String(c.value), context, ev);
    case "in_segment":
      return inSegment(String(c.value), context, ev);
    case "not_in_segment":
      return !inSegment(String(c.value), context, ev);
    default:
      return false;
  }
}

/** One condition's outcome with the reason, for explain; `holds` decides, so explain and evaluate always agree. */
function conditionOutcome(c: GateCondition, context: EvaluationContext, ev: Evaluation): ConditionOutcome {
  const value = holds(c, context, ev);
  const has = Object.prototype.hasOwnProperty.call(context, c.attr) && context[c.attr] !== null && context[c.attr] !== undefined;
  const actual = has ? context[c.attr] : undefined;
  const result = (why: string): ConditionOutcome => ({ attr: c.attr, op: c.op, holds: value, why });
  const missing = `${c.attr} is not in the context`;
  if (c.op === "passes_gate" || c.op === "fails_gate") {
    const name = String(c.value);
    const exists = ev.options.gate?.(name) !== undefined;
    const on = c.op === "passes_gate" ? value : !value;
    return result(exists ? `gate ${name} is ${on ? "on" : "off"}` : `gate ${name} does not exist (off)`);
  }
  if (c.op === "in_segment" || c.op === "not_in_segment") {
    const name = String(c.value);
    const inIt = c.op === "in_segment" ? value : !value;
    return result(compiledSegment(name, ev) ? `${inIt ? "in" : "not in"} segment ${name}` : `segment ${name} does not exist (not in it)`);
  }
  if (!has) return result(missing);
  if (typeof actual === "string" && actual.length > ATTRIBUTE_TEXT_MAX && c.op !== "exists" && c.op !== "not_exists") {
    return result(`${c.attr} is text of ${actual.length} characters, over the ${ATTRIBUTE_TEXT_MAX} an operator reads (matches nothing)`);
  }
  switch (c.op) {
    case "exists":
    case "not_exists":
      return result(`${c.attr} is set`);
    case "eq":
    case "neq": {
      const equal = c.op === "eq" ? value : !value;
      return result(`${c.attr} is ${show(actual)}${equal ? "" : `, not ${show(c.value)}`}`);
    }
    case "in":
    case "not_in": {
      const found = c.op === "in" ? value : !value;
      return result(`${c.attr} is ${show(actual)}, ${found ? "in" : "not in"} the list`);
    }
    case "contains":
    case "starts_with":
    case "ends_with":
      return result(typeof actual !== "string" || typeof c.value !== "string" ? `${c.attr} is ${show(actual)}, not text` : `${c.attr} is ${show(actual)}`);
    case "regex":
      return result(typeof actual !== "string" || typeof c.value !== "string" ? `${c.attr} is ${show(actual)}, not text` : `${c.attr} is ${show(actual)}, ${value ? "matching" : "not matching"} /${c.value}/`);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const x = numberOf(actual);
      return result(x === null || numberOf(c.value) === null ? `${c.attr} is ${show(actual)}, not a number` : `${c.attr} is ${x}`);
    }
    case "semver_eq":
    case "semver_gt":
    case "semver_gte":
    case "semver_lt":
    case "semver_lte":
      return result(!parseSemver(actual) || !parseSemver(c.value) ? `${c.attr} is ${show(actual)}, not a version` : `${c.attr} is version ${show(actual)}`);
    case "before":
    case "after":
      return result(timeOf(actual) === null || timeOf(c.value) === null ? `${c.attr} is ${show(actual)}, not a date` : `${c.attr} is ${show(actual)}`);
    default:
      return result(`unknown operator ${show((c as { op: unknown }).op)}`);
  }
}

/** Whether a rule that holds lets the unit through (its percentage and the unit's bucket). */
function rulePasses(gate: Gate, rule: GateRule, context: EvaluationContext): boolean {
  if (rule.passPercentage >= 100) return true;
  if (rule.passPercentage <= 0) return false;
  const unit = context[rule.unit ?? "user_id"];
  if (!isScalar(unit) || unit === "") return false;
  return bucketOf(gate.salt, String(unit)) < rule.passPercentage / 100;
}

function ruleDecision(gate: Gate, rule: GateRule, index: number, context: EvaluationContext): GateDecision {
  if (rule.passPercentage >= 100) return { value: true, ruleIndex: index, bucket: null, reason: "TARGETING_MATCH" };
  if (rule.passPercentage <= 0) return { value: false, ruleIndex: index, bucket: null, reason: "TARGETING_MATCH" };
  const unit = context[rule.unit ?? "user_id"];
  // No unit to bucket: a partial rollout cannot place it, so it stays out.
  if (!isScalar(unit) || unit === "") return { value: false, ruleIndex: index, bucket: null, reason: "SPLIT" };
  const bucket = bucketOf(gate.salt, String(unit));
  return { value: bucket < rule.passPercentage / 100, ruleIndex: index, bucket, reason: "SPLIT" };
}

/** What decidingRule reads of a rule: a gate's, a config's or a rollout's rules all have conditions. */
export type ConditionedRule = { name?: string; conditions: GateCondition[] };

/** The index of the first rule whose conditions all hold, or -1. */
function decidingRule(rules: readonly ConditionedRule[], context: EvaluationContext, ev: Evaluation, from: number): number {
  next: for (let i = from; i < rules.length; i++) {
    const conditions = rules[i]!.conditions;
    for (let j = 0; j < conditions.length; j++) if (!holds(conditions[j]!, context, ev)) continue next;
    return i;
  }
  return -1;
}

function decide(gate: Gate, context: EvaluationContext, ev: Evaluation): GateDecision {
  const index = decidingRule(gate.rules, context, ev, 0);
  return index < 0 ? { value: false, ruleIndex: null, bucket: null, reason: "DEFAULT" } : ruleDecision(gate, gate.rules[index]!, index, context);
}

function evaluation(options: EvaluatorOptions, compiled: Compiled = { regexes: new Map(), segments: new Map(), versions: new Map(), times: new Map() }): Evaluation {
  return { options, regexes: compiled.regexes, segments: compiled.segments, versions: compiled.versions, times: compiled.times, memo: new Map(), depth: 0, busy: false, inSegment: false };
}

/** After a call: the evaluator's state is ready for the next one. */
function reset(ev: Evaluation): void {
  ev.busy = false;
  ev.depth = 0;
  ev.inSegment = false;
  if (ev.memo.size !== 0) ev.memo.clear();
}

/**
 * An evaluator bound to a regex engine and a gate lookup. Compiled patterns
 * are kept for the evaluator's life (a snapshot's gates), so the hot path
 * never compiles. Within one call, each gate named by passes_gate /
 * fails_gate is evaluated once (see Evaluation), so the work of a call is
 * bounded by the rules of the gates it can reach, each counted once.
 */
export function createGateEvaluator(options: EvaluatorOptions) {
  const ev = evaluation(options);
  const explain = (gate: Gate, context: EvaluationContext, ev: Evaluation): GateExplanation => {
    const rules: RuleOutcome[] = [];
    for (let i = 0; i < gate.rules.length; i++) {
      const rule = gate.rules[i]!;
      const conditions = rule.conditions.map((c) => conditionOutcome(c, context, ev));
      const holds = conditions.every((c) => c.holds);
      rules.push({ index: i, name: rule.name, holds, conditions });
      if (holds) return { ...ruleDecision(gate, rule, i, context), rules };
    }
    return { value: false, ruleIndex: null, bucket: null, reason: "DEFAULT", rules };
  };
  /** Runs `fn` with this evaluator's state, or a fresh one when called re-entrantly. */
  const within = <T>(fn: (ev: Evaluation) => T): T => {
    if (ev.busy) return fn(evaluation(options, ev));
    ev.busy = true;
    try {
      return fn(ev);
    } finally {
      reset(ev);
    }
  };
  const outcomes = (rules: readonly ConditionedRule[], context: EvaluationContext, ev: Evaluation): RuleOutcome[] => {
    const out: RuleOutcome[] = [];
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      const conditions = rule.conditions.map((c) => conditionOutcome(c, context, ev));
      const holds = conditions.every((c) => c.holds);
      out.push({ index: i, name: rule.name, holds, conditions });
      if (holds) break;
    }
    return out;
  };
  return {
    /** The index of the first rule whose conditions all hold, or -1 (a config's rules: src/sdk/configs.ts decides what it serves). */
    firstHolding(rules: readonly ConditionedRule[], context: EvaluationContext, from = 0): number {
      // Every config evaluation comes through here: as evaluate, no closure or object per call.
      if (ev.busy) return decidingRule(rules, context, evaluation(options, ev), from);
      ev.busy = true;
      try {
        return decidingRule(rules, context, ev, from);
      } finally {
        reset(ev);
      }
    },
    /** Every rule up to the first that holds, with each condition's outcome and why (explain of a config). */
    ruleOutcomes(rules: readonly ConditionedRule[], context: EvaluationContext): RuleOutcome[] {
      return within((ev) => outcomes(rules, context, ev));
    },
    evaluate(gate: Gate, context: EvaluationContext): GateDecision {
      // A call made during another (re-entrant, from a caller's regex engine or gate lookup) gets its own state.
      if (ev.busy) return decide(gate, context, evaluation(options, ev));
      ev.busy = true;
      try {
        return decide(gate, context, ev);
      } finally {
        reset(ev);
      }
    },
    /** The decision, plus every rule up to the deciding one with each condition's outcome and why. */
    explain(gate: Gate, context: EvaluationContext): GateExplanation {
      if (ev.busy) return explain(gate, context, evaluation(options, ev));
      ev.busy = true;
      try {
        return explain(gate, context, ev);
      } finally {
        reset(ev);
      }
    },
  };
}
