import { UsageError } from "../../lib/config";
import { withQuery } from "../../lib/query-path";
import type { MetricResult, Results, TreatmentResult } from "./analysis";
import type { Guardrail, Variant } from "./checks";
import type { Experiment, ExperimentStatus } from "./service";
import type { Metric } from "../metrics/service";
import type { SegmentRange } from "../universes/service";
import type { VariantOverride } from "../../sdk/experiments";
import type { SvcClient } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, YES_FLAG, confirmChange, emit, envFlag, jsonFlag, list, openClient, str, table, when } from "../../cli/client-command";
import type { ArgValues, Command, Flag, Flags } from "../../cli/command";
import { holdoutText, parseSegmentRange } from "../universes/cli";

const EXPERIMENTS = "/api/admin/experiments";
const base = (name: string) => `${EXPERIMENTS}/${encodeURIComponent(name)}`;

/** Every status with what it means (a Record, so a status the server adds is a compile error here). */
const STATUSES: Record<ExperimentStatus, string> = {
  draft: "designed, not published: everything can change",
  running: "published in its env's snapshot: SDKs assign units and log exposures",
  stopped: "finished, a variant shipped or rolled back: kept as a record",
};
const STATUS_NAMES = Object.keys(STATUSES) as ExperimentStatus[];
const WORSE_WHEN = ["increase", "decrease"] as const;
const VARIANT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

const ALLOCATION_HELP = "START-END in the universe's segments 0 to 10000, end excluded: 0-5000 takes segments 0 to 4999, 50 % of its units (not over its holdout)";
const VARIANT_HELP = "KEY=WEIGHT, once per variant, the control first: --variant control=50 --variant green=50 (weights are relative)";
const VALUE_HELP = "KEY=JSON: the value the SDK hands back for that variant (default null), e.g. green='\"green\"' or green=@value.json";
const OVERRIDE_HELP = "KEY=config:NAME=JSON (the config reads JSON for the variant's units), KEY=gate:NAME=true|false, or KEY=none to remove one";
const GUARDRAIL_HELP = "METRIC[:increase|decrease]: a metric that must not get worse; the suffix is the harmful move (default decrease)";

/** `0-5000`, `0..5000`, `[0, 5000)`: the `[start, end)` the API takes (parsed as a holdout is). */
export function allocationFlag(text: string): SegmentRange {
  const range = parseSegmentRange(text);
  if (!range) throw new UsageError(`--allocation must be START-END in segments, e.g. --allocation 0-5000 for half of the universe's units (got "${text}")`);
  return range;
}

/** `green=50` → key and weight. */
function variantFlag(text: string): { key: string; weight: number } {
  const m = /^([^=]+)=\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m || !VARIANT_KEY.test(m[1]!)) {
    throw new UsageError(`--variant must be KEY=WEIGHT, KEY 1 to 64 letters, digits, _ . or -: --variant control=50 --variant green=50 (got "${text}")`);
  }
  return { key: m[1]!, weight: Number(m[2]) };
}

/** `KEY=REST` of --value and --override: the key and the rest, split at the first `=`. */
function keyed(text: string, flag: string, shape: string): [string, string] {
  const at = text.indexOf("=");
  if (at < 1) throw new UsageError(`--${flag} must be ${shape} (got "${text}")`);
  return [text.slice(0, at), text.slice(at + 1)];
}

function jsonOf(text: string, flag: string, key: string): unknown {
  if (text.startsWith("@")) return jsonFlag(text, flag);
  try {
    return JSON.parse(text);
  } catch {
    const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new UsageError(`--${flag} ${key}=…: not JSON (a string needs quotes: --${flag} '${key}="text"'), got: ${shown}`);
  }
}

function valueFlags(values: ArgValues): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const text of list(values, "value")) {
    const [key, json] = keyed(text, "value", "KEY=JSON, e.g. --value green='\"green\"'");
    if (out.has(key)) throw new UsageError(`--value ${key}=… is given twice`);
    out.set(key, jsonOf(json, "value", key));
  }
  return out;
}

