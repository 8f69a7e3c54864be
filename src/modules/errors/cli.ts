import { type SvcClient, dataOf, seg } from "../../cli/client";
import type { errorRoutes } from "./routes";
import type { ErrorStatus, OccurrenceFrame, SettableStatus, TrackedError, TrackedErrorDetail } from "./types";
import { CLIENT_FLAGS, QUERY_FLAG, emit, openClient, str, table, when, oneOf } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import { WINDOW_FLAGS, seriesText, windowFlags } from "../metrics/cli";

// `svc errors`: tracked production errors. (src/cli/errors.ts is how the CLI itself reports failures.)

/** The tracked errors' admin routes, typed from their own schemas. */
const errors = (client: SvcClient) => client.api<ReturnType<typeof errorRoutes>>().api.admin.errors;
/** One error's routes: its id, id prefix or fingerprint, as one path segment. */
const one = (client: SvcClient, ref: string) => errors(client)({ id: seg(ref) });

/** Every status, with what it means (a Record, so a status the server adds is a compile error here). */
const STATUSES: Record<ErrorStatus, string> = {
  unresolved: "new, or reopened",
  resolved: "fixed; happening again makes it regressed",
  ignored: "stays ignored whatever happens",
  regressed: "resolved, then it happened again",
};
const STATUS_NAMES = Object.keys(STATUSES) as ErrorStatus[];

function statusFlag(value: string | undefined): ErrorStatus | undefined {
  if (value === undefined) return undefined;
  return oneOf(value, STATUS_NAMES, "--status");
}

const ID_ARG = "<id>";
const ID_DETAIL = "<id> is the error's id (err_…), a unique prefix of it (at least 6 characters) or its fingerprint; `svc errors list` shows them.";

/** `TypeError: Cannot read properties of undefined`, on one line. */
const titleOf = (e: Pick<TrackedError, "type" | "message">) => `${e.type}: ${e.message}`;
const shortTitle = (e: TrackedError) => {
  const title = titleOf(e);
  return title.length > 80 ? `${title.slice(0, 79)}…` : title;
};

/** Frames people see in `svc errors get`; --json has every frame of every kept occurrence. */
const FRAMES_SHOWN = 5;

/** A frame as a JavaScript stack line: `at fn (file:line:col)`. */
function frameLine(f: OccurrenceFrame): string {
  const where = `${f.filename ?? f.absPath ?? f.module ?? "?"}${f.lineno !== undefined ? `:${f.lineno}${f.colno !== undefined ? `:${f.colno}` : ""}` : ""}`;
  return f.function ? `at ${f.function} (${where})` : `at ${where}`;
}

/** The latest kept occurrence: when, unit, release, environment, tags, and its top in-app frames (else its top frames). */
function latestText(e: TrackedErrorDetail): string[] {
  const o = e.occurrences[0];
  if (!o) return [];
  const about = [when(o.ts), o.unitId && `unit ${o.unitId}`, o.release && `release ${o.release}`, o.environment && `environment ${o.environment}`].filter(Boolean).join(", ");
  const tags = Object.entries(o.tags).map(([k, v]) => `${k}=${v}`);
  const inApp = o.frames.filter((f) => f.inApp === true);
  const shown = (inApp.length > 0 ? inApp : o.frames).slice(0, FRAMES_SHOWN);
  const rest = o.frames.length - shown.length + o.framesOmitted;
  return [
    `  latest:      ${about}`,
    ...(tags.length > 0 ? [`  tags:        ${tags.join(", ")}`] : []),
    ...(shown.length > 0 ? [`  ${inApp.length > 0 ? "in-app frames" : "frames"} of the latest occurrence, innermost first:`, ...shown.map((f) => `    ${frameLine(f)}`)] : []),
    ...(rest > 0 ? [`    (${rest} more frame(s); --json shows every frame of the ${e.occurrences.length} kept occurrence(s))`] : []),
  ];
}

function errorText(e: TrackedError | TrackedErrorDetail): string {
  const changed = e.statusChangedAt ? ` (since ${when(e.statusChangedAt)}${e.statusChangedBy ? ` by ${e.statusChangedBy}` : ""})` : "";
  return [
    `${e.id}: ${titleOf(e)}`,
    `  status:      ${e.status}${changed}`,
    `  culprit:     ${e.culprit ?? "-"}`,
    `  occurrences: ${e.count}`,
    `  units:       ${e.affectedUnits}`,
    `  first seen:  ${when(e.firstSeenAt)}`,
    `  last seen:   ${when(e.lastSeenAt)}`,
    `  fingerprint: ${e.fingerprint}`,
    ...("occurrences" in e ? latestText(e) : []),
  ].join("\n");
}

