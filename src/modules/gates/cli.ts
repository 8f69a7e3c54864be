// One file: the `svc gates` noun and the text of gates (rules, conditions, explanations) that it prints and rollouts/cli.ts reuses.
import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { ConditionSchema, CreateGateBody, CreateTemplateBody, ExplanationSchema, GateSchema, RuleSchema } from "./contract";
import type { gateRoutes } from "./routes";
import { ENVS, type Env, type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, YES_FLAG, confirmChange, emit, envFlag, intFlag, jsonFlag, openClient, requiredEnv, str, table, when, deleteCommand } from "../../cli/client-command";
import type { Command, Flag } from "../../cli/command";

type Rule = Static<typeof RuleSchema>;
type Condition = Static<typeof ConditionSchema>;
type Explanation = Static<typeof ExplanationSchema>;

/** The gate routes, typed from their own schemas. */
const gates = (client: SvcClient) => client.api<ReturnType<typeof gateRoutes>>().api.admin.gates;

const RULES_FLAG: Flag = {
  type: "string",
  value: "JSON",
  help: 'Rules as a JSON list, or @FILE: [{"name":"staff","conditions":[{"attr":"email","op":"ends_with","value":"@acme.com"}],"passPercentage":100}]',
};

/** Entries of a list condition shown before "… N more". */
const LIST_SHOWN = 20;

function valueText(value: unknown): string {
  if (Array.isArray(value)) {
    const shown = value.slice(0, LIST_SHOWN).map(valueText);
    if (value.length > LIST_SHOWN) shown.push(`… ${value.length - LIST_SHOWN} more`);
    return `[${shown.join(", ")}]`;
  }
  return JSON.stringify(value) ?? String(value);
}

/** `email ends_with "@acme.com"`, `country in ["de", "at"]`, `beta_opt_in exists`. */
export function conditionText(c: Pick<Condition, "attr" | "op" | "value">): string {
  return c.op === "exists" || c.op === "not_exists" || c.value === undefined ? `${c.attr} ${c.op}` : `${c.attr} ${c.op} ${valueText(c.value)}`;
}

const percent = (n: number) => `${n}%`;

/** Who a rule lets through: `email ends_with "@acme.com" → 100%`; no conditions reads "everyone". */
function ruleWhat(rule: Rule): string {
  const who = rule.conditions.length ? rule.conditions.map(conditionText).join(" and ") : "everyone";
  const split = rule.passPercentage > 0 && rule.passPercentage < 100;
  const unit = split && rule.unit && rule.unit !== "user_id" ? ` by ${rule.unit}` : "";
  return `${who} → ${percent(rule.passPercentage)}${unit}`;
}

/** The rule without its number: `staff: email ends_with "@acme.com" → 100%`. */
export function ruleBody(rule: Rule): string {
  return `${rule.name ? `${rule.name}: ` : ""}${ruleWhat(rule)}`;
}

/** One line per rule, numbered from 1 as explanations name them; no rules says what that means. */
export function rulesLines(rules: Rule[], indent = "  "): string[] {
  if (rules.length === 0) return [`${indent}no rules: off for everyone`];
  return rules.map((r, i) => `${indent}${i + 1}. ${ruleBody(r)}`);
}

/** The server's warnings, on stderr for people (under --json they are in the result). */
function warn(json: unknown, warnings: string[] | undefined): void {
  if (!json) for (const w of warnings ?? []) console.error(`warning: ${w}`);
}

const rulesCount = (n: number) => `${n} rule${n === 1 ? "" : "s"}`;

/**
 * `--rules`: a JSON list of rules, or an object with a `rules` list (what `svc gates get NAME --env ENV --json` prints).
 * Sent as written: the server checks every rule and names the field of a mistake, so they are only typed as rules here.
 */
