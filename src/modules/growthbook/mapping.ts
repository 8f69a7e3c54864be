/**
 * The published snapshot as GrowthBook's SDK payload (`GET /api/features/{key}`), so that GrowthBook's SDKs
 * evaluate svc's killswitches, configs, gates and experiments locally with svc's own buckets (both use
 * GrowthBook's hash v2), and segments' id lists as saved groups (`savedGroups`, `$inGroup`). Pure: it reads only the snapshot and src/sdk, and is exported for the edge relay,
 * which answers the same paths from its copy of the snapshot. The table of what maps to what, and what
 * cannot be mapped, is in docs/sdk.md ("GrowthBook SDKs").
 */
import { BUCKETS, type PublishedConfig, splitRanges } from "../../sdk/configs";
import { type Gate, type GateRule, type PublishedSegment, bucketOf } from "../../sdk/gates";
import { type ExperimentVariant, type NamedExperiment, type PublishedExperiment, indexOverrides } from "../../sdk/experiments";
import { type PublishedRollout, indexRollouts } from "../../sdk/rollouts";
import { type PublishedUniverse, type SegmentRange, SEGMENTS } from "../../sdk/universes";
import type { Snapshot } from "../delivery/snapshot";
import { type GbCondition, type GbParentCondition, type MappedCondition, NEVER, allOf, mapCondition, savedGroupValues, segmentMembership } from "./conditions";

export type { GbCondition, GbParentCondition } from "./conditions";

type Range = [number, number];
export type GbFilter = { attribute: string; seed: string; hashVersion: 2; ranges: Range[] };
export type GbRule = {
  condition?: GbCondition;
  parentConditions?: GbParentCondition[];
  filters?: GbFilter[];
  force?: unknown;
  range?: Range;
  seed?: string;
  hashAttribute?: string;
  hashVersion?: 2;
  key?: string;
  name?: string;
  variations?: unknown[];
  ranges?: Range[];
  meta?: { key: string; name: string; passthrough?: boolean }[];
};
export type GbFeature = { defaultValue: unknown; rules?: GbRule[] };
/**
 * `savedGroups`: each id-list segment the mapped rules name, by segment name (GrowthBook's `$inGroup` reads
 * it); present only when there is one, so a payload without segments keeps its bytes.
 */
export type GbPayload = { status: 200; features: Record<string, GbFeature>; experiments: never[]; dateUpdated: string; savedGroups?: Record<string, (string | number)[]> };
/** A construct GrowthBook's SDKs cannot evaluate as svc does, and what the payload serves instead. */
export type Unmapped = { feature: string; construct: string; served: string };

/** A gate's own rules, without its experiments and rollouts, for prerequisites that read it (svc's passes_gate does). */
export const GATE_RULES_PREFIX = "$gate:";

type PublishedGate = Gate & { version: number };

/**
 * The smallest bucket index k (0..10,000) at which `reached(k / 10000)` holds, as a range bound: GrowthBook's
 * `n < k / 10000` then holds for exactly the buckets where svc's own comparison fails (both compute a unit's
 * bucket as the same double), whatever rounding svc's `bucket * total < cumulative` meets at the boundary.
 */
function boundary(reached: (bucket: number) => boolean): number {
  let low = 0;
  let high = SEGMENTS;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (reached(mid / SEGMENTS)) high = mid;
    else low = mid + 1;
  }
  return low / SEGMENTS;
}

/** `[start, end)` segments minus the holdout, as GrowthBook filter ranges (segment k is bucket k / 10000). */
function allocationRanges(allocation: SegmentRange, holdout: SegmentRange | null): Range[] {
  const pieces: [number, number][] = holdout
    ? [
        [allocation[0], Math.min(allocation[1], holdout[0])],
        [Math.max(allocation[0], holdout[1]), allocation[1]],
      ]
    : [[allocation[0], allocation[1]]];
  return pieces.filter(([a, b]) => a < b).map(([a, b]) => [a / SEGMENTS, b / SEGMENTS]);
}

/**
 * The date stamp GrowthBook SDKs compare to spot a new payload (they ignore one with the same stamp): a
 * version, not a wall time, derived from the snapshot alone so that every server and relay serves the same
 * bytes: the revision in seconds after 1970, the epoch's hash in its milliseconds (a restored database
 * restarts revisions, and must not repeat a stamp with other content).
 */
