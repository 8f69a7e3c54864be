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
export type EvaluationContext = Record<string, unknown>;

/**
 * The context with its unit: `user_id`, else OpenFeature's `targetingKey` (a `user_id` of null counts as none).
 * The SDK and OFREP both evaluate through it, so one unit gets one answer either way.
 */
export function withUserId(context: EvaluationContext): EvaluationContext {
  return (context.user_id === undefined || context.user_id === null) && context.targetingKey !== undefined ? { ...context, user_id: context.targetingKey } : context;
}

/** A compiled pattern: `test` must run in linear time (RE2). */
export type CompiledRegex = { test(value: string): boolean };

export type EvaluatorOptions = {
  compileRegex(pattern: string): CompiledRegex;
  /** Another gate by name, for passes_gate / fails_gate; undefined when there is none. */
  gate?(name: string): Gate | undefined;
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

/** Prerequisite gates nest at most this deep; deeper (or a cycle that slipped in) evaluates to off. */
const MAX_GATE_DEPTH = 10;

/** FNV-1a 32 over UTF-16 code units. */
function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h >>> 0;
}

/**
 * The unit's bucket in [0, 1), in steps of 1/10000: GrowthBook's hash v2,
 * `fnv(String(fnv(seed + id))) % 10000 / 10000` (vectors in NOTES.md).
 */
export function bucketOf(seed: string, id: string): number {
  return (fnv1a32(String(fnv1a32(seed + id))) % 10000) / 10000;
}

type Semver = { parts: [number, number, number]; pre: string[] };

