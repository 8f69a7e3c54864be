/** `svc tokens`: the project's API tokens for CI. */
import { UsageError } from "../../lib/config";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, refuseSecret, str, table, when } from "../../cli/client-command";
import type { Command } from "../../cli/command";

type ListedToken = { id: string; name: string; access: "read-only" | "read-write"; maskedToken: string; createdBy: string; createdAt: string };
type MintedToken = { id: string; token: string; name: string; access: string; createdAt: string };

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
        const tokens = await openClient(values).request<ListedToken[]>("GET", "/api/admin/tokens");
        emit(values.json, tokens, () =>
          tokens.length === 0
            ? "No API tokens; create one with `svc tokens create <name>`."
            : table(["ID", "NAME", "ACCESS", "TOKEN", "CREATED BY", "CREATED"], tokens.map((t) => [t.id, t.name, t.access, t.maskedToken, t.createdBy, when(t.createdAt)]), {
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
        const access = str(values, "access") ?? "read-only";
        if (!ACCESS.includes(access as (typeof ACCESS)[number])) throw new UsageError(`--access must be one of ${ACCESS.join(", ")} (got "${access}")`);
        const minted = await openClient(values).request<MintedToken>("POST", "/api/admin/tokens", { body: { name: positionals[0], access } });
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
        await client.request("DELETE", `/api/admin/tokens/${encodeURIComponent(id)}`);
        emit(values.json, { id, revoked: true }, () => `Revoked token ${id}.`);
        return 0;
      },
    },
  ],
};
