/** `svc schedules`: scheduled changes (a toggle, a config value, gate rules, a segment patch) and ramps of them. */
import { UsageError } from "../../lib/config";
import { parseDuration } from "../../lib/backups";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, flagFile, jsonFlag, openClient, qAndStateQuery, str, table, when } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { Static } from "@sinclair/typebox";
import type { ScheduleSchema } from "./contract";
import type { scheduleRoutes } from "./routes";
import { STATES } from "./types";

/** The schedule routes, typed from their own schemas. */
const schedules = (client: SvcClient) => client.api<ReturnType<typeof scheduleRoutes>>().api.admin.schedules;

/** The API's answer (the contract's ScheduleSchema). */
type Schedule = Static<typeof ScheduleSchema>;

/** `--at`: an ISO 8601 time with its zone, or `+DURATION` from now (`+30m`, `+1d`, `+1h30m`). */
export function atFlag(text: string | undefined, flag = "at"): string | undefined {
  if (text === undefined) return undefined;
  if (text.startsWith("+")) {
    const ms = parseDuration(text.slice(1));
    if (ms === undefined) throw new UsageError(`--${flag} +DURATION takes d, h, m and s (+30m, +1d, +1h30m); got "${text}"`);
    return new Date(Date.now() + ms).toISOString();
  }
  if (!/^\d{4}-\d{2}-\d{2}T.*(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) || !Number.isFinite(Date.parse(text))) {
    throw new UsageError(`--${flag} must be an ISO 8601 time with its zone (2026-12-01T09:00:00Z) or +DURATION (+30m); got "${text}"`);
  }
  return text;
}

function lateText(lateByMs: number | null): string {
  if (lateByMs === null) return "";
  const min = Math.round(lateByMs / 60_000);
  return min >= 60 ? `${Math.floor(min / 60)} h ${min % 60} min late` : min >= 1 ? `${min} min late` : `${Math.round(lateByMs / 1000)} s late`;
}

function detailText(s: Schedule): string {
  const lines = [`${s.id}  ${s.state}  by ${s.createdBy}, ${when(s.createdAt)}`, `  ${s.summary}`];
  for (const step of s.steps) {
    const late = step.late ? ` (ran ${lateText(step.lateByMs)}: no server was running at its time)` : "";
    const ran = step.ranAt ? `, ran ${when(step.ranAt)}${late}` : "";
    lines.push(`  ${step.step}. ${when(step.runAt)}  ${step.state.padEnd(9)} ${step.summary}${ran}${step.error ? `: ${step.error}` : ""}`);
  }
  return lines.join("\n");
}

