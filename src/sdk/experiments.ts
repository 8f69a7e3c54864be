/**
 * Experiment assignment: which variant a unit gets. One implementation,
 * imported by the server (OFREP, analysis checks) and bundled into the SDK,
 * so every server and every SDK gives a unit the same variant.
 *
 * 1. The unit's segment in the experiment's universe (`segmentOf`): a unit
 *    in the universe's holdout, or outside the experiment's allocation, is in
 *    no variant. Allocations of running experiments never overlap, so a unit
 *    keeps its variant when other experiments start or stop.
 * 2. A targeting gate, when the experiment names one, must let the unit through.
 * 3. The variant: the experiment's own salted hash of the unit id over the
 *    variants' cumulative weights (independent of the segment, so a variant
 *    is not a contiguous slice of the allocation).
 */
import { bucketOf } from "./gates";
import { type PublishedUniverse, type SegmentRange, type UnitType, inRange, segmentOf } from "./universes";

/**
 * What a variant changes besides its own value: the config `name` reads
 * `value` (any JSON) for its units, or the gate `name` answers `value` (a
 * boolean) for them. A config override with `rule` targets that rule of the
 * config (by name): only units the config's published rules decide by it take
 * part (and are exposed); the others get the config as published.
 */
export type VariantOverride = { kind: "config"; name: string; value: unknown; rule?: string } | { kind: "gate"; name: string; value: boolean };

/** The config rule (by name) an experiment's overrides of config `name` target, if any. */
function targetedRule(experiment: PublishedExperiment, name: string): string | undefined {
  for (const v of experiment.variants) {
    const o = v.override;
    if (o && o.kind === "config" && o.name === name && typeof o.rule === "string") return o.rule;
  }
  return undefined;
}

export type ExperimentVariant = { key: string; weight: number; value: unknown; override?: VariantOverride };

/** Exposures travel through the event ingest as this event name, with `unitId` and `properties: {variant}`. */
export const EXPOSURE_PREFIX = "$exposure:";

/** The event name of an experiment's exposures: `$exposure:<experiment id>`. */
export function exposureEventName(experimentId: string): string {
  return EXPOSURE_PREFIX + experimentId;
}

/**
 * The longest unit id the event ingest takes (`unitId`, 256 characters):
 * exposures of longer ids are not logged, since the ingest would refuse the
 * whole batch they travel in.
 */
export const MAX_EXPOSURE_UNIT_ID = 256;

/** The ingest accepts this one `$` name family, from server keys: `$exposure:exp_…`. */
export const EXPOSURE_EVENT_NAME = /^\$exposure:exp_[A-Za-z0-9]{1,64}$/;

/** An experiment as the snapshot publishes it (`experiments: {name: PublishedExperiment}`), running ones only. */
export type PublishedExperiment = {
  id: string;
  /** The universe's name (`universes` in the same snapshot). */
  universe: string;
  salt: string;
  /** `[start, end)` in the universe's segments. */
  allocation: SegmentRange;
  /** The control first. Weights are relative (they need not sum to 1). */
  variants: ExperimentVariant[];
  /** A gate the unit must pass to be in the experiment, or null. */
  gate: string | null;
};

export type Assignment = { variant: string; value: unknown; reason: "holdout" | "unallocated" | "targeting" | "assigned" };

const NOT_IN = (reason: Assignment["reason"]): Assignment => ({ variant: "", value: undefined, reason });

/**
 * The unit's variant, or why it has none (`variant` empty). `passesGate` is
 * asked only when the unit is in the allocation and the experiment names a
 * gate. No allocation, no string work beyond two hashes: well under 2 µs.
 */
export function assignVariant(
  experiment: PublishedExperiment,
  universe: Pick<PublishedUniverse, "salt" | "holdout_range">,
  unitId: string,
  passesGate?: (gate: string) => boolean,
): Assignment {
  const segment = segmentOf(universe.salt, unitId);
  if (inRange(segment, universe.holdout_range)) return NOT_IN("holdout");
  if (!inRange(segment, experiment.allocation)) return NOT_IN("unallocated");
  if (experiment.gate !== null && !(passesGate?.(experiment.gate) ?? false)) return NOT_IN("targeting");
  const variants = experiment.variants;
  let total = 0;
  for (const v of variants) total += v.weight > 0 ? v.weight : 0;
  if (total <= 0 || variants.length === 0) return NOT_IN("unallocated");
  const point = bucketOf(experiment.salt, unitId) * total;
  let cumulative = 0;
  for (const v of variants) {
    cumulative += v.weight > 0 ? v.weight : 0;
    if (point < cumulative) return { variant: v.key, value: v.value, reason: "assigned" };
  }
  // Floating-point edge at the very top: the last variant with weight.
  const last = [...variants].reverse().find((v) => v.weight > 0)!;
  return { variant: last.key, value: last.value, reason: "assigned" };
}

