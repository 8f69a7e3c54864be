import { validation } from "../../lib/errors";
import { LruCache } from "../../lib/lru";
import { regexProgramSize } from "../../lib/re2";
import { type GateCondition, type GateRule, MAX_GATE_DEPTH } from "../../sdk/gates";
import { EVALUATION_COST_MAX, LIST_ENTRIES_PER_UNIT, REGEX_UNITS_PER_INSTRUCTION } from "./types";

/**
 * The worst-case work of evaluating one gate for one context, counted
 * statically when rules are published (DECISIONS "Limits that keep one
 * request from stalling the server"). The evaluator (src/sdk/gates.ts)
 * evaluates each gate that passes_gate / fails_gate reach once per
 * evaluation and reads at most ATTRIBUTE_TEXT_MAX characters of an
 * attribute, so the cost of a gate is the sum of the costs of the conditions
 * of every gate it can reach, each gate counted once. One unit is about the
 * worst case of one condition on a 4,096-character attribute (~1 µs):
 * - a condition: 1;
 * - `in` / `not_in`: 1 more per LIST_ENTRIES_PER_UNIT entries of its list;
 * - `regex`: REGEX_UNITS_PER_INSTRUCTION more per instruction of its RE2
 *   program (RE2 is linear in pattern size times text length);
 * - `passes_gate` / `fails_gate`: 1, plus the other gate's own cost the first
 *   time the evaluation reaches it.
 */

/** Program sizes by pattern: every publish prices every pattern of the env's gates, compiled once here. */
const programSizes = new LruCache<string, number>(10_000);

function programSize(pattern: string): number {
  let size = programSizes.get(pattern);
  if (size === undefined) {
    try {
      size = regexProgramSize(pattern);
    } catch {
      // Refused when saved; one that reached the database anyway never matches, so it costs nothing to run.
      size = 0;
    }
    programSizes.set(pattern, size);
  }
  return size;
}

/**
 * What each segment adds to a condition naming it (in_segment / not_in_segment): its id list is one Set
 * lookup (counted in the condition's 1), its conditions cost what they would in a rule. Set by the
 * caller for one check (segmentCosts), since a segment's cost is the segments module's to know.
 */
let segmentCosts: ReadonlyMap<string, number> = new Map();

/** Runs `check` with each segment's cost known (by name). */
export function withSegmentCosts<T>(costs: ReadonlyMap<string, number>, check: () => T): T {
  const before = segmentCosts;
  segmentCosts = costs;
  try {
    return check();
  } finally {
    segmentCosts = before;
  }
}

/** One condition's own cost (a gate it names is counted separately, once). */
export function conditionCost(c: GateCondition): number {
  if (c.op === "in_segment" || c.op === "not_in_segment") return 1 + (segmentCosts.get(String(c.value)) ?? 0);
  if (c.op === "in" || c.op === "not_in") return 1 + Math.ceil((Array.isArray(c.value) ? c.value.length : 0) / LIST_ENTRIES_PER_UNIT);
  if (c.op === "regex" && typeof c.value === "string") return 1 + programSize(c.value) * REGEX_UNITS_PER_INSTRUCTION;
  return 1;
}

const isReference = (c: GateCondition) => c.op === "passes_gate" || c.op === "fails_gate";

function ownCost(rules: GateRule[]): number {
  let cost = 0;
  for (const r of rules) for (const c of r.conditions) cost += conditionCost(c);
  return cost;
}

/** Each published gate's rules on one env, by name (the gate being saved with its new rules in place). */
export type RuleGraph = Map<string, GateRule[]>;

type Pricing = { graph: RuleGraph; own: Map<string, number>; heights: Map<string, number> };

function pricing(graph: RuleGraph): Pricing {
  return { graph, own: new Map(), heights: new Map() };
}

function ownOf(p: Pricing, name: string): number {
  let cost = p.own.get(name);
  if (cost === undefined) p.own.set(name, (cost = ownCost(p.graph.get(name) ?? [])));
  return cost;
}

/** Longest chain of references below a gate (0: it names none that exist); a cycle that slipped in counts as ending. */
function heightOf(p: Pricing, name: string): number {
  const known = p.heights.get(name);
  if (known !== undefined) return known;
  p.heights.set(name, 0);
  let height = 0;
  for (const r of p.graph.get(name) ?? []) for (const c of r.conditions) if (isReference(c) && p.graph.has(String(c.value))) height = Math.max(height, 1 + heightOf(p, String(c.value)));
  p.heights.set(name, height);
  return height;
}

