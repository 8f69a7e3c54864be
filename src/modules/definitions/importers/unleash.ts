import type { Env } from "../../../lib/envs";
import { type Condition, type ConfigRule, type GateRule, type ImportOptions, type ImportResult, Importer, arrayOf, isObject, percentWeights, schemaOf, textCondition } from "./common";

// Unleash's feature export (Admin API `POST /api/admin/features-batch/export`, the export-import of
// https://docs.getunleash.io/how-to/how-to-import-export; the older `/api/admin/state/export` has the same
// arrays): `features`, `featureStrategies` (each with `featureName`, `parameters`, `constraints`, `segments`
// ids, and `environment` in the state export), `featureEnvironments` (`enabled`, `variants` per environment),
// `segments`, `contextFields`. Strategies are OR-ed in Unleash and first-match in svc: full ones come first
// and 0 % ones are dropped (they enable nobody), so a unit a strategy enables is enabled either way.

/** Unleash's built-in context fields under svc's attribute names; others keep their names. */
const CONTEXT: Record<string, string> = { userId: "user_id", sessionId: "session_id", remoteAddress: "remote_address" };
const attrOf = (name: string) => CONTEXT[name] ?? name;

type Mapped = { conditions: Condition[] } | { reason: string };

/** One constraint as svc conditions (Unleash: `{contextName, operator, values | value, inverted, caseInsensitive}`). */
function constraint(c: Record<string, any>): Mapped {
  const attr = attrOf(String(c.contextName ?? ""));
  const op = String(c.operator ?? "");
  const values: string[] = arrayOf(c.values).map(String);
  const value = c.value !== undefined ? String(c.value) : values[0];
  const inverted = c.inverted === true;
  const ci = c.caseInsensitive === true;
  if (c.contextName === "currentTime") return { reason: "svc has no current-time attribute; schedule the change in svc instead" };
  if (op === "IN" || op === "NOT_IN") {
    if (values.length === 0) return { reason: `${op} with no values` };
    const negated = (op === "NOT_IN") !== inverted;
    if (ci) return negated ? { reason: "case-insensitive NOT_IN: svc has no negated pattern" } : { conditions: [textCondition(attr, "in", values, true)] };
    return { conditions: [{ attr, op: negated ? "not_in" : "in", value: values }] };
  }
  const text = { STR_CONTAINS: "contains", STR_STARTS_WITH: "starts_with", STR_ENDS_WITH: "ends_with" } as const;
  if (op in text) {
    if (inverted) return { reason: `inverted ${op}: svc has no negated text operator` };
    if (values.length === 0) return { reason: `${op} with no values` };
    return { conditions: [textCondition(attr, text[op as keyof typeof text], values, ci)] };
  }
  const compare: Record<string, [string, string]> = {
    NUM_GT: ["gt", "lte"],
    NUM_GTE: ["gte", "lt"],
    NUM_LT: ["lt", "gte"],
    NUM_LTE: ["lte", "gt"],
    NUM_EQ: ["eq", "neq"],
    DATE_AFTER: ["after", ""],
    DATE_BEFORE: ["before", ""],
    SEMVER_EQ: ["semver_eq", ""],
    SEMVER_GT: ["semver_gt", "semver_lte"],
    SEMVER_LT: ["semver_lt", "semver_gte"],
  };
  const pair = compare[op];
  if (!pair) return { reason: `operator ${op} has no svc equivalent` };
  const svcOp = inverted ? pair[1] : pair[0];
  if (!svcOp) return { reason: `inverted ${op} has no svc equivalent` };
  if (value === undefined) return { reason: `${op} without a value` };
  return { conditions: [{ attr, op: svcOp, value: op.startsWith("NUM_") ? Number(value) : value }] };
}

function constraints(list: unknown, source: string, imp: Importer): Condition[] | undefined {
  const out: Condition[] = [];
  for (const [i, c] of arrayOf(list).entries()) {
    const m = constraint(isObject(c) ? c : {});
    if ("reason" in m) {
      imp.skip(`${source} constraint ${i + 1} (${c?.contextName} ${c?.operator})`, "constraint", m.reason);
      return undefined;
    }
    out.push(...m.conditions);
  }
  return out;
}