/** `green=config:checkout={"color":"green"}`, `green=gate:new-checkout=true`, `green=none` (null: remove it). */
function overrideFlags(values: ArgValues): Map<string, VariantOverride | null> {
  const out = new Map<string, VariantOverride | null>();
  const shape = "KEY=config:NAME=JSON, KEY=gate:NAME=true|false or KEY=none";
  for (const text of list(values, "override")) {
    const [key, rest] = keyed(text, "override", shape);
    if (out.has(key)) throw new UsageError(`--override ${key}=… is given twice`);
    if (rest === "none") {
      out.set(key, null);
      continue;
    }
    const m = /^(config|gate):([^=]+)=(.*)$/s.exec(rest);
    if (!m) throw new UsageError(`--override must be ${shape} (got "${text}")`);
    const [, kind, name, value] = m;
    if (kind === "gate") {
      if (value !== "true" && value !== "false") throw new UsageError(`--override ${key}=gate:${name}=…: a gate override is true or false (what the gate answers for the variant's units), got "${value}"`);
      out.set(key, { kind: "gate", name: name!, value: value === "true" });
    } else {
      out.set(key, { kind: "config", name: name!, value: jsonOf(value!, "override", `${key}=config:${name}`) });
    }
  }
  return out;
}

/** `revenue`, `errors:increase` → {metric, worseWhen}. A suffix that is not a direction stays in the name. */
function guardrailFlag(text: string): Guardrail {
  const at = text.lastIndexOf(":");
  const suffix = at > 0 ? text.slice(at + 1) : "";
  if ((WORSE_WHEN as readonly string[]).includes(suffix)) return { metric: text.slice(0, at), worseWhen: suffix as Guardrail["worseWhen"] };
  if (text === "" || /:(increase|decrease)?$/i.test(text)) throw new UsageError(`--guardrail must be METRIC[:increase|decrease], e.g. --guardrail errors:increase (got "${text}")`);
  return { metric: text, worseWhen: "decrease" };
}

function statusFlag(value: string | undefined): ExperimentStatus | undefined {
  if (value === undefined) return undefined;
  if (!STATUS_NAMES.includes(value as ExperimentStatus)) throw new UsageError(`--status must be one of ${STATUS_NAMES.join(", ")} (got "${value}")`);
  return value as ExperimentStatus;
}

type VariantBody = { key: string; name?: string; weight: number; value?: unknown; override?: VariantOverride | null };

type VariantFlags = { given: { key: string; weight: number }[]; values: Map<string, unknown>; overrides: Map<string, VariantOverride | null> };

/** --variant, --value and --override parsed (a mistake is a usage error before anything is sent or read); undefined when none is given. */
function variantFlags(values: ArgValues): VariantFlags | undefined {
  const given = list(values, "variant").map(variantFlag);
  const parsed = { given, values: valueFlags(values), overrides: overrideFlags(values) };
  if (given.length === 0 && parsed.values.size === 0 && parsed.overrides.size === 0) return undefined;
  const seen = new Set<string>();
  for (const v of given) {
    if (seen.has(v.key)) throw new UsageError(`--variant ${v.key}=… is given twice`);
    seen.add(v.key);
  }
  if (given.length === 1) throw new UsageError("give at least two --variant KEY=WEIGHT, the control first: --variant control=50 --variant green=50");
  return parsed;
}

/**
 * The variants the flags describe. `current` (update) keeps the name, value
 * and override of the keys that stay; --variant replaces the list, --value
 * and --override change the variants they name.
 */
function variantsOf(flags: VariantFlags, current: Variant[] | undefined): VariantBody[] {
  let out: VariantBody[];
  if (flags.given.length > 0) {
    out = flags.given.map((g) => {
      const before = current?.find((c) => c.key === g.key);
      return before ? { key: g.key, name: before.name, weight: g.weight, value: before.value, ...(before.override ? { override: before.override } : {}) } : { ...g };
    });
  } else if (current) {
    out = current.map((c) => ({ key: c.key, name: c.name, weight: c.weight, value: c.value, ...(c.override ? { override: c.override } : {}) }));
  } else {
    throw new UsageError("--value and --override name variants: give the variants with --variant KEY=WEIGHT (at least two, the control first)");
  }
  const keys = out.map((v) => v.key);
  for (const [flag, named] of [["value", flags.values], ["override", flags.overrides]] as const) {
    for (const key of named.keys()) {
      if (!keys.includes(key)) throw new UsageError(`--${flag} ${key}=…: no variant ${key} (the variants are ${keys.join(", ")})`);
    }
  }
  return out.map((v) => {
    const next = { ...v };
    if (flags.values.has(v.key)) next.value = flags.values.get(v.key);
    if (flags.overrides.has(v.key)) {
      const o = flags.overrides.get(v.key)!;
      if (o === null) delete next.override;
      else next.override = o;
    }
    return next;
  });
}

