/** `svc members`: the people of the project's organisation, and their invitations. */
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, str, table, when, oneOf } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { identityRoutes } from "./routes";
import { ROLES, type Role } from "./types";

/** The people routes (/api/admin/members, /invites, /me), typed from their own schemas. */
const admin = (client: SvcClient) => client.api<ReturnType<typeof identityRoutes>>().api.admin;

function role(text: unknown, what: string): Role {
  return oneOf(text, ROLES, what);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
function email(text: string): string {
  if (!EMAIL.test(text) || text.length > 254) throw new UsageError(`<email> must be an email address (got "${text}")`);
  return text;
}

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
        // An empty query is left out, as before.
        const members = await dataOf(admin(openClient(values)).members.get({ query: { q: q || undefined } }));
        emit(values.json, members, () => (members.length === 0 ? "No members match." : table(["EMAIL", "ROLE", "JOINED"], members.map((m) => [m.email, m.role, m.joinedAt === null ? `invited, not accepted (until ${when(("expiresAt" in m ? m.expiresAt : undefined) ?? "")})` : when(m.joinedAt)]))));
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
        const invited = await dataOf(admin(openClient(values)).invites.post({ email: address, role: r }));
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
        const member = await dataOf(admin(openClient(values)).members({ email: seg(address) }).patch({ role: r }));
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
        await dataOf(admin(client).members({ email: seg(address) }).delete());
        emit(values.json, { email: address, removed: true }, () => `Removed ${address}.`);
        return 0;
      },
    },
  ],
};
