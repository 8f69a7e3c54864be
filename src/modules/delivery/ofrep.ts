import { ENVS, type Env } from "../../lib/envs";
import type { EventRow } from "../../lib/eventstore/types";
import type { Logger } from "../../lib/log";
import { LruCache } from "../../lib/lru";
import { compileRegex } from "../../lib/re2";
import { type OverrideIndex, type PublishedExperiment, MAX_EXPOSURE_UNIT_ID, assignUnit, exposureEventName, indexOverrides, overrideFor } from "../../sdk/experiments";
import { type PublishedConfig, decideConfig, decidedRuleName } from "../../sdk/configs";
import { CONTEXT_BYTES_MAX, type Gate, type GateDecision, type PublishedSegment, contextBytes, createGateEvaluator, withUserId } from "../../sdk/gates";
import type { PublishedUniverse } from "../../sdk/universes";
import { type PublishedRollout, type RolloutIndex, indexRollouts, rolledGate, rolloutFor } from "../../sdk/rollouts";
import type { Snapshot } from "./snapshot";

/**
 * OpenFeature Remote Evaluation Protocol over the published snapshot.
 *
 * - A killswitch `name` is a boolean flag: its flat value, variant "on"/"off".
 * - `name/switchKey` is one sub-switch: the entry's value when the entry
 *   exists, else the killswitch's flat value (the same rule as the SDK's
 *   `isKilled(name, switchKey)`, so both clients agree). A name that is not a
 *   killswitch is FLAG_NOT_FOUND.
 * - A config `name` is an object flag whose value is the published value.
 * - A gate `name` is a boolean flag evaluated for the request's context by
 *   the SDK's own evaluator: reason TARGETING_MATCH (a rule decided), SPLIT
 *   (a percentage decided) or DEFAULT (no rule held: off).
 * - A running experiment's `name` (the snapshot's `experiments`) is a flag
 *   whose value is the unit's variant's value: reason SPLIT, `variant` the
 *   variant's key. A unit the experiment does not take (holdout, outside the
 *   allocation, the targeting gate says no, or no unit id in the context)
 *   gets the control's value, reason DEFAULT, `variant` the control's key.
 *   The unit id is the universe's `unit_type` attribute of the context
 *   (`user_id`, with `targetingKey` standing in, or `account_id`), read and
 *   assigned by the SDK's own code (src/sdk/experiments.ts `assignUnit`), so
 *   OFREP and every SDK give a unit the same variant. `metadata` is `{}`: an
 *   experiment has no published version.
 * - A gate or config that a running experiment's variant overrides answers
 *   the override (reason SPLIT) for the units assigned to that variant; the
 *   first experiment (snapshot order) that assigns the unit decides.
 * - A gate or config in a running guarded rollout (the snapshot's `rollouts`,
 *   src/sdk/rollouts.ts decides as every SDK does) answers, for a unit
 *   (`user_id` or `targetingKey`) in the current stage, the rollout's new
 *   rules or value, reason SPLIT; other units get what is published. Both
 *   log the stage's exposure (variant new or old), as an experiment's do.
 * - One name in several kinds: killswitch, then gate, then config, then experiment.
 * - Exposures: every unit an experiment assigns here (an experiment flag, or
 *   an overridden gate or config, in any variant, the control's included) is
 *   collected in `exposures` when the caller passes a list; the routes log
 *   them (`createExposureLogger`). The bulk call counts as an exposure to
 *   every experiment it evaluates for the unit, since OFREP web clients
 *   evaluate everything at once and never call back per flag.
 * Killswitches and configs answer with reason STATIC; every other success but an experiment's has `metadata: {version}`.
 */

export type OfrepSuccess = {
  key: string;
  value: unknown;
  reason: "STATIC" | GateDecision["reason"];
  variant?: string;
  /** `{version}` of the killswitch, gate or config; `{}` for an experiment. */
  metadata: { version?: number };
};

/** A unit an experiment assigned during an evaluation: logged as `$exposure:<experimentId>` with `{variant}`. */
export type Exposure = { experimentId: string; unitId: string; variant: string };

export type OfrepErrorCode = "PARSE_ERROR" | "INVALID_CONTEXT" | "FLAG_NOT_FOUND";
export type OfrepFailure = { errorCode: OfrepErrorCode; errorDetails: string };

export type EvaluationContext = Record<string, unknown>;

/**
 * Parses an OFREP request body (`{"context": {...}}`, empty allowed) and picks the env it asks for.
 * A context over CONTEXT_BYTES_MAX bytes of JSON is INVALID_CONTEXT (DECISIONS: evaluation is bounded work).
 */
