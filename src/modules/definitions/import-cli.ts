import { writeFileSync } from "node:fs";
import { CliError } from "../../cli/errors";
import { UsageError } from "../../lib/config";
import { ENVS, type Env } from "../../lib/envs";
import { type SvcClient, dataOf } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, envFlag, oneOf, openClient, str } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";
import { appliedText, planOf, planText, readDocument } from "./cli";
import { IMPORTERS, type ImportResult, type Rebucketed, TOOLS, TOOL_NAMES, type Tool } from "./importers";
import type { definitionsRoutes } from "./routes";

// `svc import <tool> FILE` (issue 31): another tool's export mapped by a pure importer (./importers), what it
// left out printed on stderr, then either a file for `svc plan` / `svc apply`, or the server's dry-run plan
// (and with --apply the apply itself). Nothing here maps: the importers do, so the mapping is tested alone.

const admin = (client: SvcClient) => client.api<ReturnType<typeof definitionsRoutes>>().api.admin;

function envMap(text: string | undefined): Record<string, Env> | undefined {
  if (!text) return undefined;
  const out: Record<string, Env> = {};
  for (const pair of text.split(",")) {
    const [from, to] = pair.split("=").map((s) => s.trim());
    if (!from || !to) throw new UsageError(`--env-map takes source=env pairs, comma-separated, e.g. qa=staging,live=prod (got "${pair}")`);
    out[from] = oneOf(to, ENVS, `--env-map ${from}`);
  }
  return out;
}

/** The rollouts whose units land in other buckets, as the plan shows them. */
export function rebucketText(tool: string, rebucketed: Rebucketed[]): string {
  if (rebucketed.length === 0) return "";
  const lines = [`Re-bucketed: these percentages keep their size, but svc hashes units differently from ${tool}, so a different set of units gets them (--keep-exact keeps only 0% and 100% rules):`];
  for (const r of rebucketed) lines.push(`    ${r.flag} (${r.env}): ${r.split ? `split ${r.split.join("/")}` : `${r.percentage}%`}`);
  return lines.join("\n");
}

function unmappedText(result: ImportResult): string {
  return result.unmapped.map((u) => `not mapped: ${u.source} (${u.construct}): ${u.reason}`).join("\n");
}

function counts(result: ImportResult): string {
  const d = result.document;
  return (["segments", "gates", "configs"] as const).map((s) => `${d[s]?.length ?? 0} ${s}`).join(", ");
}

async function run(values: ArgValues, tool: Tool, file: string): Promise<number> {
  const raw = readDocument(file);
  const result = IMPORTERS[tool](raw, { envMap: envMap(str(values, "env-map")), env: envFlag(values.env), keepExact: values["keep-exact"] === true });
  const name = TOOL_NAMES[tool];
  if (result.unmapped.length && !values.json) process.stderr.write(`${unmappedText(result)}\n\n`);
  if (Object.keys(result.document).length === 1) throw new CliError(`nothing in ${file} maps onto svc: is it ${name}'s export?`, "FILE", result.unmapped.map((u) => u.reason).join("; ") || undefined);
  const out = str(values, "out");
  if (out) {
    const text = out.endsWith(".json") ? `${JSON.stringify(result.document, null, 2)}\n` : `# Imported from ${name} by svc import: svc plan FILE shows what svc apply FILE would change.\n${Bun.YAML.stringify(result.document, null, 2)}`;
    writeFileSync(out, text);
    if (values.json) console.log(JSON.stringify({ file: out, ...result }, null, 2));
    else {
      const rb = rebucketText(name, result.rebucketed);
      console.log(`Wrote ${out}: ${counts(result)}; ${result.unmapped.length} not mapped.${rb ? `\n${rb}` : ""}\nNext: svc plan ${out}`);
    }
    return 0;
  }
  const client = openClient(values);
  const apply = admin(client).apply;
  const plan = planOf(await dataOf(apply.post(result.document as never, { query: { dryRun: "true" } })));
  const shown = () => [planText(plan), rebucketText(name, result.rebucketed), result.unmapped.length ? `${result.unmapped.length} part(s) of the export not mapped (listed above).` : ""].filter(Boolean).join("\n\n");
  if (!values.apply || plan.changes.length === 0) {
    if (values.json) console.log(JSON.stringify({ plan, ...result }, null, 2));
    else console.log(shown());
    return 0;
  }
  if (!values.json) process.stderr.write(`${shown()}\n\n`);
  await confirmChange(values, client, "Apply these changes?");
  const applied = await dataOf(apply.post(result.document as never, { query: {} }));
  if (values.json) console.log(JSON.stringify({ plan: applied, ...result }, null, 2));
  else console.log(appliedText(applied));
  return 0;
}

export const importCommand: Command = {
  name: "import",
  summary: "Move in from Unleash, GrowthBook, LaunchDarkly or Flagsmith: their export mapped onto gates, configs and segments",
  args: ["<tool>", "<file>"],
  details: [
    `<tool> is one of ${TOOLS.join(", ")}. Reads the tool's export (Unleash's feature export, GrowthBook's features payload or API export, LaunchDarkly's flags list with segments, Flagsmith's environment document), maps it onto a definitions document, and prints on stderr every part it could not map and why.`,
    "With --out it writes the document (then `svc plan FILE` and `svc apply FILE`); without, it shows the server's plan, and --apply makes those changes. Percentage rollouts keep their size but re-bucket their units (svc hashes them differently): the plan lists them, and --keep-exact keeps only 0 % and 100 % rules.",
  ],
  examples: ["svc import unleash export.json --out svc.yaml", "svc import launchdarkly flags.json --env-map test=staging", "svc import growthbook features.json --env prod --apply --yes", "svc import flagsmith environment.json --keep-exact --json"],
  flags: {
    out: { type: "string", value: "FILE", help: "Write the document to FILE (YAML; JSON when it ends in .json) instead of planning on the server" },
    "env-map": { type: "string", value: "PAIRS", help: "Source environments to svc envs, e.g. qa=staging,live=prod (development, staging and production map by name)" },
    env: { type: "string", value: "ENV", help: "The svc env an export of one environment goes to (GrowthBook payload, Flagsmith document; default prod)" },
    "keep-exact": { type: "boolean", help: "Keep only 0% and 100% rules; partial percentages and splits are listed as not mapped" },
    apply: { type: "boolean", help: "Apply the plan (asks first in a terminal)" },
    yes: YES_FLAG,
    ...CLIENT_FLAGS,
  },
  async run({ values, positionals }) {
    const tool = oneOf(positionals[0], TOOLS, "<tool>");
    const file = positionals[1];
    if (!file) throw new UsageError("svc import <tool> <file>: the export file is required");
    if (values.out !== undefined && values.apply) throw new UsageError("--out writes a file for svc plan / svc apply; --apply applies on the server: choose one");
    return run(values, tool, file);
  },
};
