import type { Env } from "../../../lib/envs";
import { type Condition, type ConfigRule, type GateRule, type ImportOptions, type ImportResult, Importer, arrayOf, isObject, percentWeights, schemaOf } from "./common";

// GrowthBook, two shapes: the SDK features payload (`{features: {key: {defaultValue, rules}}, savedGroups?}`,
// what `/api/features/{clientKey}` serves: https://docs.growthbook.io/lib/build-your-own), one environment,
// going to `options.env`; or the REST API's feature list (`GET /api/v1/features`,
// https://docs.growthbook.io/api#tag/features: `{features: [{id, valueType, defaultValue, environments:
// {name: {enabled, rules: [{type: force|rollout|experiment, condition, value, coverage, hashAttribute,
// values}]}}}]}` with values as JSON text) with `savedGroups: [{id, name, attributeKey, values}]` beside it.
// Booleans become gates, every other type a config. GrowthBook's `id` attribute is svc's `user_id`.

const attrOf = (name: string) => (name === "id" ? "user_id" : name);

type Ctx = { imp: Importer; groups: Map<string, string>; payloadGroups: Set<string>; source: string };

/** A Mongo-style condition as svc conditions (all must hold), or the reason it cannot be. */
function conditionOf(cond: unknown, ctx: Ctx): Condition[] | string {
  if (cond === undefined || cond === null) return [];
  if (!isObject(cond)) return "not an object";
  const out: Condition[] = [];
  for (const [key, want] of Object.entries(cond)) {
    if (key === "$and") {
      for (const part of arrayOf(want)) {
        const m = conditionOf(part, ctx);
        if (typeof m === "string") return m;
        out.push(...m);
      }
      continue;
    }
    if (key.startsWith("$")) return `${key} has no svc equivalent (svc's conditions all hold together)`;
    const attr = attrOf(key);
    if (!isObject(want)) {
      if (Array.isArray(want)) return `${key}: an array value`;
      out.push({ attr, op: "eq", value: want });
      continue;
    }
    for (const [op, v] of Object.entries(want)) {
      const m = operator(attr, op, v, ctx);
      if (typeof m === "string") return `${key}: ${m}`;
      out.push(m);
    }
  }
  return out;
}

function operator(attr: string, op: string, v: unknown, ctx: Ctx): Condition | string {
  const simple: Record<string, string> = { $eq: "eq", $ne: "neq", $in: "in", $nin: "not_in", $veq: "semver_eq", $vgt: "semver_gt", $vgte: "semver_gte", $vlt: "semver_lt", $vlte: "semver_lte" };
  if (simple[op]) return { attr, op: simple[op]!, value: v };
  if (op === "$gt" || op === "$gte" || op === "$lt" || op === "$lte") {
    if (typeof v === "number") return { attr, op: op.slice(1), value: v };
    // ISO dates compare as text in GrowthBook: svc's before / after (strict) are the strict ones.
    if (typeof v === "string" && /^\d{4}-\d{2}-\d{2}/.test(v) && (op === "$gt" || op === "$lt")) return { attr, op: op === "$gt" ? "after" : "before", value: v };
    return `${op} on ${JSON.stringify(v)} (svc compares numbers, or dates strictly)`;
  }
  if (op === "$regex") return { attr, op: "regex", value: v };
  if (op === "$regexi") return { attr, op: "regex", value: `(?i)${v}` };
  if (op === "$exists") return { attr, op: v ? "exists" : "not_exists" };
  if (op === "$inGroup" || op === "$notInGroup") {
    const segment = ctx.groups.get(String(v));
    if (!segment) return `saved group ${v} is not in the file`;
    // The payload's groups are bare lists: the attribute they hold is the one a condition tests them on.
    const entry = ctx.imp.segments.get(segment);
    if (entry && ctx.payloadGroups.has(segment)) {
      entry.attribute = attr;
      ctx.payloadGroups.delete(segment);
    }
    return { attr: "user_id", op: op === "$inGroup" ? "in_segment" : "not_in_segment", value: segment };
  }
  return `${op} has no svc equivalent`;
}

type Rule = Record<string, any>;