export function parseEvaluationRequest(text: string, defaultEnv: () => Env): { env: Env; context: EvaluationContext } | OfrepFailure {
  let body: unknown = {};
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      return { errorCode: "PARSE_ERROR", errorDetails: "body: expected JSON like {\"context\": {...}}" };
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { errorCode: "PARSE_ERROR", errorDetails: "body: expected a JSON object" };
  }
  const context = (body as { context?: unknown }).context ?? {};
  if (typeof context !== "object" || context === null || Array.isArray(context)) {
    return { errorCode: "INVALID_CONTEXT", errorDetails: "context: expected an object" };
  }
  // Re-serialised, a body's context takes at most 6 bytes a character (`1e20` becomes 21 digits): a body
  // that short is never measured, so everyday calls cost nothing more.
  if (text.length > CONTEXT_BYTES_MAX / 6) {
    const bytes = contextBytes(context as EvaluationContext);
    if (bytes > CONTEXT_BYTES_MAX) return { errorCode: "INVALID_CONTEXT", errorDetails: `context: ${bytes} bytes of JSON; at most ${CONTEXT_BYTES_MAX} (64 KiB)` };
  }
  const env = (context as { env?: unknown }).env;
  if (env === undefined || env === null) return { env: defaultEnv(), context: context as EvaluationContext };
  if (typeof env !== "string" || !(ENVS as readonly string[]).includes(env)) {
    return { errorCode: "INVALID_CONTEXT", errorDetails: `context.env: expected one of ${ENVS.join(", ")}` };
  }
  return { env: env as Env, context: context as EvaluationContext };
}

export function isFailure(result: object): result is OfrepFailure {
  return "errorCode" in result;
}

function booleanFlag(key: string, value: boolean, version: number): OfrepSuccess {
  return { key, value, reason: "STATIC", variant: value ? "on" : "off", metadata: { version } };
}

type PublishedGate = Gate & { version: number };

/** One evaluator per snapshot: its gates' patterns are compiled once, on first use. */
const evaluators = new WeakMap<Snapshot, ReturnType<typeof createGateEvaluator>>();

function evaluatorOf(snapshot: Snapshot) {
  let evaluator = evaluators.get(snapshot);
  if (!evaluator) {
    const gates = snapshot.gates as Record<string, PublishedGate>;
    const segments = (snapshot.segments ?? {}) as Record<string, PublishedSegment>;
    evaluator = createGateEvaluator({
      compileRegex,
      gate: (name) => (Object.hasOwn(gates, name) ? gates[name] : undefined),
      segment: (name) => (Object.hasOwn(segments, name) ? segments[name] : undefined),
    });
    evaluators.set(snapshot, evaluator);
  }
  return evaluator;
}

/** Per snapshot: which experiments override which gates and configs. */
const overrideIndexes = new WeakMap<Snapshot, OverrideIndex>();

function overridesOf(snapshot: Snapshot): OverrideIndex {
  let index = overrideIndexes.get(snapshot);
  if (!index) {
    index = indexOverrides(snapshot.experiments as Record<string, PublishedExperiment>);
    overrideIndexes.set(snapshot, index);
  }
  return index;
}

function experimentsOf(snapshot: Snapshot): Record<string, PublishedExperiment> {
  return (snapshot.experiments ?? {}) as Record<string, PublishedExperiment>;
}

function assign(snapshot: Snapshot, experiment: PublishedExperiment, context: EvaluationContext) {
  const gates = snapshot.gates as Record<string, PublishedGate>;
  return assignUnit(experiment, snapshot.universes as Record<string, PublishedUniverse>, context, (name) => {
    const gate = Object.hasOwn(gates, name) ? gates[name] : undefined;
    return !!gate && evaluatorOf(snapshot).evaluate(gate, withUserId(context)).value;
  });
}

/** The override the experiments overriding `kind name` give this unit (see overrideFor), its exposure noted in `exposures`. */
function overrideOf(snapshot: Snapshot, kind: "gate" | "config", name: string, context: EvaluationContext, exposures?: Exposure[], decidedRule?: () => string | null): { value: unknown } | undefined {
  const index = overridesOf(snapshot);
  const list = kind === "gate" ? index.gates.get(name) : index.configs.get(name);
  if (!list) return undefined;
  return overrideFor(list, kind, name, (experiment) => assign(snapshot, experiment, context), (experimentId, unitId, variant) => exposures?.push({ experimentId, unitId, variant }), decidedRule);
}

