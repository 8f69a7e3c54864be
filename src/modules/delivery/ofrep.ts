import { ENVS, type Env } from "../../lib/envs";
import { compileRegex } from "../../lib/re2";
import { type Gate, type GateDecision, createGateEvaluator } from "../../sdk/gates";
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
 * - One name in several kinds: killswitch, then gate, then config.
 * Killswitches and configs answer with reason STATIC; every success has `metadata: {version}`.
 */

export type OfrepSuccess = {
  key: string;
  value: unknown;
  reason: "STATIC" | GateDecision["reason"];
  variant?: string;
  metadata: { version: number };
};

export type OfrepErrorCode = "PARSE_ERROR" | "INVALID_CONTEXT" | "FLAG_NOT_FOUND";
export type OfrepFailure = { errorCode: OfrepErrorCode; errorDetails: string };

export type EvaluationContext = Record<string, unknown>;

/** Parses an OFREP request body (`{"context": {...}}`, empty allowed) and picks the env it asks for. */
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
    evaluator = createGateEvaluator({ compileRegex, gate: (name) => (Object.hasOwn(gates, name) ? gates[name] : undefined) });
    evaluators.set(snapshot, evaluator);
  }
  return evaluator;
}

/** OpenFeature names the unit `targetingKey`; gates bucket on `user_id` by default: the one stands for the other when absent. */
function withUnit(context: EvaluationContext): EvaluationContext {
  return context.user_id === undefined && context.targetingKey !== undefined ? { ...context, user_id: context.targetingKey } : context;
}

function gateFlag(snapshot: Snapshot, key: string, gate: PublishedGate, context: EvaluationContext): OfrepSuccess {
  const decision = evaluatorOf(snapshot).evaluate(gate, withUnit(context));
  return { key, value: decision.value, reason: decision.reason, variant: decision.value ? "on" : "off", metadata: { version: gate.version } };
}

/** Evaluates one flag key against a snapshot; null when no flag has that key. */
export function evaluateFlag(snapshot: Snapshot, key: string, context: EvaluationContext = {}): OfrepSuccess | null {
  const killswitch = snapshot.killswitches[key];
  if (killswitch) return booleanFlag(key, killswitch.value, killswitch.version);
  const gates = snapshot.gates as Record<string, PublishedGate>;
  if (Object.hasOwn(gates, key)) return gateFlag(snapshot, key, gates[key]!, context);
  const config = snapshot.configs[key];
  if (config) return { key, value: config.value, reason: "STATIC", metadata: { version: config.version } };
  // Killswitch names may hold slashes too: try every split, leftmost first.
  for (let slash = key.indexOf("/"); slash !== -1; slash = key.indexOf("/", slash + 1)) {
    const parent = snapshot.killswitches[key.slice(0, slash)];
    if (!parent) continue;
    const entry = parent.switches[key.slice(slash + 1)];
    return booleanFlag(key, entry ?? parent.value, parent.version);
  }
  return null;
}

/** Every flag of the snapshot: each killswitch, each of its sub-switches (`name/switchKey`), each gate and each config. */
export function evaluateAll(snapshot: Snapshot, context: EvaluationContext = {}): OfrepSuccess[] {
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
    flags.push(gateFlag(snapshot, name, gate, context));
  }
  for (const [name, config] of Object.entries(snapshot.configs)) {
    if (name in snapshot.killswitches || Object.hasOwn(gates, name)) continue;
    flags.push({ key: name, value: config.value, reason: "STATIC", metadata: { version: config.version } });
  }
  return flags;
}
