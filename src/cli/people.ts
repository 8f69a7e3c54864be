import { UsageError } from "../lib/config";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, refuseSecret, str, table, when } from "./client-command";
import type { Command } from "./command";

type ListedToken = { id: string; name: string; access: "read-only" | "read-write"; maskedToken: string; createdBy: string; createdAt: string };
type MintedToken = { id: string; token: string; name: string; access: string; createdAt: string };
/** `status: "invited"`: invited, not accepted yet (joinedAt null; no access until they accept). */
export type Member = { email: string; role: Role; status?: "active" | "invited"; joinedAt: string | null; expiresAt?: string };
type Invitation = { email: string; role: Role; organisationId: string; organisationName: string; createdAt: string; expiresAt: string };

const ACCESS = ["read-only", "read-write"] as const;
const ROLES = ["owner", "editor", "viewer"] as const;
type Role = (typeof ROLES)[number];

function role(text: unknown, what: string): Role {
  if (!ROLES.includes(text as Role)) throw new UsageError(`${what} must be one of ${ROLES.join(", ")} (got "${text}")`);
  return text as Role;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
function email(text: string): string {
  if (!EMAIL.test(text) || text.length > 254) throw new UsageError(`<email> must be an email address (got "${text}")`);
  return text;
}

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

export const membersCommand: Command = {
  name: "members",
  summary: "People of the project's organisation: list, invite, set-role, remove",
  details: [
    "Roles: viewer reads; editor also writes (killswitches, configs); owner also manages keys, tokens, settings and members. Inviting, re-roling and removing take an owner signed in with `svc login`. The last owner can be neither demoted nor removed.",
  ],
  examples: ["svc members list", "svc members invite dana@example.com --role viewer", "svc members set-role dana@example.com editor"],
  subcommands: [
    {
      name: "list",
      summary: "List the members and their roles",
      examples: ["svc members list", "svc members list --query example.com --json"],
      flags: { query: { type: "string", value: "TEXT", help: "Only members whose email contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const members = await openClient(values).request<Member[]>("GET", `/api/admin/members${q ? `?q=${encodeURIComponent(q)}` : ""}`);
        emit(values.json, members, () => (members.length === 0 ? "No members match." : table(["EMAIL", "ROLE", "JOINED"], members.map((m) => [m.email, m.role, m.joinedAt === null ? `invited, not accepted (until ${when(m.expiresAt ?? "")})` : when(m.joinedAt)]))));
        return 0;
      },
    },
    {
      name: "invite",
      summary: "Invite a person to the organisation: they get a link (valid 7 days) and become a member when they accept it",
      args: ["<email>"],
      examples: ["svc members invite dana@example.com", "svc members invite lee@example.com --role owner"],
      flags: { role: { type: "string", value: "ROLE", help: "owner, editor (default) or viewer" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const address = email(positionals[0]!);
        const r = role(str(values, "role") ?? "editor", "--role");
        const invited = await openClient(values).request<Invitation>("POST", "/api/admin/invites", { body: { email: address, role: r } });
        emit(values.json, invited, () => `Invited ${invited.email} as ${invited.role} of ${invited.organisationName}; they get a link by mail and become a member when they accept it.`);
        return 0;
      },
    },
    {
      name: "set-role",
      summary: "Change a member's role",
      args: ["<email>", "<role>"],
      examples: ["svc members set-role dana@example.com viewer", "svc members set-role lee@example.com owner --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const address = email(positionals[0]!);
        const r = role(positionals[1], "<role>");
        const member = await openClient(values).request<Member>("PATCH", `/api/admin/members/${encodeURIComponent(address)}`, { body: { role: r } });
        emit(values.json, member, () => `${member.email} is now ${member.role}.`);
        return 0;
      },
    },
    {
      name: "remove",
      summary: "Remove a person from the organisation (they lose all of its projects at once)",
      args: ["<email>"],
      examples: ["svc members remove dana@example.com", "svc members remove dana@example.com --yes"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const address = email(positionals[0]!);
        const client = openClient(values);
        await confirmChange(values, client, `Remove ${address} from the organisation? They lose every project of it.`);
        await client.request("DELETE", `/api/admin/members/${encodeURIComponent(address)}`);
        emit(values.json, { email: address, removed: true }, () => `Removed ${address}.`);
        return 0;
      },
    },
  ],
};
