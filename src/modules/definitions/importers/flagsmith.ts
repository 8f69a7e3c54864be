import { type Condition, type ConfigRule, type GateRule, type ImportOptions, type ImportResult, Importer, arrayOf, isObject, schemaOf } from "./common";

// Flagsmith's environment document (`GET /api/v1/environment-document/` with a server-side key, what its
// SDKs' local evaluation reads: https://docs.flagsmith.com/clients/server-side#local-evaluation): one
// environment, going to `options.env` (default prod). `feature_states` (enabled, `feature_state_value`,
// `multivariate_feature_state_values` with `percentage_allocation`), `project.segments` (rules of ALL / ANY /
// NONE over conditions, and their `feature_states`: segment overrides, ordered by `feature_segment.priority`),
// and `identity_overrides` (`identifier`, `identity_features`). Features without a value become gates, those
// with one configs. The identity's identifier is svc's `user_id`.

const attrOf = (property: unknown) => (property === "$.identity.identifier" || property === "$.identity.key" ? "user_id" : String(property));

/** One condition (`{operator, property_, value}`); values like `1.2.0:semver` compare as versions. */
function condition(c: Record<string, any>): Condition | string {
  const attr = attrOf(c.property_ ?? c.property);
  const raw = c.value;
  const text = raw === null || raw === undefined ? "" : String(raw);
  const semver = text.endsWith(":semver") ? text.slice(0, -7) : undefined;
  const num = (v: string) => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);
  const op = String(c.operator);
  const compare: Record<string, [string, string]> = { GREATER_THAN: ["gt", "semver_gt"], GREATER_THAN_INCLUSIVE: ["gte", "semver_gte"], LESS_THAN: ["lt", "semver_lt"], LESS_THAN_INCLUSIVE: ["lte", "semver_lte"] };
  if (op === "EQUAL") return semver ? { attr, op: "semver_eq", value: semver } : { attr, op: "eq", value: raw };
  if (op === "NOT_EQUAL") return semver ? "NOT_EQUAL on a version" : { attr, op: "neq", value: raw };
  if (compare[op]) {
    if (semver) return { attr, op: compare[op]![1], value: semver };
    const n = num(text);
    return typeof n === "number" ? { attr, op: compare[op]![0], value: n } : `${op} on text ${JSON.stringify(text)}`;
  }
  if (op === "CONTAINS") return { attr, op: "contains", value: text };
  if (op === "REGEX") return { attr, op: "regex", value: text };
  if (op === "IS_SET") return { attr, op: "exists" };
  if (op === "IS_NOT_SET") return { attr, op: "not_exists" };
  if (op === "IN") return { attr, op: "in", value: text.split(",").map((s) => s.trim()).filter(Boolean) };
  if (op === "PERCENTAGE_SPLIT") return "a percentage split inside a segment: svc's segments hold no percentages (put the percentage on the gate rule)";
  return `operator ${op} has no svc equivalent`;
}

const NEGATED: Record<string, string> = { eq: "neq", neq: "eq", in: "not_in", exists: "not_exists", not_exists: "exists", gt: "lte", gte: "lt", lt: "gte", lte: "gt" };

/** A segment rule (ALL / ANY / NONE, nested) as conditions that all hold, or why not. */
function rule(r: Record<string, any>): Condition[] | string {
  const conds: Condition[] = [];
  for (const c of arrayOf(r.conditions).filter(isObject)) {
    const m = condition(c);
    if (typeof m === "string") return m;
    conds.push(m);
  }
  const nested: Condition[] = [];
  for (const n of arrayOf(r.rules).filter(isObject)) {
    const m = rule(n);
    if (typeof m === "string") return m;
    nested.push(...m);
  }
  if (r.type === "ALL") return [...conds, ...nested];
  if (r.type === "ANY") {
    if (nested.length === 0 && conds.length <= 1) return conds;
    // Any of several equalities on one trait is `in`.
    if (nested.length === 0 && conds.every((c) => c.op === "eq" && c.attr === conds[0]!.attr)) return [{ attr: conds[0]!.attr, op: "in", value: conds.map((c) => c.value) }];
    return "an ANY rule over several conditions: svc's segment conditions all hold together";
  }
  if (r.type === "NONE") {
    const all = [...conds, ...nested];
    const out = all.map((c) => (NEGATED[c.op] ? { ...c, op: NEGATED[c.op]! } : null));
    if (out.some((c) => c === null)) return "a NONE rule over an operator svc cannot negate";
    // NONE over several conditions: none holds, so each negation holds.
    return out as Condition[];
  }
  return `rule type ${r.type}`;
}

const valueOf = (fs: Record<string, any>) => fs.feature_state_value;
const hasValue = (fs: Record<string, any>) => (valueOf(fs) !== null && valueOf(fs) !== undefined && valueOf(fs) !== "") || arrayOf(fs.multivariate_feature_state_values).length > 0;