/** A feature's rules normalised from either shape: force (with coverage: a rollout) or experiment. */
function rulesOf(list: unknown, parse: (v: unknown) => unknown): Rule[] {
  return arrayOf(list)
    .filter(isObject)
    .filter((r) => r.enabled !== false)
    .map((r) => {
      if (r.type === "force") return { condition: r.condition, force: parse(r.value), savedGroups: r.savedGroupTargeting };
      if (r.type === "rollout") return { condition: r.condition, force: parse(r.value), coverage: r.coverage, hashAttribute: r.hashAttribute, savedGroups: r.savedGroupTargeting };
      if (r.type === "experiment") return { condition: r.condition, variations: arrayOf(r.values).map((x) => parse(x?.value)), weights: arrayOf(r.values).map((x) => Number(x?.weight)), coverage: r.coverage, hashAttribute: r.hashAttribute, key: r.trackingKey };
      if (r.type) return { unsupported: r.type };
      return r;
    });
}

/** A condition from text (the API's form) or an object. */
function parsedCondition(c: unknown): unknown {
  if (typeof c !== "string") return c;
  if (c.trim() === "") return undefined;
  try {
    return JSON.parse(c);
  } catch {
    return c;
  }
}

function feature(key: string, description: string, env: Env, defaultValue: unknown, rules: Rule[], ctx: Ctx, isBoolean: boolean): void {
  const { imp } = ctx;
  const gateRules: GateRule[] = [];
  const configRules: ConfigRule[] = [];
  const values: unknown[] = [defaultValue];
  let falling = false;
  for (const [i, r] of rules.entries()) {
    const source = `feature ${key} (${env}) rule ${i + 1}`;
    if (r.unsupported) {
      imp.skip(source, `${r.unsupported} rule`, `a GrowthBook ${r.unsupported} rule has no svc equivalent`);
      continue;
    }
    const conditions = conditionOf(parsedCondition(r.condition), { ...ctx, source });
    if (typeof conditions === "string") {
      imp.skip(source, "condition", conditions);
      continue;
    }
    const missing = arrayOf(r.savedGroups).filter(isObject).flatMap((g) => arrayOf(g.ids)).find((id) => !ctx.groups.has(String(id)));
    if (arrayOf(r.savedGroups).some((g) => g?.match === "any" && arrayOf(g.ids).length > 1)) {
      imp.skip(source, "saved group", "matching any of several saved groups: svc's conditions all hold together");
      continue;
    }
    if (missing !== undefined) {
      imp.skip(source, "saved group", `saved group ${missing} is not in the file`);
      continue;
    }
    for (const g of arrayOf(r.savedGroups).filter(isObject))
      for (const id of arrayOf(g.ids)) conditions.push({ attr: "user_id", op: g.match === "none" ? "not_in_segment" : "in_segment", value: ctx.groups.get(String(id)) });
    // Each of these limits who a rule reaches; dropping the limit would widen it.
    const limit = ["namespace", "range", "ranges", "filters"].find((k) => r[k] !== undefined && r[k] !== null);
    if (limit) {
      imp.skip(source, limit === "ranges" ? "range" : limit, `a rule limited by its ${limit} has no svc equivalent; the rule is left out`);
      continue;
    }
    if (isObject(r.parentConditions) || Array.isArray(r.parentConditions)) {
      imp.skip(source, "prerequisite", "parent conditions are not mapped; the rule is left out");
      continue;
    }
    const unit = r.hashAttribute && r.hashAttribute !== "id" ? attrOf(String(r.hashAttribute)) : undefined;
    const coverage = r.coverage === undefined || r.coverage === null ? 1 : Number(r.coverage);
    if ("force" in r) {
      values.push(r.force);
      if (isBoolean) {
        const pct = r.force === true ? coverage * 100 : coverage >= 1 ? 0 : -1;
        if (pct < 0) {
          imp.skip(source, "rollout", `forcing false for ${coverage * 100}% and letting the rest fall through has no svc equivalent`);
          continue;
        }
        // GrowthBook lets units outside a rollout fall through to later rules; svc's rule decides for all it matches.
        if (pct > 0 && pct < 100 && i < rules.length - 1) falling = true;
        const kept = imp.percentage(key, env, pct, source);
        // Forcing true for 0 % of units forces nothing: every unit falls through, so there is no rule.
        if (kept === undefined || (kept === 0 && r.force === true)) continue;
        gateRules.push({ ...(r.id ? { name: String(r.id) } : {}), conditions, passPercentage: kept, ...(unit && kept > 0 && kept < 100 ? { unit } : {}) });
      } else if (coverage >= 1) configRules.push({ conditions, value: r.force });
      else imp.skip(source, "rollout", `serving a value to ${coverage * 100}% and letting the rest fall through has no svc equivalent`);
      continue;
    }
    if (Array.isArray(r.variations)) {
      const weights = arrayOf(r.weights).map(Number);
      const sum = weights.reduce((a, b) => a + b, 0);
      if (coverage < 1 || Math.abs(sum - 1) > 1e-6 || weights.length !== r.variations.length) {
        imp.skip(source, "experiment", `experiment ${r.key ?? ""} with coverage ${coverage} and weights summing to ${sum}: svc maps only a full split (coverage 1, weights summing to 1); run it as an svc experiment`);
        continue;
      }
      if (isBoolean) {
        imp.skip(source, "experiment", "an experiment on a boolean feature: run it as an svc experiment");
        continue;
      }
      const pw = percentWeights(weights, 1);
      if (!pw.exact) imp.skip(source, "experiment weights", `weights ${weights.join("/")} rounded to whole percents: ${pw.weights.join("/")}`);
      values.push(...r.variations);
      const kept = imp.split(key, env, r.variations.map((value: unknown, j: number) => ({ value, weight: pw.weights[j]! })), source);
      if (kept) configRules.push({ conditions, ...kept, ...("split" in kept && unit ? { unit } : {}) });
      continue;
    }
    imp.skip(source, "rule", "neither a force, rollout nor experiment rule");
  }
  if (falling) imp.skip(`feature ${key} (${env})`, "rollout order", "units outside a partial rollout fall through to later rules in GrowthBook but get false in svc; check the order");
  if (isBoolean) {
    // The default value true is a last rule for everyone.
    if (defaultValue === true) gateRules.push({ conditions: [], passPercentage: 100 });
    imp.gate(key, description, env, gateRules);
  } else imp.config(key, description, schemaOf(values), env, defaultValue, configRules);
}