const unitOf = (stickiness: unknown): string | undefined | null =>
  stickiness === undefined || stickiness === "default" || stickiness === "userId" ? undefined : stickiness === "random" ? null : attrOf(String(stickiness));

export function fromUnleash(raw: unknown, options: ImportOptions = {}): ImportResult {
  const imp = new Importer("Unleash", options);
  const data = isObject(raw) ? raw : {};
  const features = arrayOf(data.features).filter(isObject);
  const envStates = arrayOf(data.featureEnvironments).filter(isObject);
  const strategies = arrayOf(data.featureStrategies).filter(isObject);
  const envNames = [...new Set(envStates.map((e) => String(e.environment)))];
  if (imp.notA(Array.isArray(data.features) && Array.isArray(data.featureEnvironments), "an Unleash feature export (it has features and featureEnvironments)")) return imp.result();

  // Segments: by id, made only when all of their constraints map.
  const segmentNames = new Map<unknown, string | null>();
  for (const s of arrayOf(data.segments).filter(isObject)) {
    const source = `segment ${s.name}`;
    if (!Array.isArray(s.constraints)) {
      imp.skip(source, "segment", "the export carries the segment's name only, not its constraints; strategies using it are not mapped");
      segmentNames.set(s.id, null);
      continue;
    }
    const conds = constraints(s.constraints, source, imp);
    segmentNames.set(s.id, conds ? String(s.name) : null);
    // A segment that is only a list of user ids is svc's list of ids.
    const only = conds?.length === 1 && conds[0]!.attr === "user_id" && conds[0]!.op === "in" ? (conds[0]!.value as string[]) : undefined;
    if (conds) imp.segment({ name: String(s.name), description: s.description ?? "", conditions: only ? [] : conds, ids: only ?? [] });
  }

  for (const f of features) {
    const name = String(f.name);
    const description = String(f.description ?? "");
    const states = envStates.filter((e) => e.featureName === name);
    for (const state of states) {
      const env = imp.env(String(state.environment));
      if (!env) continue;
      const full: GateRule[] = [];
      const partial: GateRule[] = [];
      const mine = strategies.filter((s) => s.featureName === name && (s.environment === undefined ? envNames.length === 1 : s.environment === state.environment));
      for (const [i, s] of mine.sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0)).entries()) {
        const rule = strategy(s, `feature ${name} (${state.environment}) strategy ${i + 1} ${s.name}`, name, env, segmentNames, imp);
        if (rule) (rule.passPercentage >= 100 ? full : partial).push(rule);
      }
      const enabled = state.enabled === true;
      // An enabled feature without strategies is on for everyone; a disabled one is off.
      const rules = !enabled ? [] : mine.length === 0 ? [{ conditions: [], passPercentage: 100 }] : [...full, ...partial];
      imp.gate(name, description, env, rules);
      variants(name, description, env, enabled, arrayOf(state.variants ?? f.variants), `feature ${name} (${state.environment}) variants`, imp);
    }
  }
  return imp.result();
}

