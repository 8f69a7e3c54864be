/** `svc requests`: change requests (four eyes): open, approve or reject (people only), withdraw, apply. */
import type { Static } from "@sinclair/typebox";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, emit, flagFile, openClient, qAndStateQuery, str, table, when } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { UsageError } from "../../lib/config";
import type { ChangeRequestSchema } from "./contract";
import type { requestRoutes } from "./routes";
import { STATES } from "./types";

/** The request routes, typed from their own schemas. */
const requests = (client: SvcClient) => client.api<ReturnType<typeof requestRoutes>>().api.admin.requests;

type ChangeRequest = Static<typeof ChangeRequestSchema>;

function detailText(r: ChangeRequest): string {
  const lines = [`${r.id}  ${r.state}  "${r.title}"  by ${r.author}, ${when(r.createdAt)}`];
  if (r.reason) lines.push(`  reason: ${r.reason}`);
  lines.push(`  approvals: ${r.approvals.length}/${r.approvalsRequired}${r.approvals.length ? ` (${r.approvals.map((a) => a.by).join(", ")})` : ""}`);
  if (r.decidedBy) lines.push(`  decided by: ${r.decidedBy}`);
  if (r.note) lines.push(`  note: ${r.note}`);
  if (r.heldBy) lines.push(`  held by schedule: ${r.heldBy}${r.state === "approved" ? " (it applies it at its time; cancel the schedule to release it)" : ""}`);
  for (const c of r.changes) {
    lines.push(`  ${c.position}. ${c.summary}  (against ${c.fingerprint})`);
    // The diff as one line each (the dashboard shows it side by side): what is published now, then what it proposes.
    if (c.current !== undefined) lines.push(`     published now: ${oneLine(c.current)}`);
    else if (c.currentNote) lines.push(`     published now: (${c.currentNote})`);
    if (c.proposed !== undefined) lines.push(`     proposed:      ${oneLine(c.proposed)}`);
  }
  return lines.join("\n");
}

/** Compact JSON, cut at 300 characters: a terminal line, not the whole value (`--json` has it whole). */
function oneLine(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 300 ? `${text.slice(0, 299)}… (--json for all of it)` : text;
}

const decision = (name: "approve" | "reject" | "withdraw" | "rebase" | "apply", summary: string, done: string): Command => ({
  name,
  summary,
  args: ["<id>"],
  examples: [`svc requests ${name} cr_…`, `svc requests ${name} cr_… --json`],
  flags: { ...(name === "reject" ? { note: { type: "string" as const, value: "TEXT", help: "Why it is rejected (shown to the author)" } } : {}), ...CLIENT_FLAGS },
  async run({ values, positionals }) {
    const one = requests(openClient(values))({ id: seg(positionals[0]!) });
    const r = await dataOf(name === "reject" ? one.reject.post(str(values, "note") === undefined ? {} : { note: str(values, "note") }) : one[name].post());
    emit(values.json, r, () => `${done} ${r.id}: now ${r.state}.\n${detailText(r)}`);
    return 0;
  },
});

export const requestsCommand: Command = {
  name: "requests",
  summary: "Change requests (four eyes): propose changes, have another person approve them, apply them as approved",
  details: [
    "Kinds: killswitch.set, config.publish, config.schema, gate.rules, segment.update (the fields are those of `svc schedules`), rollout.start (the body of POST /api/admin/rollouts), killswitch.create, gate.create, config.create (the create bodies) and definitions.apply (what `svc apply` opens).",
    "`svc requests get` shows each change's published-now value beside the proposed one; the Requests page of the dashboard diffs them line by line.",
    "Only people approve or reject (svc login), never an API token or admin key; the author cannot approve their own.",
    "Apply publishes exactly what was approved; when what it changes moved since it was opened, the request becomes stale.",
  ],
  examples: ["svc requests open --title 'Raise checkout limits' --file changes.json", "svc requests list --state open", "svc requests approve cr_…", "svc requests apply cr_…"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's change requests, newest first",
      examples: ["svc requests list", "svc requests list --state open --json"],
      flags: {
        q: { type: "string", value: "TEXT", help: "Only requests whose id, title, reason or author contains TEXT" },
        state: { type: "string", value: "STATE", help: `Only requests in STATE: ${STATES.join(", ")}` },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const rows = await dataOf(requests(openClient(values)).get({ query: qAndStateQuery(values, STATES) }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No change requests; open one with `svc requests open --title TEXT --file changes.json`."
            : table(
                ["ID", "STATE", "APPROVALS", "AUTHOR", "TITLE"],
                rows.map((r) => [r.id, r.state, `${r.approvals.length}/${r.approvalsRequired}`, r.author, r.title]),
              ),
        );
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show a change request with its changes and approvals",
      args: ["<id>"],
      examples: ["svc requests get cr_…", "svc requests get cr_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const r = await dataOf(requests(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, r, () => detailText(r));
        return 0;
      },
    },
    {
      name: "open",
      summary: "Open a change request from a JSON file of changes",
      details: ["--file holds a JSON array of changes ([{kind, ...fields}, ...]) or an object {changes: [...]}."],
      examples: ["svc requests open --title 'Raise checkout limits' --reason 'Black Friday' --file changes.json", "svc requests open --title 'Kill the new path' --file changes.json --json"],
      flags: {
        title: { type: "string", value: "TEXT", help: "What it does, in a line" },
        reason: { type: "string", value: "TEXT", help: "Why the change is needed (shown to approvers)" },
        file: { type: "string", value: "FILE", help: "The changes as JSON: [{kind, ...}, ...]" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const title = str(values, "title");
        const file = str(values, "file");
        if (title === undefined) throw new UsageError("--title is required");
        if (file === undefined) throw new UsageError("--file is required (a JSON array of changes)");
        let parsed: unknown;
        try {
          parsed = JSON.parse(flagFile(file.startsWith("@") ? file : `@${file}`, "file"));
        } catch (err) {
          if (err instanceof UsageError) throw err;
          throw new UsageError(`--file ${file}: not JSON`);
        }
        const changes = Array.isArray(parsed) ? parsed : (parsed as { changes?: unknown } | null)?.changes;
        if (!Array.isArray(changes)) throw new UsageError(`--file ${file}: expected an array of changes or {changes: [...]}`);
        const body: Record<string, unknown> = { title, changes };
        if (str(values, "reason") !== undefined) body.reason = str(values, "reason");
        const r = await dataOf(requests(openClient(values)).post(body as never));
        emit(values.json, r, () => `Opened ${r.id}; it needs ${r.approvalsRequired} approval(s) from another person.\n${detailText(r)}`);
        return 0;
      },
    },
    decision("approve", "Approve a change request (people only; not your own)", "Approved"),
    decision("reject", "Reject a change request (people only)", "Rejected"),
    decision("withdraw", "Withdraw your own change request", "Withdrew"),
    decision("rebase", "Rebase your stale change request onto what is published now (approved anew)", "Rebased"),
    decision("apply", "Apply an approved change request exactly as approved", "Applied"),
  ],
};