// ---------------------------------------------------------------------------
// Assignment from a snapshot: shared by the SDK client and OFREP, so both read
// the unit id, the targeting gate and the overrides the same way.

/** An experiment as found in a snapshot, with the name it is published under. */
export type NamedExperiment = { name: string; experiment: PublishedExperiment };

/**
 * Which running experiments override each gate and each config name (a
 * variant's `override`), in snapshot order. Built once per snapshot, so a
 * gate or config no experiment touches costs one Map lookup.
 */
export type OverrideIndex = { gates: Map<string, NamedExperiment[]>; configs: Map<string, NamedExperiment[]> };

function ownValue<V>(map: Record<string, V> | undefined | null, name: string): V | undefined {
  return map && Object.prototype.hasOwnProperty.call(map, name) ? map[name] : undefined;
}

export function indexOverrides(experiments: Record<string, PublishedExperiment> | undefined | null): OverrideIndex {
  const index: OverrideIndex = { gates: new Map(), configs: new Map() };
  for (const name in experiments ?? {}) {
    const experiment = ownValue(experiments, name);
    if (!experiment || !Array.isArray(experiment.variants)) continue;
    for (const v of experiment.variants) {
      const o = v.override;
      if (!o || typeof o.name !== "string") continue;
      const map = o.kind === "gate" ? index.gates : o.kind === "config" ? index.configs : null;
      if (!map) continue;
      let list = map.get(o.name);
      if (!list) map.set(o.name, (list = []));
      if (!list.some((e) => e.experiment === experiment)) list.push({ name, experiment });
    }
  }
  return index;
}

/**
 * The unit id an experiment reads from an evaluation context: the universe's
 * `unit_type` attribute (`user_id` or `account_id`); for `user_id`,
 * OpenFeature's `targetingKey` stands in when `user_id` is absent. A
 * non-empty string or a finite number (as text); anything else is no unit.
 */
export function unitIdOf(context: Record<string, unknown>, unitType: UnitType): string | null {
  let id = context[unitType];
  if ((id === undefined || id === null) && unitType === "user_id") id = context.targetingKey;
  if (typeof id === "string") return id === "" ? null : id;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return null;
}

/** Why a unit has no variant: assignVariant's reasons, plus no unit id in the context, or the experiment's universe missing from the snapshot. */
export type UnitAssignment =
  | { unitId: string; variant: ExperimentVariant; reason: "assigned" }
  | { unitId: string | null; variant: null; reason: Exclude<Assignment["reason"], "assigned"> | "no_unit" | "no_universe" };

/**
 * The unit's variant in a published experiment: its universe from
 * `universes`, its unit id from the context (`unitIdOf`), and `passesGate`
 * for the experiment's targeting gate (asked only for allocated units).
 */
export function assignUnit(
  experiment: PublishedExperiment,
  universes: Record<string, PublishedUniverse> | undefined | null,
  context: Record<string, unknown>,
  passesGate: (gate: string) => boolean,
): UnitAssignment {
  const universe = ownValue(universes, experiment.universe);
  if (!universe) return { unitId: null, variant: null, reason: "no_universe" };
  const unitId = unitIdOf(context, universe.unit_type);
  if (unitId === null) return { unitId: null, variant: null, reason: "no_unit" };
  const a = assignVariant(experiment, universe, unitId, passesGate);
  if (a.reason !== "assigned") return { unitId, variant: null, reason: a.reason };
  for (const v of experiment.variants) if (v.key === a.variant) return { unitId, variant: v, reason: "assigned" };
  return { unitId, variant: null, reason: "unallocated" };
}

/**
 * What the experiments overriding `kind name` (its list in an OverrideIndex)
 * give a unit: the first of them (snapshot order) that assigns the unit
 * decides, and `exposed` hears that assignment whatever the variant (the
 * control's units are exposed too); undefined when the unit's variant does
 * not override `kind name`, or no experiment assigns the unit.
 */
export function overrideFor(
  list: NamedExperiment[],
  kind: VariantOverride["kind"],
  name: string,
  assign: (experiment: PublishedExperiment) => UnitAssignment,
  exposed: (experimentId: string, unitId: string, variant: string) => void,
  /** For a config: the name of the rule its published rules decide the unit by (null: none, or an unnamed one); asked only when an experiment targets a rule. */
  decidedRule?: () => string | null,
): { value: unknown } | undefined {
  let decided: string | null | undefined;
  for (const { experiment } of list) {
    if (kind === "config") {
      const rule = targetedRule(experiment, name);
      // An experiment on a rule takes only the units that rule serves: the others never enter it.
      if (rule !== undefined && rule !== (decided === undefined ? (decided = decidedRule ? decidedRule() : null) : decided)) continue;
    }
    const a = assign(experiment);
    if (a.variant === null) continue;
    exposed(experiment.id, a.unitId, a.variant.key);
    const o = a.variant.override;
    return o && o.kind === kind && o.name === name ? { value: o.value } : undefined;
  }
  return undefined;
}
