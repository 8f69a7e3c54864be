import { ENVS, type Env, isEnv } from "../../lib/envs";
import { validation } from "../../lib/errors";
import { checkNameChars, checkOptionalText, checkResourceName } from "../../lib/validate";
import type { VariantOverride } from "../../sdk/experiments";

// The shape rules of an experiment's fields, checked by the service whatever the caller (HTTP, tests, MCP through
// HTTP). What needs the store (the universe, gates, configs, metrics, other experiments) is checked in service.ts.

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
export const REASON_MAX = 1000;
export const VARIANTS_MIN = 2;
export const VARIANTS_MAX = 10;
export const GUARDRAILS_MAX = 10;
export const VARIANT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
/** A variant's value (or override value) as JSON: enough for a config object, small enough for every snapshot. */
export const VALUE_MAX_BYTES = 16_384;
export const WEIGHT_MAX = 1_000_000;

export type Variant = { key: string; name: string; weight: number; value: unknown; override?: VariantOverride };
export type VariantInput = { key: string; name?: string; weight: number; value?: unknown; override?: { kind: string; name: string; value?: unknown } | null };

/** Which way a guardrail metric must not move. */
export type WorseWhen = "increase" | "decrease";
export const WORSE_WHEN: readonly WorseWhen[] = ["increase", "decrease"];
export type Guardrail = { metric: string; worseWhen: WorseWhen };
export type GuardrailInput = string | { metric: string; worseWhen?: string };

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "exp_", slashReason: "'/' is not allowed in names used in paths" });
}

export function checkDescription(description: string | null | undefined): void {
  if (description === undefined || description === null) return;
  checkOptionalText("description", description.replace(/[\n\t]/g, " "), DESCRIPTION_MAX);
}

export function checkReason(reason: string | null | undefined): void {
  checkOptionalText("reason", reason, REASON_MAX);
}

export function checkEnv(env: string): Env {
  if (!isEnv(env)) throw validation("Unknown env", `env: one of ${ENVS.join(", ")}`);
  return env;
}

function jsonSize(value: unknown, field: string): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    throw validation(`${field} must be JSON`, `${field}: not representable as JSON`);
  }
  if (text !== undefined && text.length > VALUE_MAX_BYTES) {
    throw validation(`${field} is too large`, `${field}: ${text.length} bytes of JSON; at most ${VALUE_MAX_BYTES}`);
  }
}

/**
 * Variants as sent: 2 to 10, the first is the control; unique keys; weights
 * relative and positive (the split is proportional to them); a value of any
 * JSON (default null); an optional override of one config or gate.
 */
export function checkVariants(input: readonly VariantInput[]): Variant[] {
  if (!Array.isArray(input) || input.length < VARIANTS_MIN || input.length > VARIANTS_MAX) {
    throw validation(`An experiment has ${VARIANTS_MIN} to ${VARIANTS_MAX} variants`, `variants: ${Array.isArray(input) ? input.length : 0} given; the first is the control, the others treatments`);
  }
  const keys = new Set<string>();
  return input.map((v, i) => {
    const at = `variants[${i}]`;
    if (typeof v.key !== "string" || !VARIANT_KEY.test(v.key)) throw validation("Invalid variant key", `${at}.key: 1 to 64 letters, digits, _ . or -`);
    if (keys.has(v.key)) throw validation("Variant keys must be unique", `${at}.key: ${v.key} appears twice`);
    keys.add(v.key);
    const name = v.name ?? v.key;
    if (typeof name !== "string" || name.length < 1 || name.length > NAME_MAX) {
      throw validation("Invalid variant name", `${at}.name: 1 to ${NAME_MAX} characters, no control characters`);
    }
    checkNameChars(`${at}.name`, name);
    if (typeof v.weight !== "number" || !Number.isFinite(v.weight) || v.weight <= 0 || v.weight > WEIGHT_MAX) {
      throw validation("Invalid variant weight", `${at}.weight: a number above 0 and at most ${WEIGHT_MAX} (weights are relative: [50, 50] and [1, 1] split alike)`);
    }
    const value = v.value === undefined ? null : v.value;
    jsonSize(value, `${at}.value`);
    const variant: Variant = { key: v.key, name, weight: v.weight, value };
    if (v.override !== undefined && v.override !== null) variant.override = checkOverride(v.override, `${at}.override`);
    return variant;
  });
}

function checkOverride(o: { kind: string; name: string; value?: unknown; rule?: unknown }, at: string): VariantOverride {
  if (o.kind !== "config" && o.kind !== "gate") throw validation("Invalid override", `${at}.kind: config or gate`);
  if (typeof o.name !== "string" || o.name.length < 1 || o.name.length > NAME_MAX) throw validation("Invalid override", `${at}.name: the ${o.kind}'s name`);
  if (o.kind === "gate") {
    if (typeof o.value !== "boolean") throw validation("A gate override is true or false", `${at}.value: true or false (what the gate answers for this variant's units)`);
    if (o.rule !== undefined) throw validation("Only a config override targets a rule", `${at}.rule: only with kind config (a gate's experiment targets units with the experiment's gate)`);
    return { kind: "gate", name: o.name, value: o.value };
  }
  if (o.value === undefined) throw validation("A config override needs the value the config reads", `${at}.value: the config's value for this variant's units`);
  jsonSize(o.value, `${at}.value`);
  if (o.rule === undefined) return { kind: "config", name: o.name, value: o.value };
  if (typeof o.rule !== "string" || o.rule.length < 1 || o.rule.length > 100) throw validation("Invalid override", `${at}.rule: the name of one of the config's rules`);
  return { kind: "config", name: o.name, value: o.value, rule: o.rule };
}

export function checkGuardrailShapes(input: readonly GuardrailInput[]): { metric: string; worseWhen: WorseWhen }[] {
  if (input.length > GUARDRAILS_MAX) throw validation(`At most ${GUARDRAILS_MAX} guardrail metrics`, `guardrailMetrics: ${input.length} given`);
  return input.map((g, i) => {
    const metric = typeof g === "string" ? g : g.metric;
    const worseWhen = typeof g === "string" ? "decrease" : (g.worseWhen ?? "decrease");
    if (typeof metric !== "string" || metric.length < 1) throw validation("Invalid guardrail", `guardrailMetrics[${i}].metric: a metric id or name`);
    if (!(WORSE_WHEN as readonly string[]).includes(worseWhen)) throw validation("Invalid guardrail", `guardrailMetrics[${i}].worseWhen: increase or decrease`);
    return { metric, worseWhen: worseWhen as WorseWhen };
  });
}
