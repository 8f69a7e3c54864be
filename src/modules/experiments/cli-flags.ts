import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { CreateExperimentBody, ExperimentSchema } from "./contract";
import type { Guardrail } from "./checks";
import type { ExperimentStatus } from "./types";
import type { SegmentRange } from "../universes/service";
import type { VariantOverride } from "../../sdk/experiments";
import { jsonFlag, list } from "../../cli/client-command";
import type { ArgValues, Flag, Flags } from "../../cli/command";
import { parseSegmentRange } from "../universes/cli";

// The flags of `svc experiments` that design an experiment (create, update) or filter the list, parsed into
// the bodies and queries the routes type: a mistake is a usage error before anything is sent.

/** Every status with what it means (a Record, so a status the server adds is a compile error here). */
export const STATUSES: Record<ExperimentStatus, string> = {
  draft: "designed, not published: everything can change",
  running: "published in its env's snapshot: SDKs assign units and log exposures",
  stopped: "finished, a variant shipped or rolled back: kept as a record",
};
export const STATUS_NAMES = Object.keys(STATUSES) as ExperimentStatus[];
const WORSE_WHEN = ["increase", "decrease"] as const;
const VARIANT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

export const ALLOCATION_HELP = "START-END in the universe's segments 0 to 10000, end excluded: 0-5000 takes segments 0 to 4999, 50 % of its units (not over its holdout)";
export const VARIANT_HELP = "KEY=WEIGHT, once per variant, the control first: --variant control=50 --variant green=50 (weights are relative)";
export const VALUE_HELP = "KEY=JSON: the value the SDK hands back for that variant (default null), e.g. green='\"green\"' or green=@value.json";
export const OVERRIDE_HELP = "KEY=config:NAME=JSON (the config reads JSON for the variant's units), KEY=gate:NAME=true|false, or KEY=none to remove one";
export const GUARDRAIL_HELP = "METRIC[:increase|decrease]: a metric that must not get worse; the suffix is the harmful move (default decrease)";

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
export function guardrailFlag(text: string): Guardrail {
  const at = text.lastIndexOf(":");
  const suffix = at > 0 ? text.slice(at + 1) : "";
  if ((WORSE_WHEN as readonly string[]).includes(suffix)) return { metric: text.slice(0, at), worseWhen: suffix as Guardrail["worseWhen"] };
  if (text === "" || /:(increase|decrease)?$/i.test(text)) throw new UsageError(`--guardrail must be METRIC[:increase|decrease], e.g. --guardrail errors:increase (got "${text}")`);
  return { metric: text, worseWhen: "decrease" };
}

export function statusFlag(value: string | undefined): ExperimentStatus | undefined {
  if (value === undefined) return undefined;
  if (!STATUS_NAMES.includes(value as ExperimentStatus)) throw new UsageError(`--status must be one of ${STATUS_NAMES.join(", ")} (got "${value}")`);
  return value as ExperimentStatus;
}

/** A variant as create and update send it. */
type VariantBody = Static<typeof CreateExperimentBody>["variants"][number];
/** A variant as the API answers it. */
type Variant = Static<typeof ExperimentSchema>["variants"][number];

type VariantFlags = { given: { key: string; weight: number }[]; values: Map<string, unknown>; overrides: Map<string, VariantOverride | null> };

/** --variant, --value and --override parsed (a mistake is a usage error before anything is sent or read); undefined when none is given. */
export function variantFlags(values: ArgValues): VariantFlags | undefined {
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
export function variantsOf(flags: VariantFlags, current: Variant[] | undefined): VariantBody[] {
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

export const DESIGN_FLAGS = {
  variant: { type: "string", value: "KEY=WEIGHT", multiple: true, help: VARIANT_HELP },
  value: { type: "string", value: "KEY=JSON", multiple: true, help: VALUE_HELP },
  override: { type: "string", value: "KEY=KIND:NAME=VALUE", multiple: true, help: OVERRIDE_HELP },
  allocation: { type: "string", value: "RANGE", help: ALLOCATION_HELP },
  gate: { type: "string", value: "GATE", help: "Only units this gate lets through (in the experiment's env) are in the experiment" },
  "primary-metric": { type: "string", value: "METRIC", help: "The metric the decision reads (name or id)" },
  guardrail: { type: "string", value: "METRIC[:DIR]", multiple: true, help: GUARDRAIL_HELP },
  env: { type: "string", value: "ENV", help: "The env whose snapshot publishes it while it runs: dev, staging or prod (default prod)" },
} satisfies Flags;

export const DESCRIPTION_FLAG: Flag = { type: "string", value: "TEXT", help: "What it tests, shown in lists (an empty one clears it)" };