const DESIGN_FLAGS = {
  variant: { type: "string", value: "KEY=WEIGHT", multiple: true, help: VARIANT_HELP },
  value: { type: "string", value: "KEY=JSON", multiple: true, help: VALUE_HELP },
  override: { type: "string", value: "KEY=KIND:NAME=VALUE", multiple: true, help: OVERRIDE_HELP },
  allocation: { type: "string", value: "RANGE", help: ALLOCATION_HELP },
  gate: { type: "string", value: "GATE", help: "Only units this gate lets through (in the experiment's env) are in the experiment" },
  "primary-metric": { type: "string", value: "METRIC", help: "The metric the decision reads (name or id)" },
  guardrail: { type: "string", value: "METRIC[:DIR]", multiple: true, help: GUARDRAIL_HELP },
  env: { type: "string", value: "ENV", help: "The env whose snapshot publishes it while it runs: dev, staging or prod (default prod)" },
} satisfies Flags;

const DESCRIPTION_FLAG: Flag = { type: "string", value: "TEXT", help: "What it tests, shown in lists (an empty one clears it)" };

// ---------------------------------------------------------------------------
// Human output
// ---------------------------------------------------------------------------

const pct = (x: number, digits = 1) => `${Number((x * 100).toFixed(digits))} %`;
const signedPct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)} %`;
/** A number for people: 4 significant digits, whole numbers as they are. */
function num(x: number | null | undefined): string {
  if (x === null || x === undefined) return "-";
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(4)));
}
/** `p = 0.0021`, or `p < 0.0001`. */
const pEquals = (p: number) => (p < 0.0001 ? "p < 0.0001" : `p = ${pText(p)}`);
/** A chance as a share, never rounded to a certainty it is not. */
function chanceText(x: number): string {
  if (x > 0.999 && x < 1) return ">99.9 %";
  if (x < 0.001 && x > 0) return "<0.1 %";
  return pct(x);
}
const signedNum = (x: number) => `${x >= 0 ? "+" : "−"}${num(Math.abs(x))}`;
function pText(p: number | null | undefined): string {
  if (p === null || p === undefined) return "-";
  return p < 0.0001 ? "<0.0001" : String(Number(p.toPrecision(2)));
}

/** `control 50 %, green 50 %`. */
function splitText(variants: Pick<Variant, "key" | "weight">[]): string {
  const sum = variants.reduce((s, v) => s + v.weight, 0);
  return variants.map((v) => `${v.key} ${pct(v.weight / sum)}`).join(", ");
}

function overrideText(o: VariantOverride): string {
  return o.kind === "gate" ? `gate ${o.name} answers ${o.value}` : `config ${o.name} reads ${JSON.stringify(o.value)}`;
}

function outcomeText(e: Experiment): string {
  const o = e.outcome;
  if (!o) return "-";
  const what = o.decision === "ship" ? `shipped ${o.variant}` : "rolled back";
  return `${what} by ${o.auto ? "the guardrail check (automatic rollback)" : o.by}${o.reason ? `: ${o.reason}` : ""}`;
}

/** Metric ids as names, when the metrics can be read (else the ids stay). */
async function metricNames(client: SvcClient): Promise<Map<string, string>> {
  try {
    return new Map((await client.request<Metric[]>("GET", "/api/admin/metrics")).map((m) => [m.id, m.name]));
  } catch {
    return new Map();
  }
}

function experimentText(e: Experiment, metrics: Map<string, string>): string {
  const metric = (id: string) => (metrics.has(id) ? `${metrics.get(id)} (${id})` : id);
  const sum = e.variants.reduce((s, v) => s + v.weight, 0);
  const keyWidth = Math.max(...e.variants.map((v) => v.key.length));
  const variantLines = e.variants.map((v, i) => {
    const parts = [`    ${v.key.padEnd(keyWidth)}  ${pct(v.weight / sum).padStart(7)}  value ${JSON.stringify(v.value)}`];
    if (v.name !== v.key) parts.push(`"${v.name}"`);
    if (v.override) parts.push(overrideText(v.override));
    if (i === 0) parts.push("(control)");
    return parts.join(", ").replace(", (control)", " (control)");
  });
  const lines = [
    `${e.name} (${e.id}): ${e.status}`,
    `  description: ${e.description ?? "-"}`,
    `  universe:    ${e.universe}`,
    `  env:         ${e.env}`,
    `  allocation:  ${holdoutText(e.allocation)}`,
    `  gate:        ${e.gate ?? "- (every unit in the allocation)"}`,
    "  variants:",
    ...variantLines,
    `  primary:     ${e.primaryMetric ? metric(e.primaryMetric) : "-"}`,
    `  guardrails:  ${e.guardrailMetrics.length ? e.guardrailMetrics.map((g) => `${metric(g.metric)}, ${g.worseWhen} is harm`).join("; ") : "-"}`,
    `  started:     ${when(e.startedAt) || "-"}`,
    `  stopped:     ${when(e.stoppedAt) || "-"}`,
  ];
  if (e.outcome) lines.push(`  outcome:     ${outcomeText(e)}`);
  lines.push(`  created:     ${when(e.createdAt)}`, `  updated:     ${when(e.updatedAt)}`);
  return lines.join("\n");
}

async function shown(client: SvcClient, e: Experiment): Promise<string> {
  return experimentText(e, await metricNames(client));
}

const TESTS: Record<MetricResult["test"], string> = {
  mean: "mean per unit, Welch t-test",
  proportion: "share of units that converted, two-proportion test",
  ratio: "ratio of sums, delta method",
};

/** The per-variant value of a metric: a share for proportions. */
const armValue = (m: MetricResult, mean: number | null) => (mean === null ? "-" : m.test === "proportion" ? pct(mean, 2) : num(mean));

function liftText(t: TreatmentResult): string {
  const f = t.frequentist;
  if (f.relative) return `${signedPct(f.relative.estimate)} [${signedPct(f.relative.ci[0])}, ${signedPct(f.relative.ci[1])}]`;
  if (f.absolute) return `Δ ${signedNum(f.absolute.estimate)} [${signedNum(f.absolute.ci[0])}, ${signedNum(f.absolute.ci[1])}]`;
  return "-";
}

function verdictText(t: TreatmentResult): string {
  return t.harm ? `${t.verdict}: HARM` : t.verdict;
}

function metricSection(m: MetricResult, r: Results): string {
  const level = `${Number(((1 - r.alpha) * 100).toFixed(1))} %`;
  const role = m.role === "primary" ? "Primary metric" : `Guardrail (${m.worseWhen === "increase" ? "an increase" : "a decrease"} is harm)`;
  const first = m.treatments[0]?.frequentist.control;
  const rows: (string | number)[][] = [];
  if (first) rows.push([r.exposures.variants[0]?.variant ?? "control", first.n, armValue(m, first.mean), "(control)", "", "", "", ""]);
  for (const t of m.treatments) {
    rows.push([
      t.variant,
      t.frequentist.treatment.n,
      armValue(m, t.frequentist.treatment.mean),
      liftText(t),
      pText(t.frequentist.absolute?.pValue),
      pText(t.sequential?.pValue),
      t.bayesian ? chanceText(t.bayesian.chanceToBeatControl) : "-",
      verdictText(t),
    ]);
  }
  const lines = [
    `${role}: ${m.metric.name} (${m.metric.kind}; ${TESTS[m.test] ?? m.test})`,
    table(["VARIANT", "UNITS", m.test === "proportion" ? "CONVERTED" : m.test === "ratio" ? "RATIO" : "MEAN", `LIFT [${level} CI]`, "P-VALUE", "ALWAYS-VALID P", "CHANCE TO BEAT CONTROL", "VERDICT"], rows, {
      full: ["VARIANT", `LIFT [${level} CI]`],
    }),
  ];
  if (m.cuped) lines.push(`CUPED: variance reduced by ${m.cuped.varianceReduction.map((v) => pct(v)).join(", ")} (pre-period ${m.cuped.preDays} days before each unit's first exposure)`);
  return lines.join("\n");
}