function rulesFlag(text: unknown): Rule[] {
  if (text === undefined) throw new UsageError("--rules JSON is required (a list of rules, or @FILE)");
  const parsed = jsonFlag(text, "rules");
  const rules = Array.isArray(parsed) ? parsed : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { rules?: unknown }).rules) ? (parsed as { rules: unknown[] }).rules : undefined;
  if (!rules) throw new UsageError(`--rules must be a JSON list of rules (or an object with a "rules" list), got ${Array.isArray(parsed) ? "a list" : parsed === null ? "null" : typeof parsed}`);
  return rules as Rule[];
}

/** `--percentage N`: 0 to 100, decimals allowed. */
function percentageFlag(value: unknown): number {
  const n = /^\d+(\.\d+)?$/.test(String(value)) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= 100)) throw new UsageError(`--percentage must be a number from 0 to 100 (got "${value}")`);
  return n;
}

function envBlock(env: Env, state: Static<typeof GateSchema>["envs"][Env]): string[] {
  return [`${env} (version ${state.version}, ${when(state.updatedAt)} by ${state.updatedBy}):`, ...rulesLines(state.rules)];
}

const ruleLabel = (index: number, name?: string) => `rule ${index + 1}${name ? ` (${name})` : ""}`;

/**
 * What decided and why, in words. `rules` are the env's rules when the
 * explanation is of the version they came from (then conditions show their
 * values), else undefined.
 */
export function explanationText(x: Explanation, rules: Rule[] | undefined): string {
  const lines = [`${x.env}: ${x.gate} is ${x.value ? "on" : "off"} for this context (version ${x.version})`];
  const decided = x.ruleIndex === null ? undefined : x.rules.find((r) => r.index === x.ruleIndex);
  if (x.ruleIndex === null || !decided) {
    lines.push(x.rules.length === 0 ? "It has no rules on this env, so it is off for everyone." : "No rule held, so it is off (the default).");
  } else {
    const rule = rules?.[x.ruleIndex];
    const label = ruleLabel(x.ruleIndex, decided.name);
    const pct = rule ? percent(rule.passPercentage) : undefined;
    let why: string;
    if (x.reason === "SPLIT" && x.bucket !== null) {
      why = `the unit's bucket ${x.bucket.toFixed(4)} is ${x.value ? "under" : "not under"} ${pct ?? "the rule's percentage"}`;
    } else if (x.reason === "SPLIT") {
      why = `the context has no ${rule?.unit ?? "user_id"} to bucket by, so a ${pct ?? "partial"} rollout leaves it out`;
    } else {
      why = x.value ? `it passes ${pct ?? "100%"}` : `it passes ${pct ?? "0%"}`;
    }
    lines.push(`Decided by ${label}${rule ? `: ${ruleWhat(rule)}` : ""}. Its conditions hold and ${why}.`);
  }
  const failed = x.rules.filter((r) => !r.holds);
  if (failed.length) {
    lines.push(decided ? "Earlier rules that did not hold:" : "Rules that did not hold:");
    for (const r of failed) {
      lines.push(`  ${ruleLabel(r.index, r.name)}:`);
      r.conditions.forEach((c, j) => {
        if (c.holds) return;
        const condition = rules?.[r.index]?.conditions[j];
        lines.push(`    ✗ ${condition ? conditionText(condition) : `${c.attr} ${c.op}`}: ${c.why}`);
      });
    }
  }
  return lines.join("\n");
}

