/** `svc growthbook`: what GrowthBook's SDKs get from this server on an env, and what the mapping could not express. */
import { type SvcClient, dataOf } from "../../cli/client";
import { CLIENT_FLAGS, emit, envFlag, openClient, table } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { growthbookAdminRoutes } from "./admin-routes";

const growthbook = (client: SvcClient) => client.api<ReturnType<typeof growthbookAdminRoutes>>().api.admin.growthbook;

const NUMBER = new Intl.NumberFormat("en");
const count = (n: number, one: string, many: string) => `${NUMBER.format(n)} ${n === 1 ? one : many}`;

export const growthbookCommand: Command = {
  name: "growthbook",
  summary: "GrowthBook SDKs: what they get on an env and what does not map",
  details: [
    "GrowthBook's SDKs load GET /api/features/{key} with apiHost = this server and clientKey = a server SDK key (`svc sdk keys create --type server`). A construct they cannot evaluate as svc does is served differently; `status` lists each with what is served instead.",
  ],
  examples: ["svc growthbook status --env prod", "svc growthbook status --json"],
  subcommands: [
    {
      name: "status",
      summary: "Show the payload's counts and size on an env, and a table of what does not map",
      examples: ["svc growthbook status", "svc growthbook status --env staging --json"],
      flags: { env: { type: "string", value: "ENV", help: "dev, staging or prod (default: the project's default env)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const env = envFlag(values.env);
        const status = await dataOf(growthbook(openClient(values)).get({ query: env ? { env } : {} }));
        emit(values.json, status, () =>
          [
            `GrowthBook SDKs on ${status.env} (revision ${status.revision}): ${count(status.features, "feature", "features")}, ${count(status.savedGroups, "saved group", "saved groups")}, ${count(status.payloadBytes, "byte", "bytes")}`,
            `They load ${status.paths.features} and follow ${status.paths.stream} (key: a server SDK key).`,
            status.unmapped.length === 0
              ? "Everything maps: GrowthBook's SDKs evaluate every flag as svc does."
              : `${count(status.unmapped.length, "construct does", "constructs do")} not map:\n${table(
                  ["FEATURE", "CONSTRUCT", "SERVED INSTEAD"],
                  status.unmapped.map((u) => [u.feature, u.construct, u.served]),
                  { full: ["FEATURE", "CONSTRUCT", "SERVED INSTEAD"] },
                )}`,
          ].join("\n"),
        );
        return 0;
      },
    },
  ],
};
