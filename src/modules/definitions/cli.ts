import { readFileSync, writeFileSync } from "node:fs";
import { CliError } from "../../cli/errors";
import type { Static } from "elysia";
import { type SvcClient, dataOf } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, str } from "../../cli/client-command";
import type { ArgValues, Command, Flag } from "../../cli/command";
import type { ApplyProposedSchema, ApplyResultSchema } from "./contract";
import type { definitionsRoutes } from "./routes";
import { SECTIONS, exportYaml } from "./types";

type ApplyResult = Static<typeof ApplyResultSchema>;
/** What the apply route answers: the result (200), or the change request it opened instead (202). */
export type ApplyAnswer = ApplyResult | Static<typeof ApplyProposedSchema>;

/** The plan in an answer: a dry run's (which never opens a request), or the plan of the request opened. */
export const planOf = (answer: ApplyAnswer): ApplyResult => ("request" in answer ? { ...answer.plan, applied: false, approvalRequired: true } : answer);

/** After a real apply: what was applied, or the change request opened instead (an env requires approval). */
export function appliedText(answer: ApplyAnswer): string {
  if (!("request" in answer)) return `Applied: ${answer.summary.create} created, ${answer.summary.update} changed, ${answer.summary.delete} deleted.`;
  const r = answer.request;
  const n = r.approvalsRequired;
  return [
    `Opened change request ${r.id} (needs ${n} approval${n === 1 ? "" : "s"}): ${r.title}`,
    `Nothing is published until another person approves it (svc requests approve ${r.id}) and it is applied (svc requests apply ${r.id}).`,
  ].join("\n");
}

/** The definitions routes, typed from their own schemas. */
const admin = (client: SvcClient) => client.api<ReturnType<typeof definitionsRoutes>>().api.admin;

const ENV_FLAG: Flag = { type: "string", value: "ENVS", help: "Only these envs, comma-separated (dev,staging,prod; default all three)" };
const PRUNE_FLAG: Flag = { type: "boolean", help: "Also delete what a section of the file lists no longer (sections the file leaves out are kept)" };

/**
 * A document from a file: YAML (`.yaml`, `.yml`, or anything not starting with `{`) or JSON. A file that
 * cannot be read is exit 1, not usage's 2: `svc plan` keeps 2 for "there are changes".
 */
export function readDocument(file: string): unknown {
  let text: string;
  try {
    text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, "FILE");
  }
  try {
    return text.trimStart().startsWith("{") ? JSON.parse(text) : Bun.YAML.parse(text);
  } catch (err) {
    throw new CliError(`${file} is neither YAML nor JSON: ${(err as Error).message.split("\n")[0]}`, "FILE");
  }
}

const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? "null";
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** The plan as people read it: `+ create`, `~ update` with one line per field, `- delete`. */
export function planText(result: ApplyResult): string {
  if (result.changes.length === 0) return "No changes: the project already matches the file.";
  const lines: string[] = [];
  for (const c of result.changes) {
    const mark = c.action === "create" ? "+" : c.action === "delete" ? "-" : "~";
    lines.push(`${mark} ${c.section} ${c.name}`);
    if (c.action === "update") for (const f of c.changes) lines.push(`    ${f.field}: ${show(f.before)} -> ${show(f.after)}`);
  }
  const { create, update, delete: del } = result.summary;
  lines.push("", `Plan: ${create} to create, ${update} to change, ${del} to delete.`);
  if (result.approvalRequired) lines.push("An env this plan publishes on requires approval: svc apply opens a change request instead of publishing.");
  return lines.join("\n");
}

async function run(values: ArgValues, file: string, dryRun: boolean) {
  const doc = readDocument(file);
  const client = openClient(values);
  const query = { dryRun: dryRun ? "true" : undefined, prune: values.prune ? "true" : undefined, env: str(values, "env") };
  return { client, doc, result: planOf(await dataOf(admin(client).apply.post(doc as never, { query }))) };
}