export function dateUpdatedOf(snapshot: Pick<Snapshot, "epoch" | "revision">): string {
  let h = 0;
  for (let i = 0; i < snapshot.epoch.length; i++) h = (Math.imul(h, 31) + snapshot.epoch.charCodeAt(i)) >>> 0;
  return new Date(snapshot.revision * 1000 + (h % 1000)).toISOString();
}

class Mapper {
  readonly features: Record<string, GbFeature> = {};
  readonly unmapped: Unmapped[] = [];
  private readonly gates: Record<string, PublishedGate>;
  private readonly universes: Record<string, PublishedUniverse>;
  private readonly experiments: Record<string, PublishedExperiment>;
  private readonly overrides;
  private readonly rollouts;
  /** Gates with a construct GrowthBook cannot evaluate: served off, to everyone. */
  private readonly offGates = new Map<string, string>();
  private readonly segments: Record<string, PublishedSegment>;
  /** Each segment's membership condition, mapped once. */
  private readonly memberships = new Map<string, MappedCondition>();
  /** The saved groups the mapped rules read (id lists only). */
  readonly savedGroups: Record<string, (string | number)[]> = {};

  constructor(private readonly snapshot: Snapshot) {
    this.gates = (snapshot.gates ?? {}) as Record<string, PublishedGate>;
    this.universes = (snapshot.universes ?? {}) as Record<string, PublishedUniverse>;
    this.experiments = (snapshot.experiments ?? {}) as Record<string, PublishedExperiment>;
    this.overrides = indexOverrides(this.experiments);
    this.rollouts = indexRollouts(snapshot.rollouts as Record<string, PublishedRollout> | undefined);
    this.segments = (snapshot.segments ?? {}) as Record<string, PublishedSegment>;
  }

  /** "In segment `name`": its id list as a saved group of that name, its conditions inlined, `$or` of both (svc's inSegment). */
  segment = (name: string): MappedCondition => {
    let mapped = this.memberships.get(name);
    if (mapped) return mapped;
    const s = this.has(this.segments, name) ? this.segments[name]! : undefined;
    // A segment the snapshot lacks has no one in it (svc's evaluator says so too).
    if (!s) mapped = { condition: NEVER };
    else {
      const ids = Array.isArray(s.ids) && s.ids.length > 0 ? s.ids : undefined;
      mapped = segmentMembership(s.attribute ?? "user_id", ids ? name : undefined, Array.isArray(s.conditions) ? s.conditions : []);
      if ("unmappable" in mapped) mapped = { unmappable: `segment ${name}: ${mapped.unmappable}` };
      else if (ids) this.savedGroups[name] = savedGroupValues(ids);
    }
    this.memberships.set(name, mapped);
    return mapped;
  };

  private has<V>(map: Record<string, V>, name: string): boolean {
    return Object.hasOwn(map, name);
  }

  /** The feature holding gate `name`'s own rules (what svc's passes_gate evaluates), or undefined when svc has no such gate. */
  gateKey = (name: string): string | undefined => {
    if (!this.has(this.gates, name)) return undefined;
    const plain = !this.overrides.gates.has(name) && !this.rollouts.gates.has(name) && !this.has(this.snapshot.killswitches, name);
    return plain ? name : GATE_RULES_PREFIX + name;
  };

  /** A gate's rules as GrowthBook rules (a rule's conditions holding decides: a partial rule's other units get false). */
  private gateRules(gate: Gate, rules: GateRule[], extra?: { filters?: GbFilter[]; condition?: GbCondition }): GbRule[] | string {
    const out: GbRule[] = [];
    for (const rule of rules) {
      const conditions: GbCondition[] = extra?.condition ? [extra.condition] : [];
      const parents: GbParentCondition[] = [];
      for (const c of rule.conditions) {
        const m = mapCondition(c, this.gateKey, this.segment);
        if ("unmappable" in m) return m.unmappable;
        if ("condition" in m) conditions.push(m.condition);
        if ("parent" in m) parents.push(m.parent);
      }
      const base: GbRule = {};
      const condition = allOf(conditions);
      if (condition) base.condition = condition;
      if (parents.length > 0) base.parentConditions = parents;
      if (extra?.filters) base.filters = extra.filters;
      const pct = rule.passPercentage;
      if (pct >= 100 || pct <= 0) {
        out.push({ ...base, force: pct >= 100 });
        continue;
      }
      const end = boundary((bucket) => !(bucket < pct / 100));
      out.push({ ...base, force: true, range: [0, end], seed: gate.salt, hashAttribute: rule.unit ?? "user_id", hashVersion: 2 });
      // Units outside the percentage stop here, as in svc (the first rule that holds decides).
      out.push({ ...base, force: false });
    }
    return out;
  }