function strategy(s: Record<string, any>, source: string, flag: string, env: Env, segmentNames: Map<unknown, string | null>, imp: Importer): GateRule | undefined {
  if (s.disabled === true) return undefined;
  const p = isObject(s.parameters) ? s.parameters : {};
  let conditions = constraints(s.constraints, source, imp);
  if (!conditions) return undefined;
  for (const id of arrayOf(s.segments)) {
    const segment = segmentNames.get(id);
    if (!segment) {
      imp.skip(source, "segment", `segment ${id} is not mapped`);
      return undefined;
    }
    conditions = [...conditions, { attr: "user_id", op: "in_segment", value: segment }];
  }
  if (arrayOf(s.variants).length > 0) imp.skip(source, "strategy variants", "svc serves variants per env (a config), not per rule; the strategy's on/off is kept");
  let pct = 100;
  let unit: string | undefined | null;
  if (s.name === "default") pct = 100;
  else if (s.name === "flexibleRollout") {
    pct = Number(p.rollout ?? 100);
    unit = unitOf(p.stickiness);
  } else if (s.name === "gradualRolloutUserId" || s.name === "gradualRolloutSessionId") {
    pct = Number(p.percentage ?? 100);
    unit = s.name === "gradualRolloutSessionId" ? "session_id" : undefined;
  } else if (s.name === "gradualRolloutRandom") unit = null;
  else if (s.name === "userWithId") {
    const ids = String(p.userIds ?? "").split(",").map((x) => x.trim()).filter(Boolean);
    if (ids.length === 0) return undefined;
    conditions = [...conditions, imp.idsCondition("user_id", ids, `${flag}-${env}-user-ids-${s.sortOrder ?? 0}`, `Unleash userWithId of ${flag} (${env})`)];
  } else {
    imp.skip(source, "strategy", `strategy ${s.name} has no svc equivalent (svc maps default, flexibleRollout, gradualRollout* and userWithId)`);
    return undefined;
  }
  if (!Number.isFinite(pct)) pct = 100;
  if (unit === null && pct > 0 && pct < 100) {
    imp.skip(source, "stickiness", "random stickiness: svc keeps each unit's answer; a random rollout has no svc equivalent");
    return undefined;
  }
  const kept = imp.percentage(flag, env, pct, source);
  // A 0 % strategy enables nobody (and would stop svc's first-match evaluation): dropped.
  if (kept === undefined || kept === 0) return undefined;
  const rule: GateRule = { conditions, passPercentage: kept };
  if (typeof s.title === "string" && s.title) rule.name = s.title.slice(0, 100);
  if (unit && kept < 100) rule.unit = unit;
  return rule;
}

/**
 * Variants (weights out of 1000) as a config `<feature>-variant`: the variant's name (or its payload when it has
 * one) for units the feature is on for, split by weight; `disabled` otherwise, as Unleash's getVariant says.
 */
function variants(flag: string, description: string, env: Env, enabled: boolean, list: any[], source: string, imp: Importer): void {
  const vs = list.filter(isObject);
  if (vs.length === 0) return;
  const withPayload = vs.some((v) => isObject(v.payload));
  const valueOf = (v: Record<string, any>) => (withPayload ? { name: String(v.name), payload: isObject(v.payload) ? { type: String(v.payload.type), value: v.payload.value } : null } : String(v.name));
  const off = withPayload ? { name: "disabled", payload: null } : "disabled";
  const name = `${flag}-variant`;
  const rules: ConfigRule[] = [];
  const gated = { attr: "user_id", op: "passes_gate", value: flag };
  for (const v of vs)
    for (const o of arrayOf(v.overrides).filter(isObject)) {
      const ids = arrayOf(o.values).map(String);
      if (ids.length) rules.push({ conditions: [gated, { attr: attrOf(String(o.contextName)), op: "in", value: ids }], value: valueOf(v) });
    }
  const { weights, exact } = percentWeights(vs.map((v) => Number(v.weight ?? 0)), vs.reduce((a, v) => a + Number(v.weight ?? 0), 0) || 1);
  if (!exact) imp.skip(source, "variant weights", `weights ${vs.map((v) => v.weight).join("/")} (of 1000) rounded to whole percents: ${weights.join("/")}`);
  const stickiness = unitOf(vs[0]!.stickiness);
  const kept = imp.split(name, env, vs.map((v, i) => ({ value: valueOf(v), weight: weights[i]! })), source);
  if (kept) rules.push({ conditions: [gated], ...kept, ...("split" in kept && stickiness ? { unit: stickiness } : {}) });
  const values = [off, ...vs.map(valueOf)];
  imp.config(name, description ? `${description} (variants)` : `Variants of ${flag}`, schemaOf(values), env, off, enabled ? rules : []);
}
