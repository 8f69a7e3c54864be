import { dataOf } from "../../cli/client";
import type { ArgValues, Command } from "../../cli/command";
import { CLIENT_FLAGS, emit, intFlag, openClient, str, table, when } from "../../cli/client-command";
import type { auditRoutes } from "./routes";

/** A filter flag as the query takes it: left out when not given or empty. */
const filter = (values: ArgValues, name: string) => str(values, name) || undefined;

export const auditCommand: Command = {
  name: "audit",
  summary: "The project's audit trail: who changed what, newest first",
  examples: ["svc audit list", "svc audit list --action killswitch.toggle", "svc audit list --resource member --since 2026-11-01", "svc audit list --action config. --limit 20 --json"],
  subcommands: [
    {
      name: "list",
      summary: "List audit rows, newest first (--before for older pages)",
      examples: [
        "svc audit list",
        "svc audit list --actor ana@example.com --since 2026-11-23T09:00:00Z --until 2026-11-23T18:00:00Z",
        "svc audit list --resource killswitch",
        "svc audit list --resource ksw_4mZpQ7rT2xVb9LcN0aEd",
        "svc audit list --before 120",
      ],
      flags: {
        ...CLIENT_FLAGS,
        action: { type: "string", value: "ACTION", help: "One action (killswitch.toggle) or a prefix ending in '.' (config.)" },
        query: { type: "string", value: "TEXT", help: "Only rows whose subject name or actor email contains TEXT (case-insensitive)" },
        actor: { type: "string", value: "EMAIL", help: "Only rows of this actor: the whole email, case-insensitive (a person, admin-key:…@keys.local, api-token:…@tokens.local)" },
        resource: { type: "string", value: "RESOURCE", help: "A resource type (killswitch, config, key, token, member, session, device, project, …) or one subject's id (ksw_…)" },
        since: { type: "string", value: "TIME", help: "Rows at or after TIME: ISO 8601 (2026-11-23T10:00:00Z, with an offset like +01:00, or a date: midnight UTC)" },
        until: { type: "string", value: "TIME", help: "Rows before TIME (ISO 8601, exclusive)" },
        limit: { type: "string", value: "N", help: "At most N rows, 1 to 500 (default 50)" },
        before: { type: "string", value: "SEQ", help: "Rows older than SEQ: the next-page hint of the previous list" },
      },
      async run({ values }) {
        const limit = intFlag(values.limit, "limit", 1, 500);
        const before = intFlag(values.before, "before", 1, Number.MAX_SAFE_INTEGER);
        // actor, resource, since and until are checked by the server, whose VALIDATION error names the field (printed as it comes).
        const query = {
          limit: limit?.toString(),
          before: before?.toString(),
          action: filter(values, "action"),
          q: filter(values, "query"),
          actor: filter(values, "actor"),
          resource: filter(values, "resource"),
          since: filter(values, "since"),
          until: filter(values, "until"),
        };
        const page = await dataOf(openClient(values).api<ReturnType<typeof auditRoutes>>().api.admin.audit.get({ query }));
        emit(values.json, page, () => {
          if (page.entries.length === 0) return "Nothing recorded.";
          const rows = table(
            ["SEQ", "WHEN", "WHO", "ACTION", "SUBJECT", "ENV"],
            // "(organisation)": a row of the organisation (members, sign-ins), not of this project alone.
            page.entries.map((e) => [String(e.seq), when(e.createdAt), e.actorEmail, e.action, e.subjectName ?? "", e.projectId === null ? "(organisation)" : (e.env ?? "")]),
            { full: ["WHO", "ACTION", "SUBJECT"] },
          );
          return page.nextBefore === null ? rows : `${rows}\nOlder rows: svc audit list --before ${page.nextBefore}`;
        });
        return 0;
      },
    },
  ],
};