export const exportCommand: Command = {
  name: "export",
  summary: "Write the project's definitions as one YAML (or JSON) document: flags as code",
  details: [
    "Attributes, events, segments, gate templates, killswitches, gates, configs (schema, per-env value and rules), universes, metrics, alert rules and experiments, sorted by name, references by name, no ids or secrets. Commit it, review changes as diffs, and bring them back with `svc plan` and `svc apply`.",
  ],
  examples: ["svc export > svc.yaml", "svc export --env prod --only gates,configs --out prod.yaml", "svc export --json"],
  flags: {
    env: ENV_FLAG,
    only: { type: "string", value: "SECTIONS", help: `Only these sections, comma-separated: ${SECTIONS.join(", ")}` },
    out: { type: "string", value: "FILE", help: "Write to FILE instead of stdout" },
    ...CLIENT_FLAGS,
  },
  async run({ values }) {
    const doc = await dataOf(admin(openClient(values)).export.get({ query: { env: str(values, "env"), only: str(values, "only") } }));
    const text = values.json ? `${JSON.stringify(doc, null, 2)}\n` : exportYaml(doc);
    const out = str(values, "out");
    if (out) writeFileSync(out, text);
    else process.stdout.write(text);
    return 0;
  },
};

export const planCommand: Command = {
  name: "plan",
  summary: "Show what `svc apply FILE` would change; exit 0: nothing, 2: changes, 1: error (for CI)",
  args: ["<file>"],
  details: ["Every change is checked as apply would check it (the server runs the apply and rolls it back), so a plan that passes applies."],
  examples: ["svc plan svc.yaml", "svc plan svc.yaml --prune --json"],
  flags: { env: ENV_FLAG, prune: PRUNE_FLAG, ...CLIENT_FLAGS },
  async run({ values, positionals }) {
    const { result } = await run(values, positionals[0]!, true);
    emit(values.json, result, () => planText(result));
    return result.changes.length === 0 ? 0 : 2;
  },
};

export const applyCommand: Command = {
  name: "apply",
  summary: "Make the project match a definitions file: one transaction, all or nothing",
  args: ["<file>"],
  details: [
    "Creates, changes and (with --prune) deletes through the same checks, versions and audit rows as every other change, in dependency order; the first refusal changes nothing. Applying the same file twice changes nothing. In a terminal it shows the plan and asks first.",
    "When an env the plan publishes on requires approval (svc requests), nothing is published: it opens one change request holding the whole file, for another person to approve and apply.",
  ],
  examples: ["svc apply svc.yaml", "svc apply svc.yaml --prune --yes", "svc apply svc.yaml --yes --title 'Raise prod limits' --reason 'Holiday traffic'"],
  flags: {
    env: ENV_FLAG,
    prune: PRUNE_FLAG,
    yes: YES_FLAG,
    title: { type: "string", value: "TEXT", help: "The change request's title, when an env requires approval (default: svc apply: <counts>)" },
    reason: { type: "string", value: "TEXT", help: "Why, for the change request's approvers" },
    ...CLIENT_FLAGS,
  },
  async run({ values, positionals }) {
    const file = positionals[0]!;
    const planned = await run(values, file, true);
    if (planned.result.changes.length === 0) {
      emit(values.json, planned.result, () => planText(planned.result));
      return 0;
    }
    if (!values.json) process.stderr.write(`${planText(planned.result)}\n\n`);
    // Asks in a terminal (a "no" throws: exit 1, nothing changed); --yes, scripts and CI go ahead.
    await confirmChange(values, planned.client, "Apply these changes?");
    const query = { prune: values.prune ? "true" : undefined, env: str(values, "env"), title: str(values, "title"), reason: str(values, "reason") };
    const result = await dataOf(admin(planned.client).apply.post(planned.doc as never, { query }));
    emit(values.json, result, () => appliedText(result));
    return 0;
  },
};