/** Adds the gates `name` reaches (itself included) that `seen` lacks; answers their own costs' sum. */
function reach(p: Pricing, name: string, seen: Set<string>): number {
  if (seen.has(name) || !p.graph.has(name)) return 0;
  seen.add(name);
  let cost = ownOf(p, name);
  for (const r of p.graph.get(name)!) for (const c of r.conditions) if (isReference(c)) cost += reach(p, String(c.value), seen);
  return cost;
}

type Priced = { cost: number; depth: number; over?: { rule: number; condition: number }; deepest?: { rule: number; condition: number } };

/** One evaluation of `rules` (a gate's, or a rollout's new ones) over the graph: its cost, where it first goes over the bound, and its deepest chain. */
function price(p: Pricing, rules: GateRule[]): Priced {
  const seen = new Set<string>();
  const out: Priced = { cost: 0, depth: 0 };
  rules.forEach((r, i) =>
    r.conditions.forEach((c, j) => {
      out.cost += conditionCost(c);
      if (isReference(c)) {
        const name = String(c.value);
        out.cost += reach(p, name, seen);
        if (p.graph.has(name)) {
          const depth = 1 + heightOf(p, name);
          if (depth > out.depth) {
            out.depth = depth;
            out.deepest = { rule: i, condition: j };
          }
        }
      }
      if (out.cost > EVALUATION_COST_MAX && !out.over) out.over = { rule: i, condition: j };
    }),
  );
  return out;
}

const HOW = `a condition costs 1, a list 1 more per ${LIST_ENTRIES_PER_UNIT} entries, a regex ${REGEX_UNITS_PER_INSTRUCTION} per RE2 instruction, and each gate reached through passes_gate or fails_gate counts once`;

function refuse(gate: string, field: string, rules: GateRule[], priced: Priced): never {
  const at = priced.over!;
  const c = rules[at.rule]!.conditions[at.condition]!;
  const alone = conditionCost(c);
  if (alone > EVALUATION_COST_MAX) {
    throw validation(
      `Gate ${gate}: one condition would make an evaluation too costly`,
      `${field}[${at.rule}].conditions[${at.condition}].value: this pattern alone costs ${alone} units to evaluate (${c.op === "regex" ? `an RE2 program of ${programSize(String(c.value))} instructions × ${REGEX_UNITS_PER_INSTRUCTION}` : "its list"}), over the limit of ${EVALUATION_COST_MAX} for one evaluation; simplify it`,
    );
  }
  throw validation(
    `Gate ${gate}: evaluating it once could cost ${priced.cost} units, over the limit of ${EVALUATION_COST_MAX}`,
    `${field}[${at.rule}].conditions[${at.condition}]: gate ${gate} goes over the limit of ${EVALUATION_COST_MAX} units for one evaluation here (${priced.cost} in all; ${HOW}); use fewer or simpler conditions`,
  );
}

function refuseDepth(gate: string, field: string, priced: Priced): never {
  const at = priced.deepest!;
  throw validation(
    `Gate ${gate}: prerequisites would nest ${priced.depth} deep, at most ${MAX_GATE_DEPTH}`,
    `${field}[${at.rule}].conditions[${at.condition}].value: this prerequisite chain is ${priced.depth} gates deep; at most ${MAX_GATE_DEPTH} (deeper gates evaluate as off)`,
  );
}

/**
 * Whether `rules`, which reach the gate being changed, go over the bound with the change (`next`) further than they
 * were before it (`previous`, with `beforeRules`, absent for rules the change adds): rules already over it from
 * before the bound existed may stay so, never grow. The priced rules with the bound they pass, or undefined.
 */
function worsened(rules: GateRule[], beforeRules: GateRule[] | undefined, previous: Pricing, next: Pricing): (Priced & { bound: "cost" | "depth" }) | undefined {
  const now = price(next, rules);
  if (now.cost <= EVALUATION_COST_MAX && now.depth <= MAX_GATE_DEPTH) return undefined;
  const then = beforeRules ? price(previous, beforeRules) : { cost: 0, depth: 0 };
  if (now.cost > Math.max(EVALUATION_COST_MAX, then.cost)) return { ...now, bound: "cost" };
  if (now.depth > Math.max(MAX_GATE_DEPTH, then.depth)) return { ...now, bound: "depth" };
  return undefined;
}

