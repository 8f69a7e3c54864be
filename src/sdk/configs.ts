import type { ConditionedRule, EvaluationContext, GateCondition, RuleOutcome } from "./gates";
import { bucketOf } from "./gates";

/**
 * Targeted configs (issue 29): a config's state on an env is its default value plus an ordered list of
 * rules; the first rule whose conditions hold serves its value, or a split of values bucketed on a unit
 * attribute by the config's salt. The server, OFREP, the SDK and explain all decide through
 * `decideConfig`, so a unit gets one answer everywhere; the GrowthBook payload maps the same ranges.
 */

/** A unit's bucket is an integer in [0, BUCKETS): GrowthBook's hash v2 scaled (bucketOf gives k / 10000). */
export const BUCKETS = 10_000;

/** `[start, end)` in buckets. */
export type BucketRange = [number, number];

/**
 * One value of a split. `weight` is an integer share of 100. `ranges` (in the published snapshot only)
 * are the buckets the server gave the value: kept across publishes so that growing a weight only moves
 * units into that value (src/modules/configs/rules.ts); absent, the weights are laid out in order.
 */
export type SplitEntry = { value: unknown; weight: number; ranges?: BucketRange[] };

export type ConfigRule = {
  /** Shown in explanations and in the variant ("beta testers"). */
  name?: string;
  conditions: GateCondition[];
  /** Served when the conditions hold (a rule has `value` or `split`). */
  value?: unknown;
  split?: SplitEntry[];
  /** The context attribute bucketed by a split; default `user_id`. */
  unit?: string;
};

/** A config as the snapshot carries it: `rules` and `salt` only when the env has rules (other snapshots keep their bytes). */
export type PublishedConfig = { value: unknown; version: number; rules?: ConfigRule[]; salt?: string };

export type ConfigReason = "DEFAULT" | "TARGETING_MATCH" | "SPLIT";

export type ConfigDecision = {
  value: unknown;
  /** `default`, the deciding rule's label (its name, else `rule-N`), or `<label>/<M>` for the M-th value of its split. */
  variant: string;
  reason: ConfigReason;
  /** The rule that decided (0-based), or null. */
  ruleIndex: number | null;
  /** The unit's bucket in [0, 1) when a split decided, else null. */
  bucket: number | null;
};

export type ConfigExplanation = ConfigDecision & { rules: RuleOutcome[] };

/** What decideConfig needs of the gate evaluator (createGateEvaluator): conditions are the gates' own. */
export type RuleMatcher = {
  firstHolding(rules: readonly ConditionedRule[], context: EvaluationContext, from?: number): number;
  ruleOutcomes(rules: readonly ConditionedRule[], context: EvaluationContext): RuleOutcome[];
};

/** How a rule is named in variants and explanations: its name, else `rule-N` (1-based). */
export function ruleLabel(rule: ConfigRule, index: number): string {
  return rule.name ?? `rule-${index + 1}`;
}

/** The weights laid out in order: `[0, w1)`, `[w1, w1 + w2)`, ... (in buckets). */
export function contiguousRanges(split: readonly { weight: number }[]): BucketRange[][] {
  let start = 0;
  return split.map((e) => {
    const end = Math.min(BUCKETS, start + Math.round(e.weight * (BUCKETS / 100)));
    const ranges: BucketRange[] = end > start ? [[start, end]] : [];
    start = end;
    return ranges;
  });
}

/** Each split value's ranges: the published ones, or the weights in order. */
export function splitRanges(split: readonly SplitEntry[]): BucketRange[][] {
  return split.every((e) => Array.isArray(e.ranges)) ? split.map((e) => e.ranges!) : contiguousRanges(split);
}

const isUnit = (v: unknown): v is string | number | boolean => (typeof v === "string" && v !== "") || typeof v === "number" || typeof v === "boolean";

/**
 * The split value (index) whose ranges hold `bucket` (an integer in [0, BUCKETS)), or -1. Published ranges
 * are read in place (not through splitRanges' new arrays): this runs on every evaluation of a split.
 */
function entryAt(split: readonly SplitEntry[], bucket: number): number {
  let published = true;
  for (let j = 0; j < split.length; j++) if (!Array.isArray(split[j]!.ranges)) published = false;
  if (published) {
    for (let j = 0; j < split.length; j++) for (const [start, end] of split[j]!.ranges!) if (bucket >= start && bucket < end) return j;
    return -1;
  }
  // Rules the server never published (built by hand): the weights in order.
  const laid = contiguousRanges(split);
  for (let j = 0; j < laid.length; j++) for (const [start, end] of laid[j]!) if (bucket >= start && bucket < end) return j;
  return -1;
}

function served(config: PublishedConfig, rule: ConfigRule, index: number, context: EvaluationContext): ConfigDecision | null {
  if (rule.split === undefined) return { value: rule.value ?? null, variant: ruleLabel(rule, index), reason: "TARGETING_MATCH", ruleIndex: index, bucket: null };
  const unit = context[rule.unit ?? "user_id"];
  // No unit to bucket: the split cannot place it, so the rule is passed over (as GrowthBook skips a rule without its hash attribute).
  if (!isUnit(unit)) return null;
  const bucket = bucketOf(config.salt ?? "", String(unit));
  const j = entryAt(rule.split, Math.round(bucket * BUCKETS));
  if (j < 0) return null;
  return { value: rule.split[j]!.value ?? null, variant: `${ruleLabel(rule, index)}/${j + 1}`, reason: "SPLIT", ruleIndex: index, bucket };
}

const byDefault = (config: PublishedConfig): ConfigDecision => ({ value: config.value, variant: "default", reason: "DEFAULT", ruleIndex: null, bucket: null });

/** What the config serves this context: the first rule that holds (and, for a split, places the unit), else the default value. */
export function decideConfig(config: PublishedConfig, context: EvaluationContext, matcher: RuleMatcher): ConfigDecision {
  const rules = config.rules;
  if (!rules || rules.length === 0) return byDefault(config);
  for (let from = 0; from < rules.length; ) {
    const i = matcher.firstHolding(rules, context, from);
    if (i < 0) break;
    const decision = served(config, rules[i]!, i, context);
    if (decision) return decision;
    from = i + 1;
  }
  return byDefault(config);
}

/** The name of the rule that decides the context (null: the default, or an unnamed rule): what an experiment on a config's rule asks. */
export function decidedRuleName(config: PublishedConfig, context: EvaluationContext, matcher: RuleMatcher): string | null {
  const d = decideConfig(config, context, matcher);
  return d.ruleIndex === null ? null : (config.rules![d.ruleIndex]!.name ?? null);
}

/** The decision plus each rule up to the deciding one, every condition with its outcome and why. */
export function explainConfig(config: PublishedConfig, context: EvaluationContext, matcher: RuleMatcher): ConfigExplanation {
  const decision = decideConfig(config, context, matcher);
  const rules = config.rules ?? [];
  const outcomes: RuleOutcome[] = [];
  // Rules that held but could not place a unit-less context are shown as passed over, then the walk goes on.
  for (let from = 0; from < rules.length; ) {
    const shown = matcher.ruleOutcomes(rules.slice(from), context).map((o) => ({ ...o, index: o.index + from }));
    outcomes.push(...shown);
    const last = shown[shown.length - 1];
    if (!last || !last.holds || last.index === decision.ruleIndex) break;
    from = last.index + 1;
  }
  return { ...decision, rules: outcomes };
}
