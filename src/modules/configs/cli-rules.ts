import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { type Env, type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, envFlag, jsonFlag, openClient, requiredEnv, str, table } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { conditionText } from "../gates/cli";
import type { ConfigExplanationSchema, ConfigRuleSchema } from "./contract";
import type { configRoutes } from "./routes";

// `svc configs rules`, `rules set` and `explain` (issue 29): apart from cli.ts so that neither file passes 400 lines.

type Rule = Static<typeof ConfigRuleSchema>;
type Explanation = Static<typeof ConfigExplanationSchema>;

const configs = (client: SvcClient, options: { requireProject?: boolean } = {}) => client.api<ReturnType<typeof configRoutes>>(options).api.admin.configs;
const json = (v: unknown) => JSON.stringify(v) ?? "null";

/** What a rule serves: its value, or its split as `"a" 50% / "b" 30% / "c" 20%` (with ` by account_id` for another unit). */
export function servesText(rule: Rule): string {
  if (!rule.split) return json(rule.value);
  const shares = rule.split.map((e) => `${json(e.value)} ${e.weight}%`).join(" / ");
  return rule.unit && rule.unit !== "user_id" ? `${shares} by ${rule.unit}` : shares;
}

/** Who a rule holds for: its conditions joined by "and", or "everyone". */
const whoText = (rule: Rule) => (rule.conditions.length ? rule.conditions.map(conditionText).join(" and ") : "everyone");

/** The rules as a table, numbered as explanations name them (rule-N), the default value last. */
export function rulesTable(rules: Rule[], value: unknown): string {
  const rows = rules.map((r, i) => [String(i + 1), r.name ?? `rule-${i + 1}`, whoText(r), servesText(r)]);
  rows.push(["-", "default", rules.length ? "no rule above holds" : "everyone", json(value)]);
  return table(["#", "RULE", "CONDITIONS", "SERVES"], rows, { full: ["#", "RULE", "CONDITIONS", "SERVES"] });
}

/** The rules file: a JSON list of rules, or an object with a `rules` list (what `svc configs rules NAME --json` prints). */
function rulesFile(path: unknown): Rule[] {
  if (typeof path !== "string" || path === "") throw new UsageError("--file PATH is required: a JSON list of rules (or an object with a \"rules\" list)");
  const parsed = jsonFlag(`@${path}`, "file");
  const rules = Array.isArray(parsed) ? parsed : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { rules?: unknown }).rules) ? (parsed as { rules: unknown[] }).rules : undefined;
  if (!rules) throw new UsageError(`--file ${path} must hold a JSON list of rules (or an object with a "rules" list)`);
  // Sent as written: the server checks every rule and names the field of a mistake.
  return rules as Rule[];
}

const ruleName = (index: number, name?: string) => `rule ${index + 1}${name ? ` (${name})` : ""}`;

/** What a config serves a context and why, in words. */
export function explanationText(x: Explanation): string {
  const lines = [`${x.env}: ${x.config} serves ${json(x.value)} to this context (${x.draft ? `the draft on version ${x.version}` : `version ${x.version}`})`];
  if (x.ruleIndex === null) lines.push(`Variant default (${x.reason}): no rule decided, so it serves the default value.`);
  else {
    const decided = x.rules.find((r) => r.index === x.ruleIndex);
    const how = x.reason === "SPLIT" && x.bucket !== null ? `its conditions hold and the unit's bucket ${x.bucket.toFixed(4)} falls in this value's share` : "its conditions hold";
    lines.push(`Variant ${x.variant} (${x.reason}): decided by ${ruleName(x.ruleIndex, decided?.name)}; ${how}.`);
  }
  const passed = x.rules.filter((r) => r.index !== x.ruleIndex);
  if (passed.length) {
    lines.push(x.ruleIndex === null ? "Rules that did not decide:" : "Earlier rules that did not decide:");
    for (const r of passed) {
      lines.push(`  ${ruleName(r.index, r.name)}:${r.holds ? " its conditions hold, but the context has no unit for its split" : ""}`);
      for (const c of r.conditions) if (!c.holds) lines.push(`    ✗ ${c.attr} ${c.op}: ${c.why}`);
    }
  }
  return lines.join("\n");
}

const ENV_DEFAULT_HELP = "Env: dev, staging or prod (default: env in ~/.service/config.json, else prod)";

