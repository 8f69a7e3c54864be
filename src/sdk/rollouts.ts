/**
 * Guarded rollouts: which units get a gate's new rules or a config's new
 * value while a rollout runs. One implementation, imported by the server
 * (OFREP) and bundled into the SDK, so every server and every SDK splits a
 * unit the same way.
 *
 * A unit is in the rollout's current stage when its bucket under the
 * rollout's own salt (`bucketOf`, the gates' hash) is below the stage's
 * percentage: stages only grow, so a unit that has the new value keeps it
 * when the rollout advances. Units without a unit id get the old value.
 *
 * Each stage is its own randomised comparison: the SDK logs an exposure
 * `$exposure:<rollout id>_<stage>` with `{variant: "new" | "old"}` per unit,
 * and the server compares the two groups on the rollout's watched metrics.
 */
import type { ConfigRule } from "./configs";
import { type GateRule, bucketOf } from "./gates";
import { EXPOSURE_PREFIX, unitIdOf } from "./experiments";

/** What the snapshot publishes per running rollout (`rollouts: {id: PublishedRollout}`). */
export type PublishedRollout =
  | { kind: "gate"; name: string; salt: string; stage: number; percent: number; rules: GateRule[] }
  | { kind: "config"; name: string; salt: string; stage: number; percent: number; value: unknown; rules?: ConfigRule[] };

/** The two groups of a stage. */
export type RolloutArm = "new" | "old";

/** The exposure id of one stage (the event is `$exposure:<this>`). */
export function rolloutExposureId(rolloutId: string, stage: number): string {
  return `${rolloutId}_${stage}`;
}

export function rolloutExposureName(rolloutId: string, stage: number): string {
  return EXPOSURE_PREFIX + rolloutExposureId(rolloutId, stage);
}

/** The ingest accepts rollout exposures from server keys: `$exposure:rol_…_<stage>`. */
export const ROLLOUT_EXPOSURE_NAME = /^\$exposure:rol_[A-Za-z0-9]{1,64}_\d{1,3}$/;

/** Whether a unit is in the stage: its bucket under the rollout's salt is below the percentage. */
export function inRollout(rollout: Pick<PublishedRollout, "salt" | "percent">, unitId: string): boolean {
  return bucketOf(rollout.salt, unitId) * 100 < rollout.percent;
}

/** Running rollouts by the gate or config they change, built once per snapshot. */
export type RolloutIndex = { gates: Map<string, { id: string; rollout: PublishedRollout }>; configs: Map<string, { id: string; rollout: PublishedRollout }> };

export const NO_ROLLOUTS: RolloutIndex = { gates: new Map(), configs: new Map() };

export function indexRollouts(rollouts: Record<string, PublishedRollout> | undefined | null): RolloutIndex {
  if (!rollouts) return NO_ROLLOUTS;
  const index: RolloutIndex = { gates: new Map(), configs: new Map() };
  for (const id in rollouts) {
    if (!Object.prototype.hasOwnProperty.call(rollouts, id)) continue;
    const rollout = rollouts[id];
    if (!rollout || typeof rollout.name !== "string" || typeof rollout.salt !== "string") continue;
    const map = rollout.kind === "gate" ? index.gates : rollout.kind === "config" ? index.configs : null;
    map?.set(rollout.name, { id, rollout });
  }
  return index;
}

/**
 * The unit's group in a rollout (the `user_id` attribute, or OpenFeature's
 * `targetingKey`), or null without a unit id (it keeps the old value and
 * logs no exposure).
 */
export function rolloutArm(rollout: PublishedRollout, context: Record<string, unknown>): { unitId: string; arm: RolloutArm } | null {
  const unitId = unitIdOf(context, "user_id");
  if (unitId === null) return null;
  return { unitId, arm: inRollout(rollout, unitId) ? "new" : "old" };
}

/**
 * The rollout of `kind name` for one unit: whether the unit is in the
 * stage, `exposed` told its group either way; undefined when no rollout of
 * that name runs or the context has no unit. Shared by the SDK and OFREP.
 */
export function rolloutFor(
  index: RolloutIndex,
  kind: "gates" | "configs",
  name: string,
  context: Record<string, unknown>,
  exposed: (exposureId: string, unitId: string, arm: RolloutArm) => void,
): { rollout: PublishedRollout; rolled: boolean } | undefined {
  const found = index[kind].get(name);
  if (!found) return undefined;
  const a = rolloutArm(found.rollout, context);
  if (!a) return undefined;
  exposed(rolloutExposureId(found.id, found.rollout.stage), a.unitId, a.arm);
  return { rollout: found.rollout, rolled: a.arm === "new" };
}

/** A gate as a gate rollout's units in the stage see it: its own salt and version, the rollout's rules (one object per rollout). */
const nextGates = new WeakMap<PublishedRollout, object>();
export function rolledGate<G extends { rules: GateRule[] }>(gate: G, rollout: PublishedRollout & { kind: "gate" }): G {
  let next = nextGates.get(rollout) as G | undefined;
  if (!next) nextGates.set(rollout, (next = { ...gate, rules: rollout.rules }));
  return next;
}
