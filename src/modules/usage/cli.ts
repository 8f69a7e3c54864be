/** `svc flags`: flags across kinds (killswitches, gates, configs): which are stale, and one flag's evaluations. */
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, emit, openClient, str, table, when } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";
import type { usageRoutes } from "./routes";

const flags = (client: SvcClient) => client.api<ReturnType<typeof usageRoutes>>().api.admin.flags;

const ENVS = ["dev", "staging", "prod"] as const;
type Env = (typeof ENVS)[number];

function envFlag(values: ArgValues): Env | undefined {
  const env = str(values, "env");
  if (env !== undefined && !(ENVS as readonly string[]).includes(env)) throw new UsageError(`--env must be one of ${ENVS.join(", ")} (got "${env}")`);
  return env as Env | undefined;
}

const REASON_WORDS = { one_value: "one value for everyone", not_evaluated: "not evaluated" } as const;

export const flagsCommand: Command = {
  name: "flags",
  summary: "Flags of every kind: stale ones, and a flag's evaluation counts",
  details: [
    "A flag is stale on an env when it has served one value to everyone, or has not been evaluated, for the project's staleAfterDays (default 30; `svc projects` sets it).",
  ],
  examples: ["svc flags stale", "svc flags stale --env prod --json", "svc flags usage new-checkout --env prod"],
  subcommands: [
    {
      name: "stale",
      summary: "List stale killswitches, gates and configs with the reason",
      examples: ["svc flags stale", "svc flags stale --env prod", "svc flags stale --json"],
      flags: { env: { type: "string", value: "ENV", help: "dev, staging or prod (default: every env)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const env = envFlag(values);
        const list = await dataOf(flags(openClient(values)).stale.get({ query: env ? { env } : {} }));
        emit(values.json, list, () =>
          list.flags.length === 0
            ? `No stale flags (after ${list.staleAfterDays} days).`
            : table(
                ["NAME", "KIND", "ENV", "WHY", "LAST EVALUATED", "LAST CHANGED"],
                list.flags.map((f) => [f.name, f.kind, f.env, f.reasons.map((r) => REASON_WORDS[r]).join(", "), f.lastEvaluatedAt ? when(f.lastEvaluatedAt) : "never", when(f.lastChangedAt)]),
                { full: ["NAME"] },
              ),
        );
        return 0;
      },
    },
    {
      name: "usage",
      summary: "A flag's last evaluation per env and its evaluations per day over 30 days",
      args: ["<name>"],
      examples: ["svc flags usage checkout", "svc flags usage checkout --env prod --json"],
      flags: { env: { type: "string", value: "ENV", help: "dev, staging or prod (default: every env added up)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const env = envFlag(values);
        const usage = await dataOf(flags(openClient(values))({ name: seg(positionals[0]!) }).usage.get({ query: env ? { env } : {} }));
        emit(values.json, usage, () =>
          [
            `${usage.name}: ${usage.total} evaluations in 30 days${usage.env ? ` on ${usage.env}` : ""}`,
            ...ENVS.map((e) => `  last evaluated on ${e}: ${usage.lastEvaluatedAt[e] ? when(usage.lastEvaluatedAt[e]!) : "never"}`),
            table(["DAY", "COUNT"], usage.days.filter((d) => d.count > 0).map((d) => [d.day, String(d.count)])),
          ].join("\n"),
        );
        return 0;
      },
    },
  ],
};