/**
 * Refuses rules whose evaluation could cost more than EVALUATION_COST_MAX
 * or nest prerequisites deeper than MAX_GATE_DEPTH. `gate` is the gate being
 * saved; `before` and `after` are the env's published rule graphs without
 * and with the change. Every other gate that reaches it is priced too: one
 * it pushes over the bound (further than it was, for one already over it
 * from before the bound existed) refuses the change, naming that gate.
 */
export function checkEvaluationCost(gate: string, rules: GateRule[], before: RuleGraph, after: RuleGraph, field = "rules"): void {
  const next = pricing(after);
  const own = price(next, rules);
  if (own.over) refuse(gate, field, rules, own);
  if (own.depth > MAX_GATE_DEPTH) refuseDepth(gate, field, own);
  if (!after.has(gate)) return;
  const previous = pricing(before);
  for (const [name, theirs] of after) {
    if (name === gate || !reaches(next, name, gate)) continue;
    const now = worsened(theirs, before.get(name), previous, next);
    if (now?.bound === "cost") {
      throw validation(
        `Gate ${name}, which depends on ${gate}, would cost ${now.cost} units to evaluate, over the limit of ${EVALUATION_COST_MAX}`,
        `${field}: gate ${name} reaches gate ${gate} through passes_gate/fails_gate (its rules[${now.over!.rule}]) and would then cost ${now.cost} units for one evaluation, over the limit of ${EVALUATION_COST_MAX} (${HOW})`,
      );
    }
    if (now?.bound === "depth") {
      throw validation(
        `Gate ${name}, which depends on ${gate}, would nest prerequisites ${now.depth} deep, at most ${MAX_GATE_DEPTH}`,
        `${field}: gate ${name} reaches gate ${gate} through passes_gate/fails_gate (its rules[${now.deepest!.rule}]) and its prerequisite chain would be ${now.depth} gates deep; at most ${MAX_GATE_DEPTH}`,
      );
    }
  }
}

function reaches(p: Pricing, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const name = stack.pop()!;
    for (const r of p.graph.get(name) ?? [])
      for (const c of r.conditions) {
        if (!isReference(c)) continue;
        const next = String(c.value);
        if (next === to) return true;
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
  }
  return false;
}

/**
 * Refuses a change of `gate` (its env's rule graphs `before` and `after`) that would take the evaluation of a config's
 * rules naming it, directly or through other gates, over the bound (further than it was, for rules already over it),
 * naming the config. Config rules cost what their conditions cost as gate rules (configs/rules.ts asGateRules).
 */
export function checkConfigsReaching(gate: string, configs: { name: string; rules: GateRule[] }[], before: RuleGraph, after: RuleGraph, field = "rules"): void {
  if (configs.length === 0) return;
  const next = pricing(after);
  const previous = pricing(before);
  const reached = (rules: GateRule[]) =>
    rules.some((r) => r.conditions.some((c) => isReference(c) && (String(c.value) === gate || reaches(next, String(c.value), gate))));
  for (const config of configs) {
    if (!reached(config.rules)) continue;
    const now = worsened(config.rules, config.rules, previous, next);
    if (now?.bound === "cost") {
      throw validation(
        `Config ${config.name}, whose rules name gate ${gate}, would cost ${now.cost} units to evaluate, over the limit of ${EVALUATION_COST_MAX}`,
        `${field}: config ${config.name}'s rules[${now.over!.rule}] reach gate ${gate} through passes_gate/fails_gate and would then cost ${now.cost} units for one evaluation, over the limit of ${EVALUATION_COST_MAX} (${HOW}); simplify these rules or the config's`,
      );
    }
    if (now?.bound === "depth") {
      throw validation(
        `Config ${config.name}, whose rules name gate ${gate}, would nest prerequisites ${now.depth} deep, at most ${MAX_GATE_DEPTH}`,
        `${field}: config ${config.name}'s rules[${now.deepest!.rule}] reach gate ${gate} and their prerequisite chain would be ${now.depth} gates deep; at most ${MAX_GATE_DEPTH}`,
      );
    }
  }
}

/** A rollout's new rules of a gate: evaluated in place of the published ones, over the published graph. */
export function checkRolloutCost(gate: string, rules: GateRule[], published: RuleGraph, field = "rules"): void {
  const priced = price(pricing(published), rules);
  if (priced.over) refuse(gate, field, rules, priced);
  if (priced.depth > MAX_GATE_DEPTH) refuseDepth(gate, field, priced);
}