export const schedulesCommand: Command = {
  name: "schedules",
  summary: "Scheduled changes: a toggle, a config value, gate rules or a segment patch at a time, or a ramp of them",
  details: [
    "Kinds: killswitch.set {name, env, value, switchKey?}; config.publish {name, env, value, rules?}; gate.rules {name, env, rules}; segment.update {name, patch}.",
    "Each step runs once across every server; a step whose time passed while no server ran runs on the next start and is marked late.",
  ],
  examples: [
    "svc schedules create --at 2026-12-01T09:00:00Z --kind killswitch.set --body '{\"name\":\"checkout\",\"env\":\"prod\",\"value\":true}'",
    "svc schedules create --file ramp.json",
    "svc schedules list --state pending",
    "svc schedules cancel sch_…",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's schedules, newest first",
      examples: ["svc schedules list", "svc schedules list --state pending --json", "svc schedules list --q checkout"],
      flags: {
        q: { type: "string", value: "TEXT", help: "Only schedules whose id, summary or author contains TEXT" },
        state: { type: "string", value: "STATE", help: `Only schedules in STATE: ${STATES.join(", ")}` },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const rows = await dataOf(schedules(openClient(values)).get({ query: qAndStateQuery(values, STATES) }));
        emit(values.json, rows, () =>
          rows.length === 0
            ? "No schedules; create one with `svc schedules create --at TIME --kind KIND --body JSON`."
            : table(
                ["ID", "STATE", "NEXT RUN", "STEPS", "SUMMARY"],
                rows.map((s) => [s.id, s.state + (s.steps.some((x) => x.late) ? " (late)" : ""), when(s.nextRunAt), `${s.steps.filter((x) => x.state !== "pending").length}/${s.steps.length}`, s.summary]),
              ),
        );
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show a schedule and each step's state, time, lateness and error",
      args: ["<id>"],
      examples: ["svc schedules get sch_…", "svc schedules get sch_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const s = await dataOf(schedules(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, s, () => detailText(s));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Schedule one change (--at, --kind, --body) or a ramp (--file with {steps: [{change, runAt}, ...]})",
      details: [
        "--file holds the request's JSON: {change: {kind, ...}, runAt} or {steps: [...]}; --at fills runAt of a single change. --body and --file take @FILE too.",
        "The change is checked now: what the gate, config, killswitch or segment would refuse is refused here.",
      ],
      examples: [
        "svc schedules create --at +1h --kind gate.rules --body '{\"name\":\"new-checkout\",\"env\":\"prod\",\"rules\":[{\"conditions\":[],\"passPercentage\":25}]}'",
        "svc schedules create --file ramp.json --json",
      ],
      flags: {
        at: { type: "string", value: "TIME", help: "When: ISO 8601 with its zone (2026-12-01T09:00:00Z), or +DURATION from now (+30m, +1d)" },
        kind: { type: "string", value: "KIND", help: "killswitch.set, config.publish, gate.rules or segment.update" },
        body: { type: "string", value: "JSON", help: "The kind's fields as JSON, or @FILE" },
        file: { type: "string", value: "FILE", help: "The whole request as JSON: {change, runAt} or {steps: [{change, runAt}, ...]}" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const at = atFlag(str(values, "at"));
        const kind = str(values, "kind");
        const file = str(values, "file");
        let request: Record<string, unknown>;
        if (file !== undefined) {
          if (kind !== undefined || values.body !== undefined) throw new UsageError("--file holds the whole request: not with --kind or --body");
          const text = flagFile(file.startsWith("@") ? file : `@${file}`, "file");
          try {
            request = JSON.parse(text) as Record<string, unknown>;
          } catch {
            throw new UsageError(`--file ${file}: not JSON`);
          }
          if (request === null || typeof request !== "object" || Array.isArray(request)) throw new UsageError(`--file ${file}: expected an object {change, runAt} or {steps: [...]}`);
          if (at !== undefined) {
            if (request.steps !== undefined) throw new UsageError("--at goes with a single change; a ramp's steps carry their own runAt");
            request = { ...request, runAt: at };
          }
        } else {
          if (kind === undefined) throw new UsageError("--kind is required (or --file)");
          if (at === undefined) throw new UsageError("--at is required (or --file with runAt)");
          const body = values.body === undefined ? {} : jsonFlag(values.body, "body");
          if (body === null || typeof body !== "object" || Array.isArray(body)) throw new UsageError("--body must be a JSON object of the kind's fields");
          request = { change: { ...(body as Record<string, unknown>), kind }, runAt: at };
        }
        const created = await dataOf(schedules(openClient(values)).post(request as never));
        emit(values.json, created, () => `Scheduled ${created.id}${created.steps.length > 1 ? ` (${created.steps.length} steps)` : ""}, first at ${when(created.nextRunAt)} UTC.\n${detailText(created)}`);
        return 0;
      },
    },
    {
      name: "cancel",
      summary: "Cancel a schedule's pending steps (steps that ran stay)",
      args: ["<id>"],
      examples: ["svc schedules cancel sch_…", "svc schedules cancel sch_… --yes --json"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const id = positionals[0]!;
        const client = openClient(values);
        await confirmChange(values, client, `Cancel the pending steps of schedule ${id}?`);
        const s = await dataOf(schedules(client)({ id: seg(id) }).delete());
        emit(values.json, s, () => `Cancelled ${s.steps.filter((x) => x.state === "cancelled").length} step(s) of ${s.id}.\n${detailText(s)}`);
        return 0;
      },
    },
  ],
};