/** resolve, ignore, reopen: one status each. */
function statusCommand(name: string, status: SettableStatus, summary: string, done: string): Command {
  return {
    name,
    summary,
    args: [ID_ARG],
    details: [ID_DETAIL],
    examples: [`svc errors ${name} err_4Qk2mX9pLr7TzV1bN8cW`, `svc errors ${name} err_4Qk2mX --json`],
    flags: { ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const e = await dataOf(one(openClient(values), positionals[0]!).patch({ status }));
      emit(values.json, e, () => `${done} ${e.id} (${shortTitle(e)}): it is ${e.status} now.`);
      return 0;
    },
  };
}

export const trackedErrorsCommand: Command = {
  name: "errors",
  summary: "Tracked production errors: list, get, resolve, ignore, reopen, series",
  details: [
    "SDKs report errors with POST /api/sdk/v1/errors, and Sentry SDKs through their DSN (the server key): occurrences are grouped by fingerprint into one tracked error each.",
    `Statuses: ${STATUS_NAMES.map((s) => `${s} (${STATUSES[s]})`).join(", ")}.`,
  ],
  examples: ["svc errors list --status unresolved", "svc errors resolve err_4Qk2mX", "svc errors series err_4Qk2mX --from 7d --bucket 1d"],
  subcommands: [
    {
      name: "list",
      summary: "List tracked errors, most recently seen first",
      examples: ["svc errors list", "svc errors list --status regressed", "svc errors list --query timeout --json"],
      flags: {
        status: { type: "string", value: "STATUS", help: `Only errors with this status: ${STATUS_NAMES.join(", ")}` },
        query: { ...QUERY_FLAG, help: "Only errors whose type or message contains TEXT (case-insensitive)" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const status = statusFlag(str(values, "status"));
        const q = str(values, "query");
        // An empty query is left out, as before.
        const all = await dataOf(errors(openClient(values)).get({ query: { status, q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) {
            if (status || q) return `No ${status ?? ""}${status ? " " : ""}errors${q ? ` match "${q}"` : ""}.`;
            return "No errors yet: nothing was reported with POST /api/sdk/v1/errors or a Sentry SDK.";
          }
          return table(
            ["ID", "STATUS", "COUNT", "UNITS", "LAST SEEN", "ERROR"],
            all.map((e) => [e.id, e.status, e.count, e.affectedUnits, when(e.lastSeenAt), shortTitle(e)]),
            { full: ["ID", "ERROR"] },
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one error: status and who set it, culprit, occurrences, affected units, first and last seen, and the latest occurrence's top in-app frames",
      args: [ID_ARG],
      details: [ID_DETAIL, "--json adds every kept occurrence (the last 20 and a sample of 5 older ones), each with all its frames, context lines, tags, release, environment and unit."],
      examples: ["svc errors get err_4Qk2mX9pLr7TzV1bN8cW", "svc errors get err_4Qk2mX --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const e = await dataOf(one(openClient(values), positionals[0]!).get());
        emit(values.json, e, () => errorText(e));
        return 0;
      },
    },
    statusCommand("resolve", "resolved", "Mark an error resolved (if it happens again it becomes regressed)", "Resolved"),
    statusCommand("ignore", "ignored", "Ignore an error (new occurrences are counted, and it stays ignored)", "Ignored"),
    statusCommand("reopen", "unresolved", "Set an error back to unresolved", "Reopened"),
    {
      name: "series",
      summary: "An error's occurrences over time: a table of buckets and a sparkline (--json: the server's {sql, rows})",
      args: [ID_ARG],
      details: [
        ID_DETAIL,
        "Buckets start at --from and are --bucket wide; every bucket is listed, empty ones 0. Times back from now (24h, 7d) and the defaults are rounded to whole buckets of the UTC clock.",
      ],
      examples: ["svc errors series err_4Qk2mX", "svc errors series err_4Qk2mX --from 7d --bucket 1d", "svc errors series err_4Qk2mX --from 2026-11-01 --to 2026-11-02 --bucket 15m --json"],
      flags: { ...WINDOW_FLAGS, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const window = windowFlags(values);
        const client = openClient(values);
        if (values.json) {
          emit(true, await dataOf(one(client, positionals[0]!).series.post(window)), () => "");
          return 0;
        }
        const e = await dataOf(one(client, positionals[0]!).get());
        const series = await dataOf(one(client, e.id).series.post(window));
        emit(false, series, () => seriesText(`${e.id} (${shortTitle(e)})`, window, series.rows, { total: true }));
        return 0;
      },
    },
  ],
};
