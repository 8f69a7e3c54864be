import type { Env } from "../../../lib/envs";
import { type Condition, type ConfigRule, type GateRule, type ImportOptions, type ImportResult, Importer, arrayOf, isObject, percentWeights, schemaOf, textCondition } from "./common";

// LaunchDarkly's flags as its REST API lists them (`GET /api/v2/flags/{projectKey}?summary=0`:
// https://launchdarkly.com/docs/api/feature-flags/get-feature-flags): `{items: [flag]}`, or `{flags, segments}`
// with the segments of `GET /api/v2/segments/{projectKey}/{environmentKey}`
// (https://launchdarkly.com/docs/api/segments/get-segments) as a list or by environment key. A flag has
// `variations`, and per environment `on`, `targets`, `rules` (clauses, a variation or a rollout whose weights
// are thousandths of a percent), `fallthrough`, `offVariation` and `prerequisites`. Boolean flags become
// gates, others configs. The user context's `key` is svc's `user_id`.

const attrOf = (attribute: unknown, kind: unknown) => {
  const k = kind === undefined || kind === null || kind === "user" ? "" : String(kind);
  if (attribute === "key") return k ? `${k}_id` : "user_id";
  return k ? `${k}.${attribute}` : String(attribute);
};

type Ctx = { imp: Importer; segments: Set<string> };

/** A clause (`{attribute, op, values, negate, contextKind}`) as one svc condition, or why not. */
function clause(c: Record<string, any>, ctx: Ctx): Condition | string {
  const values = arrayOf(c.values);
  const negate = c.negate === true;
  const attr = attrOf(c.attribute, c.contextKind);
  const op = String(c.op);
  if (values.length === 0) return `${op} with no values`;
  if (op === "segmentMatch") {
    if (values.length > 1) return "matching any of several segments: svc's conditions all hold together";
    const key = String(values[0]);
    if (!ctx.segments.has(key)) return `segment ${key} is not mapped`;
    return { attr: "user_id", op: negate ? "not_in_segment" : "in_segment", value: key };
  }
  if (op === "in") return { attr, op: negate ? "not_in" : "in", value: values };
  const text = { startsWith: "starts_with", endsWith: "ends_with", contains: "contains" } as const;
  if (op in text) return negate ? `negated ${op}: svc has no negated text operator` : textCondition(attr, text[op as keyof typeof text], values.map(String), false);
  if (op === "matches") return negate ? "negated matches: svc has no negated pattern" : { attr, op: "regex", value: values.length === 1 ? String(values[0]) : values.map((v) => `(?:${v})`).join("|") };
  const compare: Record<string, [string, string]> = {
    lessThan: ["lt", "gte"],
    lessThanOrEqual: ["lte", "gt"],
    greaterThan: ["gt", "lte"],
    greaterThanOrEqual: ["gte", "lt"],
    before: ["before", ""],
    after: ["after", ""],
    semVerEqual: ["semver_eq", ""],
    semVerLessThan: ["semver_lt", "semver_gte"],
    semVerGreaterThan: ["semver_gt", "semver_lte"],
  };
  const pair = compare[op];
  if (!pair) return `operator ${op} has no svc equivalent`;
  if (values.length > 1) return `${op} against any of ${values.length} values`;
  const svcOp = negate ? pair[1] : pair[0];
  if (!svcOp) return `negated ${op} has no svc equivalent`;
  const v = values[0];
  // LaunchDarkly dates may be epoch milliseconds; svc's are ISO text.
  return { attr, op: svcOp, value: (op === "before" || op === "after") && typeof v === "number" ? new Date(v).toISOString() : v };
}

function clauses(list: unknown, source: string, ctx: Ctx): Condition[] | undefined {
  const out: Condition[] = [];
  for (const [i, c] of arrayOf(list).entries()) {
    const m = clause(isObject(c) ? c : {}, ctx);
    if (typeof m === "string") {
      ctx.imp.skip(`${source} clause ${i + 1} (${c?.attribute} ${c?.op})`, "clause", m);
      return undefined;
    }
    out.push(m);
  }
  return out;
}

const listOf = (v: unknown): any[] => (Array.isArray(v) ? v : isObject(v) && Array.isArray(v.items) ? v.items : []);