  /** A gate's rules as its published rules, or as a running rollout's stage splits them. */
  private gateRulesWithRollout(name: string, gate: PublishedGate): GbRule[] | string {
    const found = this.rollouts.gates.get(name);
    if (!found || found.rollout.kind !== "gate") return this.gateRules(gate, gate.rules);
    const { rollout } = found;
    const end = boundary((bucket) => !(bucket * 100 < rollout.percent));
    const stage = (ranges: Range[]): GbFilter[] => [{ attribute: "user_id", seed: rollout.salt, hashVersion: 2, ranges }];
    const rolled = this.gateRules(gate, rollout.rules, { filters: stage([[0, end]]) });
    const kept = this.gateRules(gate, gate.rules, { filters: stage([[end, 1]]) });
    // Units without a user_id keep the published rules (GrowthBook filters them out of both ranges above).
    const noUnit = this.gateRules(gate, gate.rules, { condition: { $or: [{ user_id: { $exists: false } }, { user_id: "" }] } });
    for (const part of [rolled, kept, noUnit]) if (typeof part === "string") return part;
    return [...(noUnit as GbRule[]), ...(rolled as GbRule[]), ...(kept as GbRule[])];
  }

  /** An experiment as one GrowthBook experiment rule, or null when it assigns no one (svc's reasons: no universe, no gate...). */
  private experimentRule(name: string, experiment: PublishedExperiment, value: (v: ExperimentVariant) => { value: unknown; passthrough?: boolean }): GbRule | null | string {
    const universe = this.has(this.universes, experiment.universe) ? this.universes[experiment.universe]! : undefined;
    if (!universe) return null;
    if (experiment.gate !== null && this.gateKey(experiment.gate) === undefined) return null;
    const variants = experiment.variants;
    let total = 0;
    for (const v of variants) total += v.weight > 0 ? v.weight : 0;
    if (total <= 0) return null;
    if (variants.length < 2) return "an experiment with one variant (GrowthBook needs two)";
    const ranges: Range[] = [];
    let cumulative = 0;
    let start = 0;
    for (const v of variants) {
      cumulative += v.weight > 0 ? v.weight : 0;
      const c = cumulative;
      // svc picks the first variant whose cumulative weight exceeds bucket * total.
      const end = v === variants[variants.length - 1] ? 1 : boundary((bucket) => !(bucket * total < c));
      ranges.push([start, Math.max(start, end)]);
      start = Math.max(start, end);
    }
    const values = variants.map(value);
    const rule: GbRule = {
      key: name,
      // trackingCallback posts `$exposure:<experiment.name>`: svc's exposure event (exposureEventName) needs the id.
      name: experiment.id,
      seed: experiment.salt,
      hashVersion: 2,
      hashAttribute: universe.unit_type,
      variations: values.map((v) => v.value ?? null),
      ranges,
      meta: variants.map((v, i) => ({ key: v.key, name: v.key, ...(values[i]!.passthrough ? { passthrough: true } : {}) })),
      filters: [{ attribute: universe.unit_type, seed: universe.salt, hashVersion: 2, ranges: allocationRanges(experiment.allocation, universe.holdout_range) }],
    };
    if (experiment.gate !== null) rule.parentConditions = [{ id: this.gateKey(experiment.gate)!, condition: { value: true } }];
    return rule;
  }

