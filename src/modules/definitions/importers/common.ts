import type { Env } from "../../../lib/envs";
import { DOCUMENT_VERSION, type DefinitionsDocument, type Entry } from "../types";

// What every importer shares (issue 31, "Import from the tools teams leave"): the result shape, the options,
// env names, and the bookkeeping of what could not be mapped and which percentages re-bucket. Importers are
// pure functions over a parsed export: no HTTP, no store; the CLI sends their document through plan/apply.

export type Condition = { attr: string; op: string; value?: unknown };
export type GateRule = { name?: string; conditions: Condition[]; passPercentage: number; unit?: string };
export type SplitEntry = { value: unknown; weight: number };
export type ConfigRule = { name?: string; conditions: Condition[]; value?: unknown; split?: SplitEntry[]; unit?: string };

/** Something of the export that is not in the document, and why. */
export type Unmapped = { source: string; construct: string; reason: string };
/** A percentage kept in the document whose units will land in other buckets than in the source tool. */
export type Rebucketed = { flag: string; env: Env; percentage: number; split?: number[] };

export type ImportResult = { document: DefinitionsDocument; unmapped: Unmapped[]; rebucketed: Rebucketed[] };

export type ImportOptions = {
  /** Source env name → svc env, over the defaults (development → dev, staging → staging, production → prod). */
  envMap?: Record<string, Env>;
  /** The svc env an export of one environment goes to (GrowthBook's payload, Flagsmith's document); default prod. */
  env?: Env;
  /** Keep only 0 % and 100 % rules (exact); partial percentages go to `unmapped`. */
  keepExact?: boolean;
};

export const TOOLS = ["unleash", "growthbook", "launchdarkly", "flagsmith"] as const;
export type Tool = (typeof TOOLS)[number];
/** Each tool's name as people write it. */
export const TOOL_NAMES: Record<Tool, string> = { unleash: "Unleash", growthbook: "GrowthBook", launchdarkly: "LaunchDarkly", flagsmith: "Flagsmith" };

/** Entries of one `in` condition's list (the gates module's LIST_VALUES_MAX). */
export const LIST_MAX = 1000;

const DEFAULT_ENVS: Record<string, Env> = { dev: "dev", development: "dev", develop: "dev", staging: "staging", stage: "staging", prod: "prod", production: "prod" };

/** Collects a document's entries and the importer's notes. */
export class Importer {
  readonly unmapped: Unmapped[] = [];
  readonly rebucketed: Rebucketed[] = [];
  readonly segments = new Map<string, Entry>();
  readonly gates = new Map<string, Entry>();
  readonly configs = new Map<string, Entry>();
  readonly killswitches = new Map<string, Entry>();

  constructor(
    readonly tool: string,
    readonly options: ImportOptions,
  ) {}

  /** Notes a file of another shape (nothing of it maps); true when it is one. */
  notA(ok: boolean, what: string): boolean {
    if (!ok) this.skip("file", "format", `not ${what}`);
    return !ok;
  }

  skip(source: string, construct: string, reason: string): void {
    this.unmapped.push({ source, construct, reason });
  }

  /** The svc env of a source env name, or undefined (and one unmapped line per name) when there is none. */
  env(name: string, source = `environment ${name}`): Env | undefined {
    const env = this.options.envMap?.[name] ?? DEFAULT_ENVS[name.toLowerCase()];
    if (env) return env;
    if (!this.unmapped.some((u) => u.construct === "environment" && u.source === source)) this.skip(source, "environment", `no svc env for "${name}"; pass --env-map ${name}=dev|staging|prod`);
    return undefined;
  }

  /**
   * A rule's percentage as it will be kept: 0 and 100 exactly; a partial one is kept and re-buckets (noted),
   * or with keepExact goes to unmapped (undefined: drop the rule).
   */
  percentage(flag: string, env: Env, pct: number, source: string): number | undefined {
    const p = Math.round(pct * 1000) / 1000;
    if (p <= 0 || p >= 100) return p <= 0 ? 0 : 100;
    if (this.options.keepExact) {
      this.skip(source, "percentage rollout", `${p}% of units: --keep-exact keeps only 0% and 100% rules (svc buckets units differently from ${this.tool})`);
      return undefined;
    }
    this.rebucketed.push({ flag, env, percentage: p });
    return p;
  }

