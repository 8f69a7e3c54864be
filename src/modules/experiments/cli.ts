import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { CreateExperimentBody, ExperimentSchema, StopBody, UpdateExperimentBody } from "./contract";
import type { experimentRoutes } from "./routes";
import type { metricRoutes } from "../metrics/routes";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, YES_FLAG, confirmChange, emit, envFlag, list, openClient, str, table, when, deleteCommand } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { holdoutText } from "../universes/cli";
import {
  ALLOCATION_HELP,
  DESCRIPTION_FLAG,
  DESIGN_FLAGS,
  GUARDRAIL_HELP,
  OVERRIDE_HELP,
  STATUSES,
  STATUS_NAMES,
  VALUE_HELP,
  VARIANT_HELP,
  allocationFlag,
  guardrailFlag,
  statusFlag,
  variantFlags,
  variantsOf,
} from "./cli-flags";
import { pct, resultsText } from "./cli-results";

type Experiment = Static<typeof ExperimentSchema>;
type Variant = Experiment["variants"][number];
type Override = NonNullable<Variant["override"]>;

/** The experiment routes, typed from their own schemas. */
const experiments = (client: SvcClient) => client.api<ReturnType<typeof experimentRoutes>>().api.admin.experiments;

// ---------------------------------------------------------------------------
// Human output (the results' tables are in cli-results.ts)
// ---------------------------------------------------------------------------

/** `control 50 %, green 50 %`. */
function splitText(variants: Pick<Variant, "key" | "weight">[]): string {
  const sum = variants.reduce((s, v) => s + v.weight, 0);
  return variants.map((v) => `${v.key} ${pct(v.weight / sum)}`).join(", ");
}

function overrideText(o: Override): string {
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
    const metrics = await dataOf(client.api<ReturnType<typeof metricRoutes>>().api.admin.metrics.get());
    return new Map(metrics.map((m) => [m.id, m.name]));
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
        const all = await dataOf(experiments(openClient(values)).get({ query: { q: q || undefined, status } }));
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
        const e = await dataOf(experiments(client)({ id: seg(positionals[0]!) }).get());
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
        const body: Static<typeof CreateExperimentBody> = { name: positionals[0]!, universe, variants, allocation: allocationFlag(allocation) };
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
        const e = await dataOf(experiments(client).post(body));
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
        const body: Static<typeof UpdateExperimentBody> = {};
        const client = openClient(values);
        const flags = variantFlags(values);
        // The variants are sent whole: the ones the flags do not change as they are now.
        if (flags) body.variants = variantsOf(flags, (await dataOf(experiments(client)({ id: seg(name) }).get())).variants);
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
        const e = await dataOf(experiments(client)({ id: seg(name) }).patch(body));
        if (values.json) emit(true, e, () => "");
        else console.log(`Updated experiment ${e.name}:\n${(await shown(client, e)).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a draft or stopped experiment (a running one: stop it first)",
      examples: ["svc experiments delete old-test", "svc experiments delete old-test --yes --json"],
      question: (name) => `Delete experiment ${name}? Its design and outcome go; stored exposure events stay.`,
      remove: async (client, name) => await dataOf(experiments(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted experiment ${name}.`],
    }),
    {
      name: "start",
      summary: "Start a draft: its env's SDKs assign units to its variants from their next snapshot",
      args: ["<name>"],
      details: ["Refused when the allocation overlaps the universe's holdout or a running experiment of the universe, or when its gate or an override target no longer exists. A started experiment's split is fixed."],
      examples: ["svc experiments start checkout-button", "svc experiments start checkout-button --yes --json"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const current = await dataOf(experiments(client)({ id: seg(positionals[0]!) }).get());
        await confirmChange(
          values,
          client,
          `Start experiment ${current.name} on ${current.env}? Units in ${holdoutText(current.allocation)} of universe ${current.universe}${current.gate ? ` that gate ${current.gate} lets through` : ""} get ${splitText(current.variants)}; the split is fixed once it runs.`,
        );
        const e = await dataOf(experiments(client)({ id: seg(current.id) }).start.post());
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
        const body: Static<typeof StopBody> = ship !== undefined ? { decision: "ship", variant: ship } : { decision: "rollback" };
        const reason = str(values, "reason");
        if (reason) body.reason = reason;
        const client = openClient(values);
        const current = await dataOf(experiments(client)({ id: seg(positionals[0]!) }).get());
        if (ship !== undefined && current.variants.length && !current.variants.some((v) => v.key === ship)) {
          throw new UsageError(`--ship ${ship}: no such variant in ${current.name} (its variants are ${current.variants.map((v) => v.key).join(", ")})`);
        }
        await confirmChange(
          values,
          client,
          `Stop experiment ${current.name} on ${current.env} and ${ship !== undefined ? `ship ${ship}` : "roll back"}? It leaves the snapshot: every unit reads the default again.`,
        );
        const e = await dataOf(experiments(client)({ id: seg(current.id) }).stop.post(body));
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
        const r = await dataOf(experiments(openClient(values))({ id: seg(positionals[0]!) }).results.get());
        emit(values.json, r, () => resultsText(r));
        return 0;
      },
    },
  ],
};
