import { UsageError } from "../../lib/config";
import { ENVS, type Env, type SvcClient, dataOf, seg } from "../../cli/client";
import type { killswitchRoutes } from "./routes";
import {
  CLIENT_FLAGS,
  QUERY_FLAG,
  YES_FLAG,
  confirmChange,
  emit,
  envFlag,
  intFlag,
  list,
  openClient,
  str,
  table,
  when, deleteCommand } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { CliError } from "../../cli/errors";

const onOff = (v: boolean) => (v ? "on" : "off");
/** The killswitch routes, typed from their own schemas. */
const killswitches = (client: SvcClient) => client.api<ReturnType<typeof killswitchRoutes>>().api.admin.killswitches;

const TOGGLE_FLAGS = {
  env: { type: "string", value: "ENV", help: "Env to act on: dev, staging or prod (default: env in ~/.service/config.json, else prod)" },
  switch: { type: "string", value: "KEY", help: "Act on this sub-switch instead of the flat value; it must exist on that env unless --create" },
  create: { type: "boolean", help: "With --switch: add the sub-switch when that env does not have it yet" },
  on: { type: "boolean", help: "Set it on (publish true) instead of flipping it; a retry cannot undo it" },
  off: { type: "boolean", help: "Set it off (publish false) instead of flipping it" },
  yes: YES_FLAG,
  ...CLIENT_FLAGS,
} satisfies Command["flags"];

/**
 * `svc toggle` and `svc killswitches toggle`: reads the killswitch first, so
 * that it can say what will change, refuse a sub-switch that is not there
 * (a typo would otherwise create one), and ask before a change to prod in a
 * terminal. A confirmed change publishes exactly the value the person saw.
 */
const toggle: Command["run"] = async ({ values, positionals }) => {
  const [name] = positionals as [string];
  if (values.on && values.off) throw new UsageError("--on and --off cannot both be given");
  const switchKey = str(values, "switch");
  if (switchKey === "") throw new UsageError("--switch must not be empty");
  if (values.create && switchKey === undefined) throw new UsageError("--create needs --switch KEY (the sub-switch to add)");
  const client = openClient(values);
  const env: Env = envFlag(values.env) ?? client.preferredEnv() ?? "prod";
  const ks = await dataOf(killswitches(client)({ id: seg(name) }).get());
  const state = ks.envs[env];
  const label = switchKey === undefined ? ks.name : `${ks.name}/${switchKey}`;
  if (switchKey !== undefined && !(switchKey in state.switches) && !values.create) {
    const existing = Object.keys(state.switches);
    throw new CliError(
      `${ks.name} has no sub-switch "${switchKey}" on ${env}; nothing was changed`,
      "NOT_FOUND",
      `${existing.length ? `its sub-switches on ${env}: ${existing.join(", ")}` : `it has no sub-switches on ${env}`}. To add "${switchKey}", run the command again with --create.`,
    );
  }
  const previous = switchKey === undefined ? state.value : (state.switches[switchKey] ?? false);
  const explicit = values.on ? true : values.off ? false : undefined;
  let value = explicit;
  if (env === "prod") {
    const target = explicit ?? !previous;
    const asked = await confirmChange(values, client, `prod: ${label} ${onOff(previous)} → ${onOff(target)}. Publish this to prod?`);
    // What the person agreed to, exactly: a flip by someone else meanwhile must not turn it into the opposite.
    if (asked) value = target;
  }
  const r = await dataOf(killswitches(client)({ id: seg(name) }).toggle.post({ env, switchKey, value }));
  emit(values.json, r, () => `${r.env}: ${label} ${onOff(r.previous)} → ${onOff(r.value)} (version ${r.version})`);
  return 0;
};

const TOGGLE_SUMMARY = "Flip a killswitch (or one sub-switch) on one env, or set it with --on/--off";
const TOGGLE_DETAILS = [
  "Prints the env it acted on first: `prod: checkout off → on (version 7)`. On prod, in a terminal, it shows the change and asks first (--yes skips the question; scripts and SERVICE_CLI_TOKEN never ask). A sub-switch that the env does not have is refused unless --create.",
];

export const toggleCommand: Command = {
  name: "toggle",
  summary: TOGGLE_SUMMARY,
  args: ["<name>"],
  details: TOGGLE_DETAILS,
  examples: ["svc toggle checkout", "svc toggle checkout --env staging --off", "svc toggle checkout --switch new-ui --on", "svc toggle checkout --switch eu --create --env dev"],
  flags: TOGGLE_FLAGS,
  run: toggle,
};