  /**
   * The experiments whose variants override gate or config `name`: the first that assigns the unit decides
   * (its variants that leave `name` alone pass through to the next rules). Within one universe allocations
   * never overlap, so a later experiment there never assigns a unit an earlier one took; across universes they
   * may, and GrowthBook would try the later one after a pass-through where svc stops: those are left out.
   */
  private overrideRules(feature: string, kind: "gate" | "config", list: NamedExperiment[] | undefined): GbRule[] {
    if (!list) return [];
    const rules: GbRule[] = [];
    let universe: string | undefined;
    for (const { name, experiment } of list) {
      if (universe !== undefined && experiment.universe !== universe) {
        this.unmapped.push({ feature, construct: `experiment ${name} overriding it from a second universe`, served: `${feature} without ${name}'s override` });
        continue;
      }
      // An experiment on one of a config's rules takes the units that rule decides; GrowthBook has no "decided by rule N" to filter on.
      if (kind === "config" && experiment.variants.some((v) => v.override?.kind === "config" && v.override.name === feature && v.override.rule !== undefined)) {
        this.unmapped.push({ feature, construct: `experiment ${name} on one of its rules`, served: `${feature} without ${name}'s override` });
        continue;
      }
      const rule = this.experimentRule(name, experiment, (v) => {
        const o = v.override;
        return o && o.kind === kind && o.name === feature ? { value: o.value } : { value: null, passthrough: true };
      });
      if (typeof rule === "string") {
        this.unmapped.push({ feature, construct: `${rule}: ${name}`, served: `${feature} without ${name}'s override` });
        continue;
      }
      if (rule) {
        universe = experiment.universe;
        rules.push(rule);
      }
    }
    return rules;
  }

  private addGates(): void {
    for (const [name, gate] of Object.entries(this.gates)) {
      const own = this.gateRulesWithRollout(name, gate);
      if (typeof own === "string") this.offGates.set(name, own);
    }
    for (const [name, gate] of Object.entries(this.gates)) {
      const off = this.offGates.get(name) ?? this.offParent(gate);
      const own = off ? [] : (this.gateRulesWithRollout(name, gate) as GbRule[]);
      if (off) this.unmapped.push({ feature: name, construct: off, served: "false to every unit (the gate is off)" });
      const key = this.gateKey(name)!;
      if (key !== name) this.features[key] = { defaultValue: false, rules: off ? [] : (this.gateRules(gate, gate.rules) as GbRule[]) };
      if (this.has(this.snapshot.killswitches, name)) continue;
      const rules = off ? [] : [...this.overrideRules(name, "gate", this.overrides.gates.get(name)), ...own];
      this.features[name] = rules.length > 0 ? { defaultValue: false, rules } : { defaultValue: false };
    }
  }

  /** A gate that reads (through passes_gate / fails_gate, at any depth) a gate served off is off too. */
  private offParent(gate: Gate, depth = 0): string | undefined {
    if (depth > 10) return "a prerequisite chain deeper than 10";
    for (const rule of gate.rules) {
      for (const c of rule.conditions) {
        if (c.op !== "passes_gate" && c.op !== "fails_gate") continue;
        const name = String(c.value);
        if (!this.has(this.gates, name)) continue;
        const off = this.offGates.get(name) ?? this.offParent(this.gates[name]!, depth + 1);
        if (off) return `prerequisite gate ${name}: ${off}`;
      }
    }
    return undefined;
  }

  private addConfigs(): void {
    for (const [name, config] of Object.entries(this.snapshot.configs)) {
      if (this.has(this.snapshot.killswitches, name) || this.has(this.gates, name)) continue;
      const rules = this.overrideRules(name, "config", this.overrides.configs.get(name));
      const found = this.rollouts.configs.get(name);
      if (found && found.rollout.kind === "config") {
        const { rollout } = found;
        const end = boundary((bucket) => !(bucket * 100 < rollout.percent));
        if (rollout.rules) {
          // Units in the stage are served by the rollout's rules (then its default value), filtered on the stage's range.
          const filters: GbFilter[] = [{ attribute: "user_id", seed: rollout.salt, hashVersion: 2, ranges: [[0, end]] }];
          const rolled = this.configRules({ value: rollout.value, version: config.version, rules: rollout.rules, salt: config.salt ?? name }, filters);
          if (typeof rolled === "string") this.unmapped.push({ feature: name, construct: rolled, served: "the published rules to every unit (the rollout's rules are not served)" });
          else rules.push(...rolled, { force: rollout.value, filters });
        } else rules.push({ force: rollout.value, range: [0, end], seed: rollout.salt, hashAttribute: "user_id", hashVersion: 2 });
      }
      const own = this.configRules(config);
      if (typeof own === "string") this.unmapped.push({ feature: name, construct: own, served: "the default value to every unit its rules would decide" });
      else rules.push(...own);
      this.features[name] = rules.length > 0 ? { defaultValue: config.value, rules } : { defaultValue: config.value };
    }
  }