export const configRulesCommands: Command[] = [
  {
    name: "rules",
    summary: "Show a config's rules on one env (and its draft's): who is served which value or split",
    args: ["<name>"],
    details: ["The first rule whose conditions all hold serves its value, or its split by a stable hash of the unit (user_id unless the rule names another); none holding serves the default value."],
    examples: ["svc configs rules checkout-banner --env prod", "svc configs rules checkout-banner --env staging --json"],
    flags: { env: { type: "string", value: "ENV", help: ENV_DEFAULT_HELP }, ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const client = openClient(values);
      const env: Env = envFlag(values.env) ?? client.preferredEnv() ?? "prod";
      const cfg = await dataOf(configs(client)({ id: seg(positionals[0]!) }).get());
      const live = cfg.envs[env];
      const draft = cfg.drafts[env];
      const result = {
        id: cfg.id,
        name: cfg.name,
        env,
        version: live.version,
        value: live.value,
        rules: live.rules,
        draft: draft ? { value: draft.value, rules: draft.rules ?? null, baseVersion: draft.baseVersion, updatedAt: draft.updatedAt } : null,
      };
      emit(values.json, result, () => {
        const lines = [`${cfg.name} on ${env} (version ${live.version}): ${live.rules.length} rule${live.rules.length === 1 ? "" : "s"}`, rulesTable(live.rules, live.value)];
        if (draft) {
          lines.push("", `Unpublished draft (from version ${draft.baseVersion}):`);
          lines.push(draft.rules ? rulesTable(draft.rules, draft.value) : `default value ${json(draft.value)}; it keeps the published rules`);
          lines.push(`Publish it with \`svc configs publish ${cfg.name} --env ${env}\`.`);
        }
        return lines.join("\n");
      });
      return 0;
    },
  },
  {
    name: "rules set",
    summary: "Save a draft of one env with these rules (validated); --publish also makes it live",
    args: ["<name>"],
    details: [
      'The file holds a JSON list of rules: {"name":"staff","conditions":[{"attr":"email","op":"ends_with","value":"@acme.com"}],"value":…} or {"conditions":[…],"split":[{"value":…,"weight":50},…],"unit":"user_id"} (weights are integers summing to 100). An object with a "rules" list (what `svc configs rules NAME --json` prints) works too.',
      "The draft's default value is --value, else the env's published value. Every value is checked against the config's schema; a mistake is refused naming the rule and field, and nothing changes.",
    ],
    examples: ["svc configs rules set checkout-banner --env staging --file rules.json", `svc configs rules set checkout-banner --env prod --file rules.json --value '{"enabled":false}' --publish`],
    flags: {
      env: { type: "string", value: "ENV", help: "Env whose draft to save: dev, staging or prod (required)" },
      file: { type: "string", value: "PATH", help: "JSON file with the rules, in order (required)" },
      value: { type: "string", value: "JSON", help: "The default value (served when no rule holds) as JSON, or @FILE (default: the env's published value)" },
      publish: { type: "boolean", help: "Publish the draft at once as the env's next version (asks first on prod in a terminal)" },
      yes: YES_FLAG,
      ...CLIENT_FLAGS,
    },
    async run({ values, positionals }) {
      const name = positionals[0]!;
      const env = requiredEnv(values.env);
      const rules = rulesFile(str(values, "file"));
      const client = openClient(values);
      const api = configs(client, { requireProject: true })({ id: seg(name) });
      let value: unknown;
      if (values.value !== undefined) value = jsonFlag(values.value, "value");
      else {
        const cfg = await dataOf(api.get());
        value = cfg.envs[env].value;
        const pending = cfg.drafts[env];
        // Said, not silent: the draft's own default value is replaced by the published one.
        if (pending && json(pending.value) !== json(value) && !values.json) console.error(`warning: the ${env} draft's default value ${json(pending.value)} is replaced by the published one; pass --value to keep another`);
      }
      if (values.publish && env === "prod") await confirmChange(values, client, `Publish ${rules.length} rule${rules.length === 1 ? "" : "s"} of ${name} on prod? SDKs see them at once.`);
      const draft = await dataOf(api.drafts.put({ env, value, rules }));
      if (!values.publish) {
        emit(values.json, { draft }, () => `Saved a draft of ${name} on ${env} with ${rules.length} rule${rules.length === 1 ? "" : "s"} (from version ${draft.baseVersion}); publish it with \`svc configs publish ${name} --env ${env}\`.`);
        return 0;
      }
      const published = await dataOf(api.publish.post({ env }));
      emit(values.json, { draft, published }, () => `Published ${name} on ${env} with ${rules.length} rule${rules.length === 1 ? "" : "s"}: version ${published.version}.`);
      return 0;
    },
  },
  {
    name: "explain",
    summary: "What a config serves a context on one env, its variant and reason, and why each earlier rule did not decide",
    args: ["<name>"],
    details: ["Reads only: nothing is recorded. The same evaluator as the SDKs and OFREP. --draft previews the env's saved draft before it is published."],
    examples: [`svc configs explain checkout-banner --env prod --context '{"user_id":"u-1","email":"ada@acme.com"}'`, "svc configs explain checkout-banner --env staging --context @context.json --draft --json"],
    flags: {
      env: { type: "string", value: "ENV", help: ENV_DEFAULT_HELP },
      context: { type: "string", value: "JSON", help: 'The evaluation context as a JSON object, or @FILE: {"user_id":"u-1","country":"de"} (required)' },
      draft: { type: "boolean", help: "Evaluate the env's draft (value and rules) instead of what is published" },
      ...CLIENT_FLAGS,
    },
    async run({ values, positionals }) {
      if (values.context === undefined) throw new UsageError('--context JSON is required: an object such as \'{"user_id":"u-1"}\', or @FILE');
      const context = jsonFlag(values.context, "context");
      if (typeof context !== "object" || context === null || Array.isArray(context)) throw new UsageError(`--context must be a JSON object of attributes, such as '{"user_id":"u-1"}'`);
      const client = openClient(values);
      const env: Env = envFlag(values.env) ?? client.preferredEnv() ?? "prod";
      const x = await dataOf(configs(client)({ id: seg(positionals[0]!) }).explain.post({ env, context: context as Record<string, unknown>, draft: values.draft === true }));
      emit(values.json, x, () => explanationText(x));
      return 0;
    },
  },
];