export const gatesCommand: Command = {
  name: "gates",
  summary: "Gates (who sees what): list, get, create, set-rules, explain, history, rollback, delete; templates list, get, create, delete",
  details: [
    "A gate is an ordered rule list per env. The first rule whose conditions all hold decides: it passes its passPercentage of units (by a stable hash of user_id, or the rule's unit). No rule holding means off.",
  ],
  examples: [
    "svc gates list",
    `svc gates set-rules new-checkout --env staging --rules '[{"name":"staff","conditions":[{"attr":"email","op":"ends_with","value":"@acme.com"}],"passPercentage":100}]'`,
    `svc gates explain new-checkout --env prod --context '{"user_id":"user-42","email":"ana@acme.com"}'`,
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's gates with their version and number of rules on every env",
      examples: ["svc gates list", "svc gates list --query checkout --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(gates(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No gates match "${q}".` : "No gates yet; create one with `svc gates create <name>`.";
          return table(
            ["NAME", "DEV", "STAGING", "PROD", "DESCRIPTION"],
            all.map((g) => [g.name, ...ENVS.map((e) => `v${g.envs[e].version}, ${rulesCount(g.envs[e].rules.length)}`), g.description]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one gate's rules, version and last publisher on every env (or one)",
      args: ["<name>"],
      examples: ["svc gates get new-checkout", "svc gates get new-checkout --env prod --json"],
      flags: { env: { type: "string", value: "ENV", help: "Only this env: dev, staging or prod (default: all three)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const env = envFlag(values.env);
        const gate = await dataOf(gates(openClient(values))({ id: seg(positionals[0]!) }).get());
        const title = `${gate.name} (${gate.id})${gate.description ? `: ${gate.description}` : ""}`;
        if (env) {
          const result = { id: gate.id, name: gate.name, description: gate.description, env, ...gate.envs[env] };
          emit(values.json, result, () => [title, "", ...envBlock(env, gate.envs[env])].join("\n"));
        } else {
          emit(values.json, gate, () => [title, ...ENVS.flatMap((e) => ["", ...envBlock(e, gate.envs[e])])].join("\n"));
        }
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a gate: version 1 on dev, staging and prod with the same rules (default none: off for everyone)",
      args: ["<name>"],
      examples: ["svc gates create new-checkout --description 'The redesigned checkout'", "svc gates create beta --rules @beta-rules.json"],
      flags: {
        description: { type: "string", value: "TEXT", help: "What the gate guards, shown in lists" },
        rules: { ...RULES_FLAG, help: `${RULES_FLAG.help}; published on every env (default: no rules)` },
        template: { type: "string", value: "NAME", help: "Start from a template (name or id, see `svc gates templates list`): one rule of its conditions" },
        percentage: { type: "string", value: "N", help: "With --template: the share (0-100) of matching units that pass (default 100)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const body: Static<typeof CreateGateBody> = { name };
        if (values.description !== undefined) body.description = str(values, "description");
        const template = str(values, "template");
        if (template !== undefined && values.rules !== undefined) throw new UsageError("--template and --rules cannot both be given: a template makes the rules");
        if (values.percentage !== undefined && template === undefined) throw new UsageError("--percentage needs --template NAME (with --rules, each rule has its passPercentage)");
        if (values.rules !== undefined) body.rules = rulesFlag(values.rules);
        if (template !== undefined) {
          if (template === "") throw new UsageError("--template must not be empty");
          body.template = template;
          if (values.percentage !== undefined) body.passPercentage = percentageFlag(values.percentage);
        }
        const client = openClient(values);
        const created = await dataOf(gates(client).post(body));
        // The rules a template made, to show them to people.
        if (template !== undefined && !values.json) body.rules = (await dataOf(gates(client)({ id: seg(created.name) }).get())).envs.dev.rules;
        emit(values.json, created, () => {
          const rules = body.rules ?? [];
          return [
            `Created gate ${created.name} (${created.id}): version 1 on dev, staging and prod${rules.length ? ` with ${rulesCount(rules.length)}:` : ", no rules (off for everyone)."}`,
            ...(rules.length ? rulesLines(rules) : []),
            `Change one env's rules with \`svc gates set-rules ${created.name} --env dev --rules JSON\`.`,
          ].join("\n");
        });
        warn(values.json, created.warnings);
        return 0;
      },
    },
    {
      name: "set-rules",
      summary: "Publish a new rule list on one env (it replaces the whole list; SDKs see it at once)",
      args: ["<name>"],
      details: [
        "Every operator and value is checked by the server; a mistake names the rule and field (rules[1].conditions[0].value). On prod, in a terminal, it shows the rules before and after and asks first (--yes skips the question; scripts and SERVICE_CLI_TOKEN never ask).",
      ],
      examples: [
        `svc gates set-rules new-checkout --env dev --rules '[{"conditions":[],"passPercentage":100}]'`,
        "svc gates set-rules new-checkout --env prod --rules @rules.json --yes",
      ],
      flags: {
        env: { type: "string", value: "ENV", help: "Env to publish on: dev, staging or prod (required)" },
        rules: { ...RULES_FLAG, help: `${RULES_FLAG.help} (required; an empty list turns it off for everyone)` },
        yes: YES_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const env = requiredEnv(values.env);
        const rules = rulesFlag(values.rules);
        const client = openClient(values);
        if (env === "prod") {
          const gate = await dataOf(gates(client)({ id: seg(name) }).get());
          const current = gate.envs.prod;
          // Shown as the server will store them, as far as the CLI can tell: a mistake is refused after the answer, and nothing changes.
          const after = rules.every((r) => typeof r === "object" && r !== null && Array.isArray(r.conditions)) ? rulesLines(rules, "    ") : [`    ${JSON.stringify(rules)}`];
          await confirmChange(
            values,
            client,
            [`prod: ${gate.name} version ${current.version} → ${current.version + 1}.`, "  now:", ...rulesLines(current.rules, "    "), "  after:", ...after, "Publish these rules to prod?"].join("\n"),
          );
        }
        const r = await dataOf(gates(client)({ id: seg(name) }).rules.put({ env, rules }));
        emit(values.json, r, () => [`${r.env}: ${name} version ${r.version}, ${rulesCount(r.rules.length)}:`, ...rulesLines(r.rules)].join("\n"));
        warn(values.json, r.warnings);
        return 0;
      },
    },
    {
      name: "explain",
      summary: "What a gate answers for a context on one env, the rule that decided, and why each earlier rule did not hold",
      args: ["<name>"],
      details: ["Reads only: nothing is evaluated for real or recorded. The same evaluator as the SDKs and OFREP."],
      examples: [`svc gates explain new-checkout --context '{"user_id":"user-42","email":"ana@acme.com","country":"de"}'`, "svc gates explain new-checkout --env staging --context @context.json --json"],
      flags: {
        env: { type: "string", value: "ENV", help: "Env to evaluate on: dev, staging or prod (default: env in ~/.service/config.json, else prod)" },
        context: { type: "string", value: "JSON", help: 'The evaluation context as a JSON object, or @FILE: {"user_id":"user-42","country":"de"} (required)' },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        if (values.context === undefined) throw new UsageError('--context JSON is required: an object such as \'{"user_id":"user-42"}\', or @FILE');
        const context = jsonFlag(values.context, "context");
        if (typeof context !== "object" || context === null || Array.isArray(context)) throw new UsageError(`--context must be a JSON object of attributes, such as '{"user_id":"user-42"}'`);
        const client = openClient(values);
        const env: Env = envFlag(values.env) ?? client.preferredEnv() ?? "prod";
        const x = await dataOf(gates(client)({ id: seg(name) }).explain.post({ env, context: context as Record<string, unknown> }));
        // For people, the rules themselves, to show each condition's value; only when they are the version explained.
        const state = values.json ? undefined : (await dataOf(gates(client)({ id: seg(name) }).get())).envs[env];
        emit(values.json, x, () => explanationText(x, state?.version === x.version ? state.rules : undefined));
        return 0;
      },
    },
    {
      name: "history",
      summary: "Published versions of a gate's rules, newest first",
      args: ["<name>"],
      examples: ["svc gates history new-checkout", "svc gates history new-checkout --env prod --limit 5"],
      flags: {
        env: { type: "string", value: "ENV", help: "Only this env: dev, staging or prod (default: all three)" },
        limit: { type: "string", value: "N", help: "At most N versions, 1 to 1000 (default 100)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const env = envFlag(values.env);
        const limit = intFlag(values.limit, "limit", 1, 1000);
        const rows = await dataOf(gates(openClient(values))({ id: seg(positionals[0]!) }).history.get({ query: { env, limit: limit?.toString() } }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No versions."
            : table(
                ["ENV", "VERSION", "RULES", "ACTION", "BY", "WHEN"],
                rows.map((h) => [h.env, h.version, h.rules.length ? h.rules.map((r, i) => `${i + 1}. ${ruleBody(r)}`).join("; ") : "none (off)", h.action.replace(/^gate\./, ""), h.actorEmail, when(h.createdAt)]),
                { full: ["ENV", "BY"] },
              ),
        );
        return 0;
      },
    },
    {
      name: "rollback",
      summary: "Publish an earlier version's rules on one env as its next version",
      args: ["<name>"],
      details: ["The rules are checked again (a gate they name may have gone since). On prod, in a terminal, it shows the rules and asks first (--yes skips the question)."],
      examples: ["svc gates rollback new-checkout --env prod --version 3", "svc gates rollback new-checkout --env staging --version 1 --json"],
      flags: {
        env: { type: "string", value: "ENV", help: "Env to roll back: dev, staging or prod (required)" },
        version: { type: "string", value: "N", help: "The earlier version whose rules to publish again (`svc gates history` lists them; required)" },
        yes: YES_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const env = requiredEnv(values.env);
        if (values.version === undefined) throw new UsageError("--version N is required (`svc gates history <name> --env ENV` lists them)");
        const version = intFlag(values.version, "version", 1, Number.MAX_SAFE_INTEGER)!;
        const client = openClient(values);
        if (env === "prod") {
          const history = await dataOf(gates(client)({ id: seg(name) }).history.get({ query: { env: "prod", limit: "1000" } }));
          const target = history.find((h) => h.version === version);
          const shown = target ? ["  its rules:", ...rulesLines(target.rules, "    ")] : [];
          await confirmChange(values, client, [`prod: ${name} back to the rules of version ${version}, published as a new version.`, ...shown, "Publish these rules to prod?"].join("\n"));
        }
        const r = await dataOf(gates(client)({ id: seg(name) }).rollback.post({ env, version }));
        emit(values.json, r, () => [`${r.env}: ${name} version ${r.version} (the rules of version ${version}), ${rulesCount(r.rules.length)}:`, ...rulesLines(r.rules)].join("\n"));
        warn(values.json, r.warnings);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a gate and its history on every env (SDKs stop seeing it; gates that name it see it as off)",
      examples: ["svc gates delete old-gate", "svc gates delete old-gate --yes"],
      question: (name) => `Delete gate ${name} and its history on every env? SDKs stop seeing it at once, and gates that name it see it as off.`,
      remove: async (client, name) => await dataOf(gates(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted gate ${name}.`],
    }),
    {
      name: "templates list",
      summary: "List gate templates: the built-ins first, then the project's own",
      examples: ["svc gates templates list", "svc gates templates list --query country --json"],
      flags: { query: { ...QUERY_FLAG, help: "Only templates whose name, description or category contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(gates(openClient(values)).templates.get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return `No templates match "${q}".`;
          return table(
            ["NAME", "CATEGORY", "CONDITIONS", "BUILT-IN", "DESCRIPTION"],
            all.map((t) => [t.name, t.category, conditionsText(t.rules), t.builtIn ? "yes" : "no", t.description]),
          );
        });
        return 0;
      },
    },
    {
      name: "templates get",
      summary: "Show one gate template and its conditions",
      args: ["<name>"],
      examples: ['svc gates templates get "Beta opt-in"', "svc gates templates get gtpl_country_list --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const t = await dataOf(gates(openClient(values)).templates({ id: seg(positionals[0]!) }).get());
        emit(values.json, t, () =>
          [
            `${t.name} (${t.id}), ${t.builtIn ? "built-in" : "this project's"}, ${t.category}${t.description ? `: ${t.description}` : ""}`,
            ...(t.rules.length ? t.rules.map((c) => `  ${conditionText(c)}`) : ["  no conditions: everyone"]),
            `Start a gate from it: \`svc gates create <name> --template ${shellWord(t.name)} --percentage N\``,
          ].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "templates create",
      summary: "Create a template of this project from a list of conditions, or from a segment",
      args: ["<name>"],
      details: [
        "Its conditions are checked like a gate rule's (a segment they name must exist). The name must be new in the project and not a built-in's.",
        "--segment NAME instead of --rules: the template is the one condition `in_segment NAME` on the segment's attribute.",
      ],
      examples: [
        `svc gates templates create "Acme staff" --rules '[{"attr":"email","op":"ends_with","value":"@acme.com"}]' --description 'People at acme.com'`,
        "svc gates templates create Nordics --rules @nordics.json --category condition --json",
        'svc gates templates create "Beta testers" --segment beta-testers',
      ],
      flags: {
        rules: {
          type: "string",
          value: "JSON",
          help: 'Conditions as a JSON list, or @FILE, all of which must hold: [{"attr":"country","op":"in","value":["se","no"]}] (required unless --segment; [] matches everyone)',
        },
        segment: { type: "string", value: "NAME", help: "Instead of --rules: build the template from this segment (id or name)" },
        description: { type: "string", value: "TEXT", help: "What the template is for, shown in lists" },
        category: { type: "string", value: "TEXT", help: "Free text; the built-ins use condition (the default) and rollout; segment for one built from a segment" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        if (values.segment !== undefined && values.rules !== undefined) throw new UsageError("--segment and --rules cannot both be given");
        const segment = values.segment === undefined ? undefined : str(values, "segment");
        const body: Static<typeof CreateTemplateBody> = segment === undefined ? { name: positionals[0]!, rules: conditionsFlag(values.rules) } : { name: positionals[0]!, segment };
        if (values.description !== undefined) body.description = str(values, "description");
        if (values.category !== undefined) body.category = str(values, "category");
        const created = await dataOf(gates(openClient(values)).templates.post(body));
        emit(values.json, created, () => {
          const conditions = body.rules ?? [];
          return [
            `Created template ${created.name} (${created.id}): ${segment !== undefined ? `in segment ${segment}` : conditions.length ? conditionsText(conditions) : "no conditions (everyone)"}.`,
            `Start a gate from it with \`svc gates create <name> --template ${shellWord(created.name)}\`.`,
          ].join("\n");
        });
        return 0;
      },
    },
    deleteCommand({
      name: "templates delete",
      summary: "Delete a template of this project (built-ins cannot be deleted; gates made from it keep their rules)",
      examples: ['svc gates templates delete "Acme staff"', 'svc gates templates delete "Acme staff" --yes --json'],
      question: (name) => `Delete gate template ${name}? Gates made from it keep their rules.`,
      remove: async (client, name) => await dataOf(gates(client).templates({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted template ${name}.`],
    }),
  ],
};

/** `email ends_with "@acme.com" and country in ["de"]`; none reads "everyone". */
const conditionsText = (conditions: Condition[]) => (conditions.length ? conditions.map(conditionText).join(" and ") : "everyone");

/** A name as one shell word: quoted when it holds anything but plain characters. */
const shellWord = (name: string) => (/^[\w.:@%+=,-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`);

/** A template's `--rules`: a JSON list of conditions, or an object with a `rules` list (what `svc gates templates get NAME --json` prints); checked by the server. */
function conditionsFlag(text: unknown): Condition[] {
  if (text === undefined) throw new UsageError('--rules JSON is required: a list of conditions such as \'[{"attr":"email","op":"ends_with","value":"@acme.com"}]\', or @FILE');
  const parsed = jsonFlag(text, "rules");
  const rules = Array.isArray(parsed) ? parsed : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { rules?: unknown }).rules) ? (parsed as { rules: unknown[] }).rules : undefined;
  if (!rules) throw new UsageError(`--rules must be a JSON list of conditions (or an object with a "rules" list), got ${parsed === null ? "null" : typeof parsed}`);
  return rules as Condition[];
}
