import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { ENVS, type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, YES_FLAG, confirmChange, emit, envFlag, intFlag, jsonFlag, openClient, requiredEnv, str, table, when } from "../../cli/client-command";
import type { Command, Flag } from "../../cli/command";
import type { CreateConfigBody } from "./contract";
import type { configRoutes } from "./routes";
import { configRulesCommands } from "./cli-rules";

/** The config routes, typed from their own schemas. */
const configs = (client: SvcClient, options: { requireProject?: boolean } = {}) => client.api<ReturnType<typeof configRoutes>>(options).api.admin.configs;
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

const ENV_FLAG: Flag = { type: "string", value: "ENV", help: "Env: dev, staging or prod" };
const VALUE_FLAG: Flag = { type: "string", value: "JSON", help: "The new value as JSON (a string needs quotes: '\"text\"'), or @FILE to read it from a file" };

export const configsCommand: Command = {
  name: "configs",
  summary: "Dynamic configs: list, get, create, set (save a draft), publish, rules (show, set), explain, history, rollback, activity; schema get, set",
  details: [
    "`svc config` is the same command. A change is saved as a draft of one env and goes live when published (`set --publish` does both).",
    "On each env a config serves its default value, unless one of its ordered rules holds for the context: that rule serves its own value, or a split of values by a stable hash of the unit (`svc configs rules`, `svc configs explain`).",
  ],
  examples: [
    "svc configs list",
    `svc configs set checkout-limits --env staging --value '{"max":5}' --publish`,
    "svc configs rules set checkout-limits --env prod --file rules.json --publish",
    "svc configs activity checkout-limits",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's configs: published version on every env and which envs have drafts",
      examples: ["svc configs list", "svc configs list --query limits --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(configs(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No configs match "${q}".` : "No configs yet; create one with `svc configs create <name> --value JSON`.";
          return table(
            ["NAME", "DEV", "STAGING", "PROD", "DRAFTS", "DESCRIPTION"],
            all.map((c) => [c.name, ...ENVS.map((e) => `v${c.envs[e].version}`), ENVS.filter((e) => c.drafts[e]).join(", "), c.description]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show a config's published value and version on every env (or one), and any drafts",
      args: ["<name>"],
      examples: ["svc configs get checkout-limits", "svc configs get checkout-limits --env prod --json"],
      flags: { env: { ...ENV_FLAG, help: "Only this env: dev, staging or prod (default: all three)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const env = envFlag(values.env);
        const cfg = await dataOf(configs(openClient(values))({ id: seg(positionals[0]!) }).get());
        if (env) {
          const result = { id: cfg.id, name: cfg.name, env, ...cfg.envs[env], draft: cfg.drafts[env] ?? null };
          emit(values.json, result, () => {
            const lines = [`${cfg.name} on ${env} (version ${result.version}):`, pretty(result.value)];
            if (result.draft) lines.push(`Unpublished draft (from version ${result.draft.baseVersion}):`, pretty(result.draft.value));
            return lines.join("\n");
          });
        } else {
          emit(values.json, cfg, () =>
            ENVS.flatMap((e) => {
              const draft = cfg.drafts[e];
              return [`${e} (version ${cfg.envs[e].version}): ${JSON.stringify(cfg.envs[e].value)}`, ...(draft ? [`  draft: ${JSON.stringify(draft.value)}`] : [])];
            }).join("\n"),
          );
        }
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a config: its JSON Schema and version 1 on every env",
      args: ["<name>"],
      examples: [
        `svc configs create checkout-limits --schema '{"type":"object","properties":{"max":{"type":"integer"}}}' --value '{"max":3}'`,
        "svc configs create banner-text --value '\"Hello\"' --description 'Top banner'",
        "svc configs create limits --schema @limits.schema.json --value @limits.json",
      ],
      flags: {
        schema: { type: "string", value: "JSON", help: "JSON Schema every value must match, or @FILE (default: true, any JSON value)" },
        value: { ...VALUE_FLAG, help: "Value published on every env at version 1, as JSON or @FILE (required unless the schema has a default)" },
        description: { type: "string", value: "TEXT", help: "What the config is for, shown in lists" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const body: Static<typeof CreateConfigBody> = { name, schema: values.schema === undefined ? true : jsonFlag(values.schema, "schema") };
        if (values.value !== undefined) body.value = jsonFlag(values.value, "value");
        if (values.description !== undefined) body.description = str(values, "description");
        const created = await dataOf(configs(openClient(values)).post(body));
        emit(values.json, created, () =>
          [`Created config ${created.name} (${created.id}): version 1 on dev, staging and prod.`, `Change it with \`svc configs set ${created.name} --env dev --value JSON --publish\`.`].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "set",
      summary: "Save a draft of one env (validated against the schema); --publish also makes it live",
      args: ["<name>"],
      examples: [`svc configs set checkout-limits --env staging --value '{"max":5}'`, `svc configs set checkout-limits --env prod --value @limits.json --publish`],
      flags: {
        env: { ...ENV_FLAG, help: "Env whose draft to save: dev, staging or prod (required)" },
        value: { ...VALUE_FLAG, help: `${VALUE_FLAG.help} (required)` },
        publish: { type: "boolean", help: "Publish the draft at once as the env's next version (asks first on prod in a terminal)" },
        yes: YES_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const env = requiredEnv(values.env);
        const value = jsonFlag(values.value, "value");
        const client = openClient(values);
        if (values.publish && env === "prod") await confirmChange(values, client, `Publish ${name} on prod? SDKs see the new value at once.`);
        const draft = await dataOf(configs(client, { requireProject: true })({ id: seg(name) }).drafts.put({ env, value }));
        if (!values.publish) {
          emit(values.json, { draft }, () => `Saved a draft of ${name} on ${env} (from version ${draft.baseVersion}); publish it with \`svc configs publish ${name} --env ${env}\`.`);
          return 0;
        }
        const published = await dataOf(configs(client, { requireProject: true })({ id: seg(name) }).publish.post({ env }));
        emit(values.json, { draft, published }, () => `Published ${name} on ${env}: version ${published.version}.`);
        return 0;
      },
    },
    {
      name: "publish",
      summary: "Publish one env's draft as its next version (SDKs see it at once)",
      args: ["<name>"],
      examples: ["svc configs publish checkout-limits --env staging", "svc configs publish checkout-limits --env prod --yes"],
      flags: { env: { ...ENV_FLAG, help: "Env whose draft to publish: dev, staging or prod (required)" }, yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const env = requiredEnv(values.env);
        const client = openClient(values);
        if (env === "prod") await confirmChange(values, client, `Publish the prod draft of ${name}? SDKs see the new value at once.`);
        const published = await dataOf(configs(client, { requireProject: true })({ id: seg(name) }).publish.post({ env }));
        emit(values.json, published, () => `Published ${name} on ${env}: version ${published.version}.`);
        return 0;
      },
    },
    ...configRulesCommands,
    {
      name: "history",
      summary: "Published versions of a config, newest first (what `rollback` can go back to)",
      args: ["<name>"],
      examples: ["svc configs history checkout-limits --env prod", "svc configs history checkout-limits --limit 5 --json"],
      flags: { env: { ...ENV_FLAG, help: "Only this env: dev, staging or prod (default: all three)" }, limit: { type: "string", value: "N", help: "At most N versions, 1 to 1000 (default 100)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const env = envFlag(values.env);
        const limit = intFlag(values.limit, "limit", 1, 1000);
        const rows = await dataOf(configs(openClient(values))({ id: seg(positionals[0]!) }).history.get({ query: { env, limit: limit?.toString() } }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No versions."
            : table(
                ["ENV", "VERSION", "VALUE", "BY", "WHEN"],
                rows.map((h) => [h.env, h.version, JSON.stringify(h.value), h.actorEmail, when(h.createdAt)]),
                { full: ["ENV", "BY"] },
              ),
        );
        return 0;
      },
    },
    {
      name: "rollback",
      summary: "Publish an earlier version's value on one env as its next version",
      args: ["<name>"],
      details: ["The value is checked against the current schema first (it may have changed since). On prod, in a terminal, it shows the value and asks first (--yes skips the question)."],
      examples: ["svc configs rollback checkout-limits --env prod --version 3", "svc configs rollback checkout-limits --env staging --version 1 --json"],
      flags: {
        env: { ...ENV_FLAG, help: "Env to roll back: dev, staging or prod (required)" },
        version: { type: "string", value: "N", help: "The earlier version whose value to publish again (`svc configs history` lists them; required)" },
        yes: YES_FLAG,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const env = requiredEnv(values.env);
        if (values.version === undefined) throw new UsageError(`--version N is required (\`svc configs history ${name} --env ${env}\` lists them)`);
        const version = intFlag(values.version, "version", 1, Number.MAX_SAFE_INTEGER)!;
        const client = openClient(values);
        if (env === "prod") {
          const history = await dataOf(configs(client)({ id: seg(name) }).history.get({ query: { env: "prod", limit: "1000" } }));
          const target = history.find((h) => h.version === version);
          const shown = target ? ["  its value:", pretty(target.value).replace(/^/gm, "    ")] : [];
          await confirmChange(values, client, [`prod: ${name} back to the value of version ${version}, published as a new version.`, ...shown, "Publish this value to prod?"].join("\n"));
        }
        const r = await dataOf(configs(client)({ id: seg(name) }).rollback.post({ env, version }));
        emit(values.json, r, () => [`${r.env}: ${name} version ${r.version} (the value of version ${version}):`, pretty(r.value)].join("\n"));
        return 0;
      },
    },
    {
      name: "schema get",
      summary: "Print a config's JSON Schema",
      args: ["<name>"],
      details: ["Prints the schema as JSON (with or without --json), ready to edit and send back with `svc configs schema set`."],
      examples: ["svc configs schema get checkout-limits > limits.schema.json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const cfg = await dataOf(configs(openClient(values))({ id: seg(positionals[0]!) }).get());
        console.log(pretty(cfg.schema));
        return 0;
      },
    },
    {
      name: "schema set",
      summary: "Replace a config's JSON Schema (every published value and draft must fit it)",
      args: ["<name>"],
      details: [
        "The new schema is refused (VALIDATION naming the env or draft and the JSON path) when a published value or a draft of any env does not match it; nothing changes then. Publishes nothing: SDKs see no change.",
      ],
      examples: ["svc configs schema set checkout-limits --file limits.schema.json", `svc configs schema set checkout-limits --schema '{"type":"object","properties":{"max":{"type":"integer"}}}' --json`],
      flags: {
        file: { type: "string", value: "PATH", help: "Read the JSON Schema from this file" },
        schema: { type: "string", value: "JSON", help: "The JSON Schema itself, or @FILE (instead of --file)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const file = str(values, "file");
        if ((file === undefined) === (values.schema === undefined)) throw new UsageError("give the new schema with --file PATH or --schema JSON (one of them)");
        const schema = file !== undefined ? jsonFlag(`@${file}`, "file") : jsonFlag(values.schema, "schema");
        const client = openClient(values);
        await dataOf(configs(client)({ id: seg(name) }).patch({ schema }));
        const cfg = await dataOf(configs(client)({ id: seg(name) }).get());
        emit(values.json, { id: cfg.id, name: cfg.name, schema: cfg.schema }, () => `Replaced the JSON Schema of ${cfg.name}; every published value and draft fits it. Nothing was published.`);
        return 0;
      },
    },
    {
      name: "activity",
      summary: "Who created, changed, drafted and published a config, newest first",
      args: ["<name>"],
      examples: ["svc configs activity checkout-limits", "svc configs activity checkout-limits --limit 5 --json"],
      flags: { limit: { type: "string", value: "N", help: "At most N rows, 1 to 100 (default 20)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const limit = intFlag(values.limit, "limit", 1, 100);
        const rows = await dataOf(configs(openClient(values), { requireProject: true })({ id: seg(positionals[0]!) }).activity.get({ query: { limit: limit?.toString() } }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No activity."
            : table(
                ["WHEN", "ACTION", "BY", "DETAILS"],
                rows.map((a) => [when(a.createdAt), a.action.replace(/^config\./, ""), a.actorEmail, Object.keys(a.payload).length ? JSON.stringify(a.payload) : ""]),
                { full: ["BY"] },
              ),
        );
        return 0;
      },
    },
  ],
};