/** Per snapshot: which rollouts change which gates and configs. */
const rolloutIndexes = new WeakMap<Snapshot, RolloutIndex>();

/** The rollout of `kind name` for this unit (see rolloutFor), its exposure noted in `exposures`. */
function rolloutOf(snapshot: Snapshot, kind: "gates" | "configs", name: string, context: EvaluationContext, exposures?: Exposure[]) {
  let index = rolloutIndexes.get(snapshot);
  if (!index) rolloutIndexes.set(snapshot, (index = indexRollouts(snapshot.rollouts as Record<string, PublishedRollout> | undefined)));
  return rolloutFor(index, kind, name, context, (experimentId, unitId, variant) => exposures?.push({ experimentId, unitId, variant }));
}

function gateFlag(snapshot: Snapshot, key: string, gate: PublishedGate, context: EvaluationContext, exposures?: Exposure[]): OfrepSuccess {
  const override = overrideOf(snapshot, "gate", key, context, exposures);
  if (override) {
    const value = override.value === true;
    return { key, value, reason: "SPLIT", variant: value ? "on" : "off", metadata: { version: gate.version } };
  }
  const rolled = rolloutOf(snapshot, "gates", key, context, exposures);
  if (rolled?.rolled && rolled.rollout.kind === "gate") {
    const value = evaluatorOf(snapshot).evaluate(rolledGate(gate, rolled.rollout), withUserId(context)).value;
    return { key, value, reason: "SPLIT", variant: value ? "on" : "off", metadata: { version: gate.version } };
  }
  const decision = evaluatorOf(snapshot).evaluate(gate, withUserId(context));
  return { key, value: decision.value, reason: decision.reason, variant: decision.value ? "on" : "off", metadata: { version: gate.version } };
}

function configFlag(snapshot: Snapshot, key: string, config: PublishedConfig, context: EvaluationContext, exposures?: Exposure[]): OfrepSuccess {
  const override = overrideOf(snapshot, "config", key, context, exposures, () => decidedRuleName(config, withUserId(context), evaluatorOf(snapshot)));
  if (override) return { key, value: override.value, reason: "SPLIT", metadata: { version: config.version } };
  const rolled = rolloutOf(snapshot, "configs", key, context, exposures);
  if (rolled?.rolled && rolled.rollout.kind === "config") {
    const { rollout } = rolled;
    // A rollout of new rules: units in the stage are served by them (their own split buckets, the config's salt).
    const value = rollout.rules ? decideConfig({ value: rollout.value, version: config.version, rules: rollout.rules, salt: config.salt ?? key }, withUserId(context), evaluatorOf(snapshot)).value : rollout.value;
    return { key, value, reason: "SPLIT", metadata: { version: config.version } };
  }
  // A config without rules is one value for everyone (STATIC); with rules, the evaluator says which and why (issue 29).
  if (!config.rules || config.rules.length === 0) return { key, value: config.value, reason: "STATIC", metadata: { version: config.version } };
  const decision = decideConfig(config, withUserId(context), evaluatorOf(snapshot));
  return { key, value: decision.value, reason: decision.reason, variant: decision.variant, metadata: { version: config.version } };
}

function experimentFlag(snapshot: Snapshot, key: string, experiment: PublishedExperiment, context: EvaluationContext, exposures?: Exposure[]): OfrepSuccess {
  const a = assign(snapshot, experiment, context);
  if (a.variant === null) {
    const control = experiment.variants[0];
    return { key, value: control?.value ?? null, reason: "DEFAULT", ...(control ? { variant: control.key } : {}), metadata: {} };
  }
  exposures?.push({ experimentId: experiment.id, unitId: a.unitId, variant: a.variant.key });
  return { key, value: a.variant.value ?? null, reason: "SPLIT", variant: a.variant.key, metadata: {} };
}

/**
 * Evaluates one flag key against a snapshot; null when no flag has that key.
 * Units experiments assign on the way are pushed to `exposures`.
 */
export function evaluateFlag(snapshot: Snapshot, key: string, context: EvaluationContext = {}, exposures?: Exposure[]): OfrepSuccess | null {
  const killswitch = snapshot.killswitches[key];
  if (killswitch) return booleanFlag(key, killswitch.value, killswitch.version);
  const gates = snapshot.gates as Record<string, PublishedGate>;
  if (Object.hasOwn(gates, key)) return gateFlag(snapshot, key, gates[key]!, context, exposures);
  const config = snapshot.configs[key];
  if (config) return configFlag(snapshot, key, config, context, exposures);
  const experiments = experimentsOf(snapshot);
  if (Object.hasOwn(experiments, key)) return experimentFlag(snapshot, key, experiments[key]!, context, exposures);
  // Killswitch names may hold slashes too: try every split, leftmost first.
  for (let slash = key.indexOf("/"); slash !== -1; slash = key.indexOf("/", slash + 1)) {
    const parent = snapshot.killswitches[key.slice(0, slash)];
    if (!parent) continue;
    const entry = parent.switches[key.slice(slash + 1)];
    return booleanFlag(key, entry ?? parent.value, parent.version);
  }
  return null;
}