export function fromLaunchDarkly(raw: unknown, options: ImportOptions = {}): ImportResult {
  const imp = new Importer("LaunchDarkly", options);
  const data = isObject(raw) ? raw : {};
  const ctx: Ctx = { imp, segments: new Set() };
  if (imp.notA(listOf(data.flags ?? data.items).length > 0 || Array.isArray(data.items) || isObject(data.flags), "a LaunchDarkly flags list ({items: [...]} or {flags, segments})")) return imp.result();
  // Segments: one list, or one per environment (`{production: {items}}`); a key seen twice keeps its first form.
  const segs = Array.isArray(data.segments) || (isObject(data.segments) && Array.isArray(data.segments.items)) ? listOf(data.segments) : Object.values(isObject(data.segments) ? data.segments : {}).flatMap(listOf);
  for (const s of segs.filter(isObject)) {
    const key = String(s.key);
    if (ctx.segments.has(key)) continue;
    const source = `segment ${key}`;
    if (arrayOf(s.excluded).length > 0) imp.skip(source, "excluded", "svc segments have no exclusions; the segment is not mapped");
    else if (arrayOf(s.rules).length > 1) imp.skip(source, "rules", "several rules (any may hold): svc's segment conditions all hold together; the segment is not mapped");
    else if (arrayOf(s.rules).some((r) => r?.weight !== undefined && r?.weight !== null)) imp.skip(source, "rules", "a weighted segment rule has no svc equivalent; the segment is not mapped");
    else if (s.unbounded === true) imp.skip(source, "unbounded", "a big segment lives outside the export; the segment is not mapped");
    else {
      const conds = arrayOf(s.rules).length ? clauses(s.rules[0].clauses, source, ctx) : [];
      if (conds) {
        ctx.segments.add(key);
        imp.segment({ name: key, description: String(s.description ?? s.name ?? ""), conditions: conds, ids: arrayOf(s.included).map(String) });
      }
    }
  }
  for (const f of listOf(data.flags ?? data.items).filter(isObject)) flag(f, ctx);
  return imp.result();
}

type Serve = { value: unknown } | { split: { value: unknown; weight: number }[]; unit?: string };

/** A rule's or the fallthrough's variation or rollout (weights out of 100,000; a gate keeps them exact, a config's split rounds to whole percents). */
function serveOf(x: Record<string, any>, variations: unknown[], source: string, imp: Importer, forGate: boolean): Serve | undefined {
  if (typeof x.variation === "number") return { value: variations[x.variation] };
  const r = isObject(x.rollout) ? x.rollout : undefined;
  if (!r) return undefined;
  if (r.kind === "experiment") imp.skip(source, "experiment", "an experiment rollout is kept as a plain split; run the experiment in svc");
  const vs = arrayOf(r.variations).filter(isObject);
  const pw = percentWeights(vs.map((v) => Number(v.weight ?? 0)), 100000);
  if (!pw.exact && !forGate) imp.skip(source, "rollout weights", `weights ${vs.map((v) => Number(v.weight) / 1000).join("/")}% rounded to whole percents: ${pw.weights.join("/")}`);
  const unit = r.bucketBy && r.bucketBy !== "key" ? attrOf(r.bucketBy, r.contextKind) : r.contextKind && r.contextKind !== "user" ? attrOf("key", r.contextKind) : undefined;
  return { split: vs.map((v, i) => ({ value: variations[v.variation], weight: pw.weights[i]!, exact: Number(v.weight) / 1000 })) as never, ...(unit ? { unit } : {}) };
}