  /** A split kept as it is (re-buckets, noted), or with keepExact only when one value has all the weight. */
  split(flag: string, env: Env, split: SplitEntry[], source: string): { value: unknown } | { split: SplitEntry[] } | undefined {
    const live = split.filter((s) => s.weight > 0);
    if (live.length === 1) return { value: live[0]!.value };
    if (live.length === 0) {
      this.skip(source, "split", "every weight is 0");
      return undefined;
    }
    if (this.options.keepExact) {
      this.skip(source, "split", `a ${split.map((s) => s.weight).join("/")} split: --keep-exact keeps only exact values (svc buckets units differently from ${this.tool})`);
      return undefined;
    }
    this.rebucketed.push({ flag, env, percentage: 100, split: split.map((s) => s.weight) });
    return { split };
  }

  segment(entry: { name: string; description?: string; attribute?: string; conditions?: Condition[]; ids?: string[] }): void {
    this.segments.set(entry.name, { name: entry.name, description: entry.description ?? "", attribute: entry.attribute ?? "user_id", conditions: entry.conditions ?? [], ids: entry.ids ?? [] });
  }

  /**
   * `attr` is one of `ids`: an `in` condition, or past what one condition's list holds (LIST_MAX), a segment
   * of those ids named `segmentName` (segments hold up to 100,000).
   */
  idsCondition(attr: string, ids: string[], segmentName: string, description: string): Condition {
    if (ids.length <= LIST_MAX) return { attr, op: "in", value: ids };
    this.segment({ name: segmentName, description, attribute: attr, ids });
    return { attr: "user_id", op: "in_segment", value: segmentName };
  }

  /** The gate's rules on one env (the gate made on first use). */
  gate(name: string, description: string, env: Env, rules: GateRule[]): void {
    const gate = this.gates.get(name) ?? { name, description, envs: {} };
    (gate.envs as Record<string, unknown>)[env] = { rules };
    this.gates.set(name, gate);
  }

  config(name: string, description: string, schema: unknown, env: Env, value: unknown, rules: ConfigRule[]): void {
    const config = this.configs.get(name) ?? { name, description, schema, envs: {} };
    config.schema = schema;
    (config.envs as Record<string, unknown>)[env] = { value, rules };
    this.configs.set(name, config);
  }

  killswitch(name: string, description: string, env: Env, value: boolean): void {
    const k = this.killswitches.get(name) ?? { name, description, envs: {} };
    (k.envs as Record<string, unknown>)[env] = { value, switches: {} };
    this.killswitches.set(name, k);
  }

  result(): ImportResult {
    const sorted = (m: Map<string, Entry>) => [...m.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const document: DefinitionsDocument = { version: DOCUMENT_VERSION };
    if (this.segments.size) document.segments = sorted(this.segments);
    if (this.killswitches.size) document.killswitches = sorted(this.killswitches);
    if (this.gates.size) document.gates = sorted(this.gates);
    if (this.configs.size) document.configs = sorted(this.configs);
    return { document, unmapped: this.unmapped, rebucketed: this.rebucketed };
  }
}

/** A JSON Schema that admits every value given: one type when they share it, else any JSON. */
export function schemaOf(values: unknown[]): Record<string, unknown> {
  const types = new Set(values.map((v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v)));
  if (types.has("integer") && types.has("number")) types.delete("integer");
  if (types.size === 1) return { type: [...types][0] };
  return {};
}

/** Integer weights summing to 100 from weights summing to `total` (largest remainder); `exact` false when rounding moved any. */
export function percentWeights(weights: number[], total: number): { weights: number[]; exact: boolean } {
  const raw = weights.map((w) => (w * 100) / total);
  const out = raw.map(Math.floor);
  let rest = 100 - out.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (rest <= 0) break;
    out[i]!++;
    rest--;
  }
  return { weights: out, exact: raw.every((r, i) => r === out[i]) };
}

export const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** Text operators over a list of values (any matches), as one svc condition: the operator itself for one value, else an RE2 pattern. */
export function textCondition(attr: string, kind: "contains" | "starts_with" | "ends_with" | "in", values: string[], caseInsensitive: boolean): Condition {
  if (!caseInsensitive && values.length === 1 && kind !== "in") return { attr, op: kind, value: values[0] };
  if (!caseInsensitive && kind === "in") return { attr, op: "in", value: values };
  const alt = values.length === 1 ? escapeRegex(values[0]!) : `(?:${values.map(escapeRegex).join("|")})`;
  const body = kind === "contains" ? alt : kind === "starts_with" ? `^${alt}` : kind === "ends_with" ? `${alt}$` : `^${alt}$`;
  return { attr, op: "regex", value: `${caseInsensitive ? "(?i)" : ""}${body}` };
}

export const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
export const arrayOf = (v: unknown): any[] => (Array.isArray(v) ? v : []);