export function fromFlagsmith(raw: unknown, options: ImportOptions = {}): ImportResult {
  const imp = new Importer("Flagsmith", options);
  const env = options.env ?? "prod";
  const data = isObject(raw) ? raw : {};
  if (imp.notA(Array.isArray(data.feature_states), "a Flagsmith environment document (it has feature_states)")) return imp.result();
  const project = isObject(data.project) ? data.project : {};
  const segments = arrayOf(project.segments).filter(isObject);
  const mapped = new Set<string>();
  for (const s of segments) {
    const name = String(s.name);
    const conds: Condition[] = [];
    let reason: string | undefined;
    for (const r of arrayOf(s.rules).filter(isObject)) {
      const m = rule(r);
      if (typeof m === "string") reason ??= m;
      else conds.push(...m);
    }
    if (reason) imp.skip(`segment ${name}`, "segment rules", reason);
    else {
      mapped.add(name);
      imp.segment({ name, description: String(s.description ?? ""), conditions: conds });
    }
  }
  const overrides = arrayOf(data.identity_overrides ?? data.identities).filter(isObject);
  for (const fs of arrayOf(data.feature_states).filter(isObject)) {
    const name = String(fs.feature?.name);
    const segmentStates = segments
      .flatMap((s) => arrayOf(s.feature_states).filter((x) => isObject(x) && x.feature?.name === name).map((x) => ({ segment: String(s.name), fs: x as Record<string, any> })))
      .sort((a, b) => Number(a.fs.feature_segment?.priority ?? 0) - Number(b.fs.feature_segment?.priority ?? 0));
    const identityStates = overrides.flatMap((o) => arrayOf(o.identity_features).filter((x) => isObject(x) && x.feature?.name === name).map((x) => ({ id: String(o.identifier), fs: x as Record<string, any> })));
    const valued = hasValue(fs) || segmentStates.some((s) => hasValue(s.fs)) || identityStates.some((s) => hasValue(s.fs));
    const segmentOk = segmentStates.filter((s) => {
      if (!mapped.has(s.segment)) imp.skip(`feature ${name} override for segment ${s.segment}`, "segment override", "its segment is not mapped");
      return mapped.has(s.segment);
    });
    if (!valued) {
      const rules: GateRule[] = [];
      for (const enabled of [true, false]) {
        const ids = identityStates.filter((s) => (s.fs.enabled === true) === enabled).map((s) => s.id);
        const which = enabled ? "on" : "off";
        if (ids.length) rules.push({ name: `identity overrides (${which})`, conditions: [imp.idsCondition("user_id", ids, `${name}-identities-${which}`, `Flagsmith identity overrides of ${name} (${which})`)], passPercentage: enabled ? 100 : 0 });
      }
      for (const s of segmentOk) rules.push({ name: `segment ${s.segment}`, conditions: [{ attr: "user_id", op: "in_segment", value: s.segment }], passPercentage: s.fs.enabled === true ? 100 : 0 });
      if (fs.enabled === true) rules.push({ conditions: [], passPercentage: 100 });
      while (rules.length && rules[rules.length - 1]!.passPercentage === 0 && rules[rules.length - 1]!.conditions.length === 0) rules.pop();
      imp.gate(name, String(fs.feature?.description ?? ""), env, rules);
      continue;
    }
    if ([fs, ...segmentStates.map((s) => s.fs), ...identityStates.map((s) => s.fs)].some((x) => x.enabled !== true))
      imp.skip(`feature ${name}`, "enabled", "a feature with a value is a config in svc, which serves its value whether the feature is on or off");
    const rules: ConfigRule[] = [];
    const byValue = new Map<string, string[]>();
    for (const s of identityStates) byValue.set(JSON.stringify(valueOf(s.fs) ?? null), [...(byValue.get(JSON.stringify(valueOf(s.fs) ?? null)) ?? []), s.id]);
    [...byValue].forEach(([v, ids], i) =>
      rules.push({ name: "identity overrides", conditions: [imp.idsCondition("user_id", ids, `${name}-identities-${i + 1}`, `Flagsmith identity overrides of ${name} (value ${i + 1})`)], value: JSON.parse(v) }),
    );
    for (const s of [...segmentOk.map((x) => ({ at: `segment ${x.segment}`, fs: x.fs })), ...identityStates.map((x) => ({ at: `identity ${x.id}`, fs: x.fs }))])
      if (arrayOf(s.fs.multivariate_feature_state_values).length) imp.skip(`feature ${name} override for ${s.at}`, "multivariate override", "an override's own allocations are not mapped; it serves its value");
    for (const s of segmentOk) rules.push({ name: `segment ${s.segment}`, conditions: [{ attr: "user_id", op: "in_segment", value: s.segment }], value: valueOf(s.fs) ?? null });
    const mv = arrayOf(fs.multivariate_feature_state_values).filter(isObject);
    const values: unknown[] = [valueOf(fs) ?? null, ...rules.map((r) => r.value)];
    if (mv.length) {
      const entries = mv.map((m) => ({ value: m.multivariate_feature_option?.value ?? null, weight: Number(m.percentage_allocation ?? 0) }));
      const rest = 100 - entries.reduce((a, e) => a + e.weight, 0);
      const split = [...entries, ...(rest > 0 ? [{ value: valueOf(fs) ?? null, weight: rest }] : [])];
      values.push(...split.map((e) => e.value));
      if (split.some((e) => !Number.isInteger(e.weight))) imp.skip(`feature ${name} variations`, "multivariate", `allocations ${split.map((e) => e.weight).join("/")} are not whole percents`);
      else {
        const kept = imp.split(name, env, split, `feature ${name} variations`);
        if (kept) rules.push({ conditions: [], ...kept });
      }
    }
    imp.config(name, String(fs.feature?.description ?? ""), schemaOf(values), env, valueOf(fs) ?? null, rules);
  }
  return imp.result();
}
