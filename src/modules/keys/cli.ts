import type { Static } from "elysia";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, refuseSecret, str, table, when, oneOf } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { KeyType } from "./contract";
import type { keyRoutes } from "./routes";

const KEY_TYPES: Static<typeof KeyType>[] = ["server", "client", "admin", "browser"];
const ENVS = ["dev", "staging", "prod"] as const;

/** The SDK key routes, typed from their own schemas. */
const keys = (client: SvcClient) => client.api<ReturnType<typeof keyRoutes>>().api.admin.keys;

export const sdkCommand: Command = {
  name: "sdk",
  summary: "SDK keys: sdk keys list | create | revoke",
  details: [
    "Server keys read flags and configs (SDKs on your servers); browser keys ship inside web and mobile apps: bound to one env, they get evaluated flags only and send events and errors (also as a Sentry DSN); client keys only file public tickets; admin keys reach the whole admin API of the project. Managing keys takes an owner.",
  ],
  examples: ["svc sdk keys list", "svc sdk keys create --type browser --env prod --name web", "svc sdk keys revoke key_…"],
  subcommands: [
    {
      name: "keys list",
      summary: "List the project's live SDK keys (masked; secrets are never shown again)",
      examples: ["svc sdk keys list", "svc sdk keys list --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values }) {
        const all = await dataOf(keys(openClient(values)).get());
        emit(values.json, all, () =>
          all.length === 0
            ? "No SDK keys; create one with `svc sdk keys create`."
            : table(
                ["ID", "TYPE", "ENV", "NAME", "KEY", "CREATED", "LAST USED"],
                all.map((k) => [k.id, k.type, k.env ?? "-", k.name, k.maskedKey, when(k.createdAt), when(k.lastUsedAt)]),
              ),
        );
        return 0;
      },
    },
    {
      name: "keys create",
      summary: "Mint an SDK key; its secret is printed once, now",
      examples: ["svc sdk keys create", "svc sdk keys create --type browser --env prod --name web", "svc sdk keys create --type client --name web --json"],
      flags: {
        type: {
          type: "string",
          value: "TYPE",
          help: "server (default; SDKs on your servers), browser (web and mobile apps: evaluated flags, events, errors), client (public tickets only) or admin (the admin API)",
        },
        env: { type: "string", value: "ENV", help: "Browser keys: the env the key evaluates (dev, staging or prod; default the project's defaultEnv)" },
        name: { type: "string", value: "NAME", help: "A label to tell keys apart in lists" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const type = oneOf(str(values, "type") ?? "server", KEY_TYPES, "--type");
        const envFlag = str(values, "env");
        const env = envFlag === undefined ? undefined : oneOf(envFlag, ENVS, "--env");
        const created = await dataOf(keys(openClient(values)).post({ type, name: str(values, "name"), ...(env ? { env } : {}) }));
        const bound = created.env ? ` for ${created.env}` : "";
        emit(values.json, created, () =>
          created.type === "browser"
            ? `Created browser key ${created.id}${bound}:\n${created.key}\nIt ships inside your web or mobile app: it reads evaluated flags of ${created.env} and sends events and errors, nothing else. This secret is shown only now.`
            : `Created ${created.type} key ${created.id}${created.name ? ` (${created.name})` : ""}:\n${created.key}\nThis secret is shown only now: store it safely.`,
        );
        return 0;
      },
    },
    {
      name: "keys revoke",
      summary: "Revoke an SDK key by its id; SDKs using it are refused from now on",
      args: ["<id>"],
      examples: ["svc sdk keys revoke key_…", "svc sdk keys revoke key_… --yes"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const id = positionals[0]!;
        // A secret given instead of the id is neither sent (it would sit in a URL) nor echoed: only its masked form.
        refuseSecret(id, "a key", "svc sdk keys list", "svc sdk keys revoke");
        const client = openClient(values);
        await confirmChange(values, client, `Revoke SDK key ${id}? Every SDK using it is refused from now on.`);
        await dataOf(keys(client)({ id: seg(id) }).delete());
        emit(values.json, { id, revoked: true }, () => `Revoked ${id}.`);
        return 0;
      },
    },
  ],
};