function flag(f: Record<string, any>, ctx: Ctx): void {
  const { imp } = ctx;
  const key = String(f.key);
  const variations = arrayOf(f.variations).map((v) => (isObject(v) ? v.value : v));
  const isBoolean = f.kind === "boolean" || (variations.length === 2 && variations.every((v) => typeof v === "boolean"));
  const description = String(f.description || f.name || "");
  for (const [envKey, state] of Object.entries(isObject(f.environments) ? f.environments : {})) {
    const env = imp.env(envKey);
    if (!env || !isObject(state)) continue;
    const at = `flag ${key} (${envKey})`;
    const off = typeof state.offVariation === "number" ? variations[state.offVariation] : isBoolean ? false : null;
    const prereqs: Condition[] = [];
    for (const p of arrayOf(state.prerequisites ?? f.prerequisites).filter(isObject)) prereqs.push({ attr: "user_id", op: "passes_gate", value: String(p.key) });
    if (prereqs.length && !isBoolean) imp.skip(at, "prerequisites", "kept as passes_gate on each rule: the prerequisite's variation is taken to be its true one");
    type Step = { name?: string; conditions: Condition[]; serve: Serve; source: string };
    const steps: Step[] = [];
    if (state.on === true) {
      for (const t of [...arrayOf(state.targets), ...arrayOf(state.contextTargets).filter((t) => t?.contextKind && t.contextKind !== "user")].filter(isObject)) {
        const ids = arrayOf(t.values).map(String);
        const segment = `${key}-${env}-targets-${t.contextKind && t.contextKind !== "user" ? `${t.contextKind}-` : ""}${t.variation}`;
        if (ids.length) steps.push({ conditions: [...prereqs, imp.idsCondition(attrOf("key", t.contextKind), ids, segment, `LaunchDarkly targets of ${key} (${envKey}, variation ${t.variation})`)], serve: { value: variations[t.variation] }, source: `${at} targets` });
      }
      for (const [i, r] of arrayOf(state.rules).filter(isObject).entries()) {
        const source = `${at} rule ${i + 1}`;
        const conds = clauses(r.clauses, source, ctx);
        const serve = serveOf(r, variations, source, imp, isBoolean);
        if (!conds) continue;
        if (!serve) imp.skip(source, "rule", "serves neither a variation nor a rollout");
        else steps.push({ ...(r.description ? { name: String(r.description).slice(0, 100) } : {}), conditions: [...prereqs, ...conds], serve, source });
      }
      const fall = serveOf(isObject(state.fallthrough) ? state.fallthrough : {}, variations, `${at} fallthrough`, imp, isBoolean);
      if (fall) steps.push({ conditions: prereqs, serve: fall, source: `${at} fallthrough` });
    }
    if (isBoolean) gateOf(key, description, env, off, steps, imp);
    else configOf(key, description, env, off, steps, variations, imp);
  }
}

function gateOf(key: string, description: string, env: Env, off: unknown, steps: { name?: string; conditions: Condition[]; serve: Serve; source: string }[], imp: Importer): void {
  if (off === true) imp.skip(`flag ${key}`, "offVariation", "serving true when off (or to units prerequisites fail) has no svc equivalent: a gate is off then");
  const rules: GateRule[] = [];
  for (const s of steps) {
    let pct: number;
    let unit: string | undefined;
    if ("value" in s.serve) pct = s.serve.value === true ? 100 : 0;
    else {
      pct = s.serve.split.filter((x) => x.value === true).reduce((a, x) => a + ((x as { exact?: number }).exact ?? x.weight), 0);
      unit = s.serve.unit;
    }
    const kept = imp.percentage(key, env, pct, s.source);
    if (kept === undefined) continue;
    rules.push({ ...(s.name ? { name: s.name } : {}), conditions: s.conditions, passPercentage: kept, ...(unit && kept > 0 && kept < 100 ? { unit } : {}) });
  }
  // A trailing "false for everyone" is the gate's own default.
  while (rules.length && rules[rules.length - 1]!.passPercentage === 0 && rules[rules.length - 1]!.conditions.length === 0) rules.pop();
  imp.gate(key, description, env, rules);
}

function configOf(key: string, description: string, env: Env, off: unknown, steps: { name?: string; conditions: Condition[]; serve: Serve; source: string }[], variations: unknown[], imp: Importer): void {
  const rules: ConfigRule[] = [];
  let value = off;
  for (const [i, s] of steps.entries()) {
    const last = i === steps.length - 1 && s.conditions.length === 0;
    if ("value" in s.serve) {
      if (last) value = s.serve.value;
      else rules.push({ ...(s.name ? { name: s.name } : {}), conditions: s.conditions, value: s.serve.value });
      continue;
    }
    const kept = imp.split(key, env, s.serve.split.map((x) => ({ value: x.value, weight: x.weight })), s.source);
    if (!kept) continue;
    if (last && "value" in kept) value = kept.value;
    else rules.push({ ...(s.name ? { name: s.name } : {}), conditions: s.conditions, ...kept, ...("split" in kept && s.serve.unit ? { unit: s.serve.unit } : {}) });
  }
  imp.config(key, description, schemaOf([...variations, off]), env, value, rules);
}