function resultsText(r: Results): string {
  const e = r.experiment;
  if (e.startedAt === null) return `${e.name} (${e.id}) is a draft: no results until it runs (\`svc experiments start ${e.name}\`).`;
  const since = e.stoppedAt ? `ran ${when(e.startedAt)} to ${when(e.stoppedAt)}` : `running since ${when(e.startedAt)}`;
  const days = `${Number(r.sampleDays.toFixed(1))} of ${r.minSampleDays} minimum sample days`;
  const reading =
    r.method === "bayesian"
      ? `bayesian: a chance to beat control of at least ${pct(1 - r.alpha)} is an increase, at most ${pct(r.alpha)} a decrease`
      : r.minimumReached
        ? `frequentist at α = ${r.alpha}: the fixed-horizon test decides`
        : `frequentist at α = ${r.alpha}: before the minimum sample days only the always-valid sequential test decides`;
  const lines = [`${e.name} (${e.id}): ${e.status}, ${since}, ${days}`, `Verdicts read the project's method, ${reading}.`, ""];

  const srm = r.srm;
  if (srm.flagged) {
    const banner = "!".repeat(78);
    lines.push(
      banner,
      `!!! SAMPLE RATIO MISMATCH: exposures ${r.exposures.variants.map((v) => v.n).join(" / ")} do not fit the weights (expected ${srm.expected.map((x) => num(Number(x.toFixed(1)))).join(" / ")};`,
      `!!! χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)}, flagged below ${srm.threshold}). Assignment or exposure logging is broken:`,
      "!!! do not trust any result below until it is fixed.",
      banner,
      "",
    );
  }
  const total = r.exposures.total;
  lines.push(
    `Exposures: ${total} unit${total === 1 ? "" : "s"}${r.exposures.firstAt ? `, first ${when(r.exposures.firstAt)}, last ${when(r.exposures.lastAt)}` : ""}`,
    table(
      ["VARIANT", "UNITS", "SHARE", "EXPECTED"],
      r.exposures.variants.map((v) => [v.variant, v.n, total ? pct(v.n / total) : "-", pct(v.expectedShare)]),
    ),
    srm.flagged ? `Sample ratio: MISMATCH (χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)})` : `Sample ratio: ok (χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)}; flagged below ${srm.threshold})`,
  );
  if (r.metrics.length === 0) {
    lines.push("", `No metrics to analyse: give it one with \`svc experiments update ${e.name} --primary-metric METRIC\`.`);
  }
  for (const m of r.metrics) lines.push("", metricSection(m, r));
  // The mismatch is the banner above; the other warnings are listed.
  const warnings = r.warnings.filter((w) => !(srm.flagged && w.startsWith("Sample ratio mismatch")));
  if (warnings.length) lines.push("", "Warnings:", ...warnings.map((w) => `  - ${w}`));
  return lines.join("\n");
}