/** Every flag of the snapshot: each killswitch, each of its sub-switches (`name/switchKey`), each gate, each config and each running experiment. */
export function evaluateAll(snapshot: Snapshot, context: EvaluationContext = {}, exposures?: Exposure[]): OfrepSuccess[] {
  const flags: OfrepSuccess[] = [];
  for (const [name, killswitch] of Object.entries(snapshot.killswitches)) {
    flags.push(booleanFlag(name, killswitch.value, killswitch.version));
    for (const [switchKey, value] of Object.entries(killswitch.switches)) {
      flags.push(booleanFlag(`${name}/${switchKey}`, value, killswitch.version));
    }
  }
  const gates = snapshot.gates as Record<string, PublishedGate>;
  for (const [name, gate] of Object.entries(gates)) {
    if (name in snapshot.killswitches) continue;
    flags.push(gateFlag(snapshot, name, gate, context, exposures));
  }
  for (const [name, config] of Object.entries(snapshot.configs)) {
    if (name in snapshot.killswitches || Object.hasOwn(gates, name)) continue;
    flags.push(configFlag(snapshot, name, config, context, exposures));
  }
  for (const [name, experiment] of Object.entries(experimentsOf(snapshot))) {
    if (name in snapshot.killswitches || Object.hasOwn(gates, name) || Object.hasOwn(snapshot.configs, name)) continue;
    flags.push(experimentFlag(snapshot, name, experiment, context, exposures));
  }
  return flags;
}

/** Per snapshot: whether any config has rules (read by every bulk request, found once). */
const targetedConfigs = new WeakMap<Snapshot, boolean>();

/** Whether a bulk answer depends on the context (gates, experiments, rollouts and configs with rules do), so it is neither shared nor tagged by revision alone. */
export function answersPerContext(snapshot: Snapshot): boolean {
  for (const _ in snapshot.gates) return true;
  for (const _ in snapshot.experiments ?? {}) return true;
  for (const _ in snapshot.rollouts ?? {}) return true;
  let targeted = targetedConfigs.get(snapshot);
  if (targeted === undefined) {
    targeted = Object.values(snapshot.configs).some((c) => c.rules !== undefined);
    targetedConfigs.set(snapshot, targeted);
  }
  return targeted;
}

/** (project, experiment, unit) triples remembered as logged, per server. */
export const EXPOSURE_DEDUPE_ENTRIES = 50_000;

/**
 * Logs the exposures of OFREP evaluations as `$exposure:<experiment id>`
 * events, without holding up the reply: appended to the event store in the
 * background (a failure is logged and forgets the triples, so a later
 * evaluation logs them again), each (project, experiment, unit) once per
 * server while the LRU remembers it. Several servers may each log a unit
 * once: the analysis counts a unit at its first exposure.
 */
export function createExposureLogger(deps: { append: (rows: EventRow[]) => Promise<void>; now: () => number; log: Logger }, capacity = EXPOSURE_DEDUPE_ENTRIES) {
  const logged = new LruCache<string, true>(capacity);
  return (projectId: string, exposures: readonly Exposure[]): void => {
    if (exposures.length === 0) return;
    const keys: string[] = [];
    const rows: EventRow[] = [];
    let ts: number | undefined;
    for (const e of exposures) {
      if (e.unitId.length > MAX_EXPOSURE_UNIT_ID) continue;
      const dedupeKey = `${projectId}\u0000${e.experimentId}\u0000${e.unitId}`;
      if (logged.get(dedupeKey)) continue;
      logged.set(dedupeKey, true);
      keys.push(dedupeKey);
      rows.push({ projectId, name: exposureEventName(e.experimentId), ts: (ts ??= deps.now()), unitId: e.unitId, value: null, props: { variant: e.variant } });
    }
    if (rows.length === 0) return;
    let pending: Promise<void>;
    try {
      pending = deps.append(rows);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.catch((err) => {
      for (const k of keys) logged.delete(k);
      deps.log.warn("logging OFREP exposures failed; they are logged at the unit's next evaluation", { projectId, exposures: rows.length, error: String(err) });
    });
  };
}
