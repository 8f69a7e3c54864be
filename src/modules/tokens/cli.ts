/** `svc tokens`: the project's API tokens for CI. */
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, refuseSecret, str, table, when } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { tokenRoutes } from "./routes";

/** The API token routes, typed from their own schemas. */
const tokens = (client: SvcClient) => client.api<ReturnType<typeof tokenRoutes>>().api.admin.tokens;

const ACCESS = ["read-only", "read-write"] as const;

export const tokensCommand: Command = {
  name: "tokens",
  summary: "Project API tokens for CI (SERVICE_CLI_TOKEN): list, create, revoke",
  details: ["Tokens are read-only or read-write and belong to one project. Creating and revoking them takes an owner (signed in with `svc login`); a token itself can only list them."],
  examples: ["svc tokens list", "svc tokens create ci-deploy --access read-write", "svc tokens revoke tok_…"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's live API tokens (masked; the secret is never shown again)",
      examples: ["svc tokens list", "svc tokens list --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values }) {
        const live = await dataOf(tokens(openClient(values)).get());
        emit(values.json, live, () =>
          live.length === 0
            ? "No API tokens; create one with `svc tokens create <name>`."
            : table(["ID", "NAME", "ACCESS", "TOKEN", "CREATED BY", "CREATED"], live.map((t) => [t.id, t.name, t.access, t.maskedToken, t.createdBy, when(t.createdAt)]), {
                full: ["ID", "NAME", "CREATED BY"],
              }),
        );
        return 0;
      },
    },
    {
      name: "create",
      summary: "Mint an API token; its secret is printed once, now",
      args: ["<name>"],
      examples: ["svc tokens create ci", "svc tokens create deploy --access read-write --json"],
      flags: {
        access: { type: "string", value: "ACCESS", help: "read-only (default: reads only, every write is FORBIDDEN) or read-write" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const access = (str(values, "access") ?? "read-only") as (typeof ACCESS)[number];
        if (!ACCESS.includes(access)) throw new UsageError(`--access must be one of ${ACCESS.join(", ")} (got "${access}")`);
        const minted = await dataOf(tokens(openClient(values)).post({ name: positionals[0]!, access }));
        emit(values.json, minted, () =>
          [
            `Created ${minted.access} token ${minted.id} (${minted.name}):`,
            minted.token,
            "This secret is shown only now: store it safely. Use it as SERVICE_CLI_TOKEN; `svc tokens revoke " + minted.id + "` ends it.",
          ].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "revoke",
      summary: "Revoke an API token by its id; calls with it fail from now on",
      args: ["<id>"],
      examples: ["svc tokens revoke tok_…", "svc tokens revoke tok_… --yes"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const id = positionals[0]!;
        refuseSecret(id, "a token", "svc tokens list", "svc tokens revoke");
        const client = openClient(values);
        await confirmChange(values, client, `Revoke API token ${id}? Anything using it stops working.`);
        await dataOf(tokens(client)({ id: seg(id) }).delete());
        emit(values.json, { id, revoked: true }, () => `Revoked token ${id}.`);
        return 0;
      },
    },
  ],
};