// ---------------------------------------------------------------------------
// The noun
// ---------------------------------------------------------------------------

export const experimentsCommand: Command = {
  name: "experiments",
  summary: "Experiments over a universe's units: list, get, create, update, delete, start, stop, results",
  details: [
    "An experiment splits the units of an allocation (a range of its universe's 10,000 segments) over its variants by weight, the first variant being the control; while it runs, its env's SDKs assign units locally and log an exposure for each. Lifecycle: draft → running (start) → stopped (stop: ship a variant or roll back).",
  ],
  examples: [
    "svc experiments create checkout-button --universe web-users --variant control=50 --variant green=50 --allocation 0-5000 --primary-metric purchases",
    "svc experiments start checkout-button",
    "svc experiments results checkout-button",
    "svc experiments stop checkout-button --ship green --reason '+4 % purchases'",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's experiments with status, universe, allocation and split",
      details: [`Statuses: ${STATUS_NAMES.map((st) => `${st} (${STATUSES[st]})`).join("; ")}.`],
      examples: ["svc experiments list", "svc experiments list --status running", "svc experiments list --query checkout --json"],
      flags: {
        query: { ...QUERY_FLAG, help: "Only experiments whose name or description contains TEXT (case-insensitive)" },
        status: { type: "string", value: "STATUS", help: `Only experiments in this state: ${STATUS_NAMES.join(", ")}` },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const q = str(values, "query");
        const status = statusFlag(str(values, "status"));
        const all = await openClient(values).request<Experiment[]>("GET", withQuery(EXPERIMENTS, { q, status }));
        emit(values.json, all, () => {
          if (all.length === 0) {
            if (q || status) return `No experiments match${q ? ` "${q}"` : ""}${status ? ` with status ${status}` : ""}.`;
            return "No experiments yet; design one with `svc experiments create <name> --universe U --variant control=50 --variant green=50 --allocation 0-5000`.";
          }
          return table(
            ["NAME", "STATUS", "UNIVERSE", "ENV", "ALLOCATION", "VARIANTS", "STARTED"],
            all.map((e) => [e.name, e.status, e.universe, e.env, holdoutText(e.allocation), splitText(e.variants), when(e.startedAt)]),
            { full: ["NAME", "UNIVERSE", "ALLOCATION", "VARIANTS"] },
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one experiment: universe, allocation, variants, metrics, lifecycle",
      args: ["<name>"],
      examples: ["svc experiments get checkout-button", "svc experiments get exp_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const e = await client.request<Experiment>("GET", base(positionals[0]!));
        if (values.json) emit(true, e, () => "");
        else console.log(await shown(client, e));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Design an experiment (a draft: `start` publishes it)",
      args: ["<name>"],
      details: [
        `--variant: ${VARIANT_HELP}; 2 to 10 variants.`,
        `--value: ${VALUE_HELP}.`,
        `--override: ${OVERRIDE_HELP}: what the variant changes for its units besides its own value.`,
        `--allocation: ${ALLOCATION_HELP}. Running experiments of a universe may not overlap.`,
        `--guardrail: ${GUARDRAIL_HELP}; repeat it for several.`,
      ],
      examples: [
        "svc experiments create checkout-button --universe web-users --variant control=50 --variant green=50 --allocation 0-5000",
        "svc experiments create checkout-button --universe web-users --variant control=50 --variant green=50 --value control='\"blue\"' --value green='\"green\"' --allocation 0-2000 --primary-metric purchases --guardrail errors:increase --gate signed-in",
        "svc experiments create new-pricing --universe accounts --variant control=1 --variant cheaper=1 --override cheaper=config:pricing='{\"discount\":10}' --allocation 0-1000 --env staging --json",
      ],
      flags: {
        universe: { type: "string", value: "UNIVERSE", help: "The universe whose units it splits (name or id; required)" },
        ...DESIGN_FLAGS,
        description: DESCRIPTION_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const universe = str(values, "universe");
        if (!universe) throw new UsageError("--universe UNIVERSE is required: the universe whose units it splits (`svc universes list` shows them)");
        const flags = variantFlags(values);
        if (!flags || flags.given.length === 0) throw new UsageError("give at least two --variant KEY=WEIGHT, the control first: --variant control=50 --variant green=50");
        const variants = variantsOf(flags, undefined);
        const allocation = str(values, "allocation");
        if (allocation === undefined) throw new UsageError(`--allocation RANGE is required: ${ALLOCATION_HELP}`);
        const body: Record<string, unknown> = { name: positionals[0]!, universe, variants, allocation: allocationFlag(allocation) };
        const env = envFlag(values.env);
        if (env) body.env = env;
        const gate = str(values, "gate");
        if (gate !== undefined) body.gate = gate;
        const primary = str(values, "primary-metric");
        if (primary !== undefined) body.primaryMetric = primary;
        const guardrails = list(values, "guardrail").map(guardrailFlag);
        if (guardrails.length) body.guardrailMetrics = guardrails;
        const description = str(values, "description");
        if (description) body.description = description;
        const client = openClient(values);
        const e = await client.request<Experiment>("POST", EXPERIMENTS, { body });
        emit(
          values.json,
          e,
          () => `Created experiment ${e.name} (${e.id}), a draft in universe ${e.universe}: ${holdoutText(e.allocation)} split ${splitText(e.variants)}.\nStart it with \`svc experiments start ${e.name}\`.`,
        );
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change an experiment (a draft: anything; running: name, description, metrics; stopped: name, description)",
      args: ["<name>"],
      details: [
        "Only the flags given change. --variant replaces the list of variants (keys that stay keep their name, value and override); --value and --override change the variants they name. --guardrail replaces the guardrails. A running experiment's split, universe, env, variants, allocation and gate are fixed (its units would change variant mid-test): the server says which field it refused.",
      ],
      examples: [
        "svc experiments update checkout-button --allocation 0-2000",
        "svc experiments update checkout-button --value green='\"lime\"'",
        "svc experiments update checkout-button --primary-metric revenue --guardrail errors:increase --json",
        "svc experiments update checkout-button --rename checkout-colour --clear-gate",
      ],
      flags: {
        universe: { type: "string", value: "UNIVERSE", help: "Move the draft to another universe (name or id)" },
        ...DESIGN_FLAGS,
        "clear-gate": { type: "boolean", help: "No targeting gate: every unit in the allocation" },
        "clear-primary-metric": { type: "boolean", help: "Remove the primary metric (results then show guardrails only)" },
        "clear-guardrails": { type: "boolean", help: "Remove every guardrail metric (auto-rollback then has nothing to watch)" },
        description: DESCRIPTION_FLAG,
        rename: { type: "string", value: "NAME", help: "A new name (SDKs read a running experiment by name: they follow at their next snapshot)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        for (const [flag, clear] of [["gate", "clear-gate"], ["primary-metric", "clear-primary-metric"], ["guardrail", "clear-guardrails"]] as const) {
          const given = Array.isArray(values[flag]) ? (values[flag] as string[]).length > 0 : values[flag] !== undefined;
          if (given && values[clear]) throw new UsageError(`--${flag} and --${clear} cannot both be given`);
        }
        const body: Record<string, unknown> = {};
        const client = openClient(values);
        const flags = variantFlags(values);
        // The variants are sent whole: the ones the flags do not change as they are now.
        if (flags) body.variants = variantsOf(flags, (await client.request<Experiment>("GET", base(name))).variants);
        const rename = str(values, "rename");
        if (rename !== undefined) body.name = rename;
        const description = str(values, "description");
        if (description !== undefined) body.description = description === "" ? null : description;
        const universe = str(values, "universe");
        if (universe !== undefined) body.universe = universe;
        const env = envFlag(values.env);
        if (env) body.env = env;
        const allocation = str(values, "allocation");
        if (allocation !== undefined) body.allocation = allocationFlag(allocation);
        const gate = str(values, "gate");
        if (gate !== undefined) body.gate = gate;
        if (values["clear-gate"]) body.gate = null;
        const primary = str(values, "primary-metric");
        if (primary !== undefined) body.primaryMetric = primary;
        if (values["clear-primary-metric"]) body.primaryMetric = null;
        const guardrails = list(values, "guardrail").map(guardrailFlag);
        if (guardrails.length) body.guardrailMetrics = guardrails;
        if (values["clear-guardrails"]) body.guardrailMetrics = [];
        if (Object.keys(body).length === 0) {
          throw new UsageError(
            "nothing to change: give at least one of --variant, --value, --override, --allocation, --universe, --env, --gate, --clear-gate, --primary-metric, --clear-primary-metric, --guardrail, --clear-guardrails, --description, --rename",
          );
        }
        const e = await client.request<Experiment>("PATCH", base(name), { body });
        if (values.json) emit(true, e, () => "");
        else console.log(`Updated experiment ${e.name}:\n${(await shown(client, e)).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    {
      name: "delete",
      summary: "Delete a draft or stopped experiment (a running one: stop it first)",
      args: ["<name>"],
      examples: ["svc experiments delete old-test", "svc experiments delete old-test --yes --json"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const client = openClient(values);
        await confirmChange(values, client, `Delete experiment ${name}? Its design and outcome go; stored exposure events stay.`);
        await client.request("DELETE", base(name));
        emit(values.json, { name, deleted: true }, () => `Deleted experiment ${name}.`);
        return 0;
      },
    },
    {
      name: "start",
      summary: "Start a draft: its env's SDKs assign units to its variants from their next snapshot",
      args: ["<name>"],
      details: ["Refused when the allocation overlaps the universe's holdout or a running experiment of the universe, or when its gate or an override target no longer exists. A started experiment's split is fixed."],
      examples: ["svc experiments start checkout-button", "svc experiments start checkout-button --yes --json"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const current = await client.request<Experiment>("GET", base(positionals[0]!));
        await confirmChange(
          values,
          client,
          `Start experiment ${current.name} on ${current.env}? Units in ${holdoutText(current.allocation)} of universe ${current.universe}${current.gate ? ` that gate ${current.gate} lets through` : ""} get ${splitText(current.variants)}; the split is fixed once it runs.`,
        );
        const e = await client.request<Experiment>("POST", `${base(current.id)}/start`);
        emit(values.json, e, () => `Started experiment ${e.name} on ${e.env}: ${holdoutText(e.allocation)} of universe ${e.universe}, split ${splitText(e.variants)}.\nRead its results with \`svc experiments results ${e.name}\`.`);
        return 0;
      },
    },
    {
      name: "stop",
      summary: "Stop a running experiment: --ship the winning variant, or --rollback",
      args: ["<name>"],
      details: [
        "It leaves the snapshot: every unit reads the default again. --ship records the winner (then make its value the default where it lives: its config or gate); --rollback keeps what was there before. The decision, the reason and who stopped it are kept and audited.",
      ],
      examples: ["svc experiments stop checkout-button --ship green --reason '+4.1 % purchases, p = 0.003'", "svc experiments stop checkout-button --rollback --reason 'errors up' --yes --json"],
      flags: {
        ship: { type: "string", value: "VARIANT", help: "The variant that won (its key)" },
        rollback: { type: "boolean", help: "No variant won: keep what was there before" },
        reason: { type: "string", value: "TEXT", help: "Why, kept with the outcome" },
        yes: YES_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const ship = str(values, "ship");
        if ((ship === undefined) === !values.rollback) throw new UsageError("give exactly one of --ship VARIANT (a variant won) or --rollback (none did)");
        const body: Record<string, unknown> = ship !== undefined ? { decision: "ship", variant: ship } : { decision: "rollback" };
        const reason = str(values, "reason");
        if (reason) body.reason = reason;
        const client = openClient(values);
        const current = await client.request<Experiment>("GET", base(positionals[0]!));
        if (ship !== undefined && current.variants.length && !current.variants.some((v) => v.key === ship)) {
          throw new UsageError(`--ship ${ship}: no such variant in ${current.name} (its variants are ${current.variants.map((v) => v.key).join(", ")})`);
        }
        await confirmChange(
          values,
          client,
          `Stop experiment ${current.name} on ${current.env} and ${ship !== undefined ? `ship ${ship}` : "roll back"}? It leaves the snapshot: every unit reads the default again.`,
        );
        const e = await client.request<Experiment>("POST", `${base(current.id)}/stop`, { body });
        emit(values.json, e, () => {
          const next =
            ship !== undefined
              ? `Every unit reads the default again: make ${ship}'s value the default where it lives${e.variants.find((v) => v.key === ship)?.override ? ` (${overrideText(e.variants.find((v) => v.key === ship)!.override!)})` : ""} to keep it.`
              : "Every unit reads the default again.";
          return `Stopped experiment ${e.name}: ${outcomeText(e)}.\n${next}`;
        });
        return 0;
      },
    },
    {
      name: "results",
      summary: "The analysis: exposures per variant with the sample-ratio check, then per metric and treatment the lift, p-values, chance to beat control and verdict",
      args: ["<name>"],
      details: [
        "Read with the project's analysis settings (method, significance threshold, minimum sample days). LIFT is (treatment − control) / |control| with its confidence interval, so a higher treatment is a positive lift even when the control's mean is negative (Δ: the absolute difference, when the control is 0); a test that cannot be computed (an arm without variation, e.g. no conversions, or values beyond double precision) shows - and a warning says why; P-VALUE is the fixed-horizon test, ALWAYS-VALID P the sequential one (safe to read at every look); a guardrail's verdict says HARM when it moved the harmful way. A SAMPLE RATIO MISMATCH means assignment or exposure logging is broken: no result can be trusted until it is fixed.",
      ],
      examples: ["svc experiments results checkout-button", "svc experiments results checkout-button --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const r = await openClient(values).request<Results>("GET", `${base(positionals[0]!)}/results`);
        emit(values.json, r, () => resultsText(r));
        return 0;
      },
    },
  ],
};