  /**
   * A config's own rules (issue 29): a value rule is a force rule under its conditions; a split is one
   * force rule per bucket range of each value (the server's ranges, seeded by the config's salt, hash v2),
   * so GrowthBook places every unit where svc does, and skips the rule for a unit without the attribute
   * as svc does. A rule GrowthBook cannot evaluate drops all of them (the default value, listed as unmapped).
   */
  private configRules(config: PublishedConfig, filters?: GbFilter[]): GbRule[] | string {
    const out: GbRule[] = [];
    for (const rule of config.rules ?? []) {
      const conditions: GbCondition[] = [];
      const parents: GbParentCondition[] = [];
      for (const c of rule.conditions) {
        const m = mapCondition(c, this.gateKey, this.segment);
        if ("unmappable" in m) return m.unmappable;
        if ("condition" in m) conditions.push(m.condition);
        if ("parent" in m) parents.push(m.parent);
      }
      const base: GbRule = {};
      const condition = allOf(conditions);
      if (condition) base.condition = condition;
      if (parents.length > 0) base.parentConditions = parents;
      if (filters) base.filters = filters;
      if (!rule.split) {
        out.push({ ...base, force: rule.value ?? null });
        continue;
      }
      const ranges = splitRanges(rule.split);
      rule.split.forEach((entry, j) => {
        for (const [start, end] of ranges[j]!) {
          out.push({ ...base, force: entry.value ?? null, range: [start / BUCKETS, end / BUCKETS], seed: config.salt ?? "", hashAttribute: rule.unit ?? "user_id", hashVersion: 2 });
        }
      });
    }
    return out;
  }

  private addExperiments(): void {
    for (const [name, experiment] of Object.entries(this.experiments)) {
      if (this.has(this.snapshot.killswitches, name) || this.has(this.gates, name) || this.has(this.snapshot.configs, name)) continue;
      const control = experiment.variants[0]?.value ?? null;
      const rule = this.experimentRule(name, experiment, (v) => ({ value: v.value }));
      if (typeof rule === "string") this.unmapped.push({ feature: name, construct: rule, served: "the control's value to every unit" });
      this.features[name] = rule && typeof rule !== "string" ? { defaultValue: control, rules: [rule] } : { defaultValue: control };
    }
  }

  private addKillswitches(): void {
    for (const [name, killswitch] of Object.entries(this.snapshot.killswitches)) {
      this.features[name] = { defaultValue: killswitch.value };
      for (const [switchKey, value] of Object.entries(killswitch.switches)) {
        const key = `${name}/${switchKey}`;
        // A gate of that exact name wins, as in OFREP's single evaluation.
        if (!this.has(this.gates, key)) this.features[key] = { defaultValue: value };
      }
    }
  }

  map(): void {
    this.addKillswitches();
    this.addGates();
    this.addConfigs();
    this.addExperiments();
  }
}

/** The payload and the constructs it could not map (what it serves for each instead). */
export function mapSnapshot(snapshot: Snapshot): { payload: GbPayload; unmapped: Unmapped[] } {
  const mapper = new Mapper(snapshot);
  mapper.map();
  const payload: GbPayload = { status: 200, features: mapper.features, experiments: [], dateUpdated: dateUpdatedOf(snapshot) };
  for (const _ in mapper.savedGroups) {
    payload.savedGroups = mapper.savedGroups;
    break;
  }
  return { payload, unmapped: mapper.unmapped };
}

/** What `GET /api/features/{key}` answers for a snapshot: `{status: 200, features, experiments: [], dateUpdated}`. */
export function growthbookFeatures(snapshot: Snapshot): GbPayload {
  return mapSnapshot(snapshot).payload;
}

/** svc's bucket function (GrowthBook's hash v2), re-exported for the conformance test. */
export { bucketOf };