const parseValue = (type: string) => (v: unknown) => {
  if (typeof v !== "string" || type === "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};

export function fromGrowthBook(raw: unknown, options: ImportOptions = {}): ImportResult {
  const imp = new Importer("GrowthBook", options);
  const data = isObject(raw) ? raw : {};
  const groups = new Map<string, string>();
  const payloadGroups = new Set<string>();
  // Saved groups: the payload's `{id: [values]}` (attribute unknown: the SDK inlines it per condition) or the API's list.
  if (isObject(data.savedGroups))
    for (const [id, ids] of Object.entries(data.savedGroups)) {
      groups.set(id, id);
      payloadGroups.add(id);
      imp.segment({ name: id, ids: arrayOf(ids).map(String) });
    }
  for (const g of arrayOf(data.savedGroups).filter(isObject)) {
    const name = String(g.name ?? g.id);
    const cond = g.condition ? conditionOf(parsedCondition(g.condition), { imp, groups, payloadGroups, source: `saved group ${name}` }) : [];
    if (typeof cond === "string") {
      imp.skip(`saved group ${name}`, "saved group", cond);
      continue;
    }
    groups.set(String(g.id), name);
    imp.segment({ name, description: String(g.description ?? ""), attribute: attrOf(String(g.attributeKey ?? "id")), conditions: cond, ids: arrayOf(g.values).map(String) });
  }
  const ctx: Ctx = { imp, groups, payloadGroups, source: "" };
  if (Array.isArray(data.features)) {
    for (const f of data.features.filter(isObject)) {
      const type = String(f.valueType ?? "string");
      const parse = parseValue(type);
      for (const [envName, state] of Object.entries(isObject(f.environments) ? f.environments : {})) {
        const env = imp.env(envName);
        if (!env || !isObject(state)) continue;
        const def = parse(state.defaultValue ?? f.defaultValue);
        // A feature off in an env serves nothing in GrowthBook: a gate off, a config at its default.
        feature(String(f.id), String(f.description ?? ""), env, type === "boolean" && state.enabled === false ? false : def, state.enabled === false ? [] : rulesOf(state.rules, parse), ctx, type === "boolean");
      }
    }
  } else if (isObject(data.features)) {
    const env = options.env ?? "prod";
    for (const [key, f] of Object.entries(data.features)) {
      if (!isObject(f)) continue;
      const rules = rulesOf(f.rules, (v) => v);
      const isBoolean = typeof f.defaultValue === "boolean" && rules.every((r) => !("force" in r) || typeof r.force === "boolean");
      feature(key, "", env, f.defaultValue ?? null, rules, ctx, isBoolean);
    }
  } else imp.notA(false, "a GrowthBook features payload ({features: {...}}) or API export ({features: [...]})");
  return imp.result();
}