function parseSwitch(text: string): [string, boolean] {
  const m = /^([^=]+?)(?:=(on|off|true|false))?$/.exec(text);
  if (!m) throw new UsageError(`--switch must be KEY, KEY=on or KEY=off (got "${text}")`);
  return [m[1]!, m[2] === "on" || m[2] === "true"];
}

function switchesText(switches: Record<string, boolean>): string {
  return Object.entries(switches)
    .map(([k, v]) => `${k}=${onOff(v)}`)
    .join(", ");
}

export const killswitchesCommand: Command = {
  name: "killswitches",
  summary: "Killswitches: list, get, create, delete, history, toggle",
  examples: ["svc killswitches list", "svc killswitches create checkout --switch eu --switch us=on", "svc killswitches history checkout --env prod"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's killswitches with their value on every env",
      examples: ["svc killswitches list", "svc killswitches list --query checkout --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(killswitches(openClient(values)).get({ query: { q } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No killswitches match "${q}".` : "No killswitches yet; create one with `svc killswitches create <name>`.";
          return table(
            ["NAME", "DEV", "STAGING", "PROD", "PROD SWITCHES", "DESCRIPTION"],
            all.map((k) => [k.name, ...ENVS.map((e) => `${onOff(k.envs[e].value)} v${k.envs[e].version}`), switchesText(k.envs.prod.switches), k.description]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one killswitch: value, sub-switches, version and last publisher on every env",
      args: ["<name>"],
      examples: ["svc killswitches get checkout", "svc killswitches get ksw_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const ks = await dataOf(killswitches(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, ks, () =>
          [
            `${ks.name} (${ks.id})${ks.description ? `: ${ks.description}` : ""}`,
            "",
            table(
              ["ENV", "VALUE", "VERSION", "SWITCHES", "UPDATED", "BY"],
              ENVS.map((e) => [e, onOff(ks.envs[e].value), ks.envs[e].version, switchesText(ks.envs[e].switches), when(ks.envs[e].updatedAt), ks.envs[e].updatedBy]),
              { full: ["ENV", "BY"] },
            ),
          ].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a killswitch: version 1 on dev, staging and prod, off unless --on",
      args: ["<name>"],
      examples: ["svc killswitches create checkout", "svc killswitches create search --on --switch beta --description 'Search v2'"],
      flags: {
        on: { type: "boolean", help: "Start on (true) on every env; default off" },
        switch: { type: "string", value: "KEY[=on]", multiple: true, help: "Seed a sub-switch, off unless KEY=on" },
        description: { type: "string", value: "TEXT", help: "What the killswitch guards, shown in lists" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const switches = Object.fromEntries(list(values, "switch").map(parseSwitch));
        const body = { name, value: values.on === true, ...(Object.keys(switches).length ? { switches } : {}), ...(values.description !== undefined ? { description: str(values, "description") } : {}) };
        const created = await dataOf(killswitches(openClient(values)).post(body));
        emit(values.json, created, () =>
          [
            `Created killswitch ${created.name} (${created.id}): ${onOff(body.value)} on dev, staging and prod${Object.keys(switches).length ? `, sub-switches ${switchesText(switches)}` : ""}.`,
            `Flip it with \`svc toggle ${created.name} --env dev\`.`,
          ].join("\n"),
        );
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a killswitch and its history on every env (SDKs stop seeing it)",
      examples: ["svc killswitches delete old-banner", "svc killswitches delete old-banner --yes"],
      question: (name) => `Delete killswitch ${name} and its history on every env? SDKs stop seeing it at once.`,
      remove: async (client, name) => await dataOf(killswitches(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted killswitch ${name}.`],
    }),
    {
      name: "history",
      summary: "Published versions of a killswitch, newest first",
      args: ["<name>"],
      examples: ["svc killswitches history checkout", "svc killswitches history checkout --env prod --limit 5"],
      flags: {
        env: { type: "string", value: "ENV", help: "Only this env: dev, staging or prod (default: all three)" },
        limit: { type: "string", value: "N", help: "At most N versions, 1 to 1000 (default 100)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const env = envFlag(values.env);
        const limit = intFlag(values.limit, "limit", 1, 1000);
        const rows = await dataOf(killswitches(openClient(values))({ id: seg(positionals[0]!) }).history.get({ query: { env, limit: limit?.toString() } }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No versions."
            : table(
                ["ENV", "VERSION", "VALUE", "SWITCHES", "ACTION", "BY", "WHEN"],
                rows.map((h) => [h.env, h.version, onOff(h.value), switchesText(h.switches), h.action.replace(/^killswitch\./, ""), h.actorEmail, when(h.createdAt)]),
                { full: ["ENV", "BY"] },
              ),
        );
        return 0;
      },
    },
    { ...toggleCommand, name: "toggle" },
  ],
};