/** `1.2.3`, `v1.2`, `1.2.3-beta.2` (build metadata ignored); null when it is not one. */
export function parseSemver(text: unknown): Semver | null {
  if (typeof text !== "string") return null;
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

/** A number from a number or a numeric string; null otherwise. */
function numberOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && value.trim() !== "" && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/** Epoch milliseconds from an ISO date string or a number of milliseconds; null otherwise. */
function timeOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** Scalars are equal as numbers when both read as numbers, else as text (so `"42"` equals `42`, `true` equals `"true"`). */
function sameScalar(a: Scalar, b: Scalar): boolean {
  const x = numberOf(a);
  const y = numberOf(b);
  if (x !== null && y !== null) return x === y;
  return String(a) === String(b);
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

type Evaluation = { options: EvaluatorOptions; regexes: Map<string, CompiledRegex>; depth: number; visiting: Set<string> };

function conditionOutcome(c: GateCondition, context: EvaluationContext, ev: Evaluation): ConditionOutcome {
  const has = Object.prototype.hasOwnProperty.call(context, c.attr) && context[c.attr] !== null && context[c.attr] !== undefined;
  const actual = has ? context[c.attr] : undefined;
  const result = (holds: boolean, why: string): ConditionOutcome => ({ attr: c.attr, op: c.op, holds, why });
  const missing = () => result(false, `${c.attr} is not in the context`);
  switch (c.op) {
    case "exists":
      return result(has, has ? `${c.attr} is set` : `${c.attr} is not in the context`);
    case "not_exists":
      return result(!has, has ? `${c.attr} is set` : `${c.attr} is not in the context`);
    case "eq":
    case "neq": {
      // A missing attribute equals nothing, so `neq` holds for it.
      const equal = has && isScalar(actual) && isScalar(c.value) && sameScalar(actual, c.value);
      const holds = c.op === "eq" ? equal : !equal;
      return result(holds, has ? `${c.attr} is ${show(actual)}${equal ? "" : `, not ${show(c.value)}`}` : `${c.attr} is not in the context`);
    }
    case "in":
    case "not_in": {
      const list = Array.isArray(c.value) ? (c.value as unknown[]) : [];
      const found = has && isScalar(actual) && list.some((v) => isScalar(v) && sameScalar(actual, v));
      return result(c.op === "in" ? found : !found, has ? `${c.attr} is ${show(actual)}, ${found ? "in" : "not in"} the list` : `${c.attr} is not in the context`);
    }
    case "contains":
    case "starts_with":
    case "ends_with": {
      if (!has) return missing();
      if (typeof actual !== "string" || typeof c.value !== "string") return result(false, `${c.attr} is ${show(actual)}, not text`);
      const holds = c.op === "contains" ? actual.includes(c.value) : c.op === "starts_with" ? actual.startsWith(c.value) : actual.endsWith(c.value);
      return result(holds, `${c.attr} is ${show(actual)}`);
    }
    case "regex": {
      if (!has) return missing();
      if (typeof actual !== "string" || typeof c.value !== "string") return result(false, `${c.attr} is ${show(actual)}, not text`);
      let re = ev.regexes.get(c.value);
      if (!re) {
        try {
          re = ev.options.compileRegex(c.value);
        } catch {
          // The server refuses such a pattern when it is saved; an engine here that cannot compile it never matches rather than throw.
          re = { test: () => false };
        }
        ev.regexes.set(c.value, re);
      }
      const holds = re.test(actual);
      return result(holds, `${c.attr} is ${show(actual)}, ${holds ? "matching" : "not matching"} /${c.value}/`);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (!has) return missing();
      const x = numberOf(actual);
      const y = numberOf(c.value);
      if (x === null || y === null) return result(false, `${c.attr} is ${show(actual)}, not a number`);
      const holds = c.op === "gt" ? x > y : c.op === "gte" ? x >= y : c.op === "lt" ? x < y : x <= y;
      return result(holds, `${c.attr} is ${x}`);
    }
    case "semver_eq":
    case "semver_gt":
    case "semver_gte":
    case "semver_lt":
    case "semver_lte": {
      if (!has) return missing();
      const x = parseSemver(actual);
      const y = parseSemver(c.value);
      if (!x || !y) return result(false, `${c.attr} is ${show(actual)}, not a version`);
      const order = compareSemver(x, y);
      const holds = c.op === "semver_eq" ? order === 0 : c.op === "semver_gt" ? order > 0 : c.op === "semver_gte" ? order >= 0 : c.op === "semver_lt" ? order < 0 : order <= 0;
      return result(holds, `${c.attr} is version ${show(actual)}`);
    }
    case "before":
    case "after": {
      if (!has) return missing();
      const x = timeOf(actual);
      const y = timeOf(c.value);
      if (x === null || y === null) return result(false, `${c.attr} is ${show(actual)}, not a date`);
      return result(c.op === "before" ? x < y : x > y, `${c.attr} is ${show(actual)}`);
    }
    case "passes_gate":
    case "fails_gate": {
      const name = String(c.value);
      const other = ev.options.gate?.(name);
      const passes = other !== undefined && !ev.visiting.has(name) && ev.depth < MAX_GATE_DEPTH && decide(other, context, { ...ev, depth: ev.depth + 1, visiting: new Set(ev.visiting).add(name) }).value;
      return result(c.op === "passes_gate" ? passes : !passes, other === undefined ? `gate ${name} does not exist (off)` : `gate ${name} is ${passes ? "on" : "off"}`);
    }
    default:
      return result(false, `unknown operator ${show((c as { op: unknown }).op)}`);
  }
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

function decide(gate: Gate, context: EvaluationContext, ev: Evaluation): GateDecision {
  for (let i = 0; i < gate.rules.length; i++) {
    const rule = gate.rules[i]!;
    let holds = true;
    for (const c of rule.conditions) {
      if (!conditionOutcome(c, context, ev).holds) {
        holds = false;
        break;
      }
    }
    if (holds) return ruleDecision(gate, rule, i, context);
  }
  return { value: false, ruleIndex: null, bucket: null, reason: "DEFAULT" };
}

function evaluation(options: EvaluatorOptions): Evaluation {
  return { options, regexes: new Map(), depth: 0, visiting: new Set() };
}

/**
 * An evaluator bound to a regex engine and a gate lookup. Compiled patterns
 * are kept for the evaluator's life (a snapshot's gates), so the hot path
 * never compiles.
 */
export function createGateEvaluator(options: EvaluatorOptions) {
  const ev = evaluation(options);
  return {
    evaluate: (gate: Gate, context: EvaluationContext): GateDecision => decide(gate, context, ev),
    /** The decision, plus every rule up to the deciding one with each condition's outcome and why. */
    explain(gate: Gate, context: EvaluationContext): GateExplanation {
      const rules: RuleOutcome[] = [];
      for (let i = 0; i < gate.rules.length; i++) {
        const rule = gate.rules[i]!;
        const conditions = rule.conditions.map((c) => conditionOutcome(c, context, ev));
        const holds = conditions.every((c) => c.holds);
        rules.push({ index: i, name: rule.name, holds, conditions });
        if (holds) return { ...ruleDecision(gate, rule, i, context), rules };
      }
      return { value: false, ruleIndex: null, bucket: null, reason: "DEFAULT", rules };
    },
  };
}
