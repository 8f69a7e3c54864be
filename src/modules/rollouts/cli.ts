// One file: the `svc rollouts` noun; most of it is the text of a rollout (stages, checks, metrics) that only this noun prints.
import { readFileSync } from "node:fs";
import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { CheckSchema, CreateRolloutBody, RolloutSchema } from "./contract";
import type { rolloutRoutes } from "./routes";
import { DEFAULT_STAGES, ERRORS_METRIC, MAX_INGEST_LAG_MS, MIN_UNITS_PER_GROUP, STAGES_MAX, TOLERANCE_MAX } from "./types";
import type { GateRule } from "../../sdk/gates";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, YES_FLAG, confirmChange, emit, jsonFlag, list, openClient, requiredEnv, str, table, when, deleteCommand } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";
import { ruleBody } from "../gates/cli";

type Rollout = Static<typeof RolloutSchema>;
type RolloutStatus = Rollout["status"];
type CheckResult = Static<typeof CheckSchema>;
type MetricCheck = CheckResult["metrics"][number];
type CreateBody = Static<typeof CreateRolloutBody>;
type Stage = NonNullable<CreateBody["stages"]>[number];

/** The rollout routes, typed from their own schemas. */
const rollouts = (client: SvcClient) => client.api<ReturnType<typeof rolloutRoutes>>().api.admin.rollouts;

/** Every status with what it means (a Record, so a status the server adds is a compile error here). */
const STATUSES: Record<RolloutStatus, string> = {
  scheduled: "waits for its start time",
  running: "serves its current stage; the monitor compares both groups every minute",
  paused: "serves its current stage; nothing advances until it resumes",
  completed: "the change is published for everyone",
  rolled_back: "every unit has the old value again",
};
const STATUS_NAMES = Object.keys(STATUSES) as RolloutStatus[];
const DEFAULT_PLAN = DEFAULT_STAGES.map((s) => `${s.percent}:${s.minutes}`).join(",");

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

const STAGES_HELP = `PERCENT:MINUTES,… growing percentages, the last 100, each with its least minutes (default ${DEFAULT_PLAN})`;
const METRIC_HELP = `NAME:lower|higher[:TOLERANCE]: a metric to watch besides the error rate, which way is better, and the regression tolerated relative to the old group's mean (0.05 or 5%; default 0); repeat it for several`;

/** `1:60,5:120,100:0` → stages (a stage's shape is checked here, the plan's rules by the server). */
export function stagesFlag(text: string): Stage[] {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length === 0 || parts.length > STAGES_MAX || parts.some((p) => p === "")) throw new UsageError(`--stages must be 1 to ${STAGES_MAX} PERCENT:MINUTES separated by commas, e.g. --stages ${DEFAULT_PLAN} (got "${text}")`);
  return parts.map((p) => {
    const m = /^(\d+(?:\.\d+)?)\s*%?\s*:\s*(\d+)$/.exec(p);
    if (!m) throw new UsageError(`--stages: "${p}" is not PERCENT:MINUTES (whole minutes), e.g. 25:240 for 25 % of units for at least 4 hours`);
    return { percent: Number(m[1]), minutes: Number(m[2]) };
  });
}

/** `5%` → 0.05, `0.05` → 0.05. */
function toleranceOf(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  const n = m ? Number(m[1]) / (m[2] ? 100 : 1) : Number.NaN;
  if (!(n >= 0 && n <= TOLERANCE_MAX)) throw new UsageError(`${flag}: the tolerance must be a fraction from 0 to ${TOLERANCE_MAX} or a percentage (0.05 or 5% = 5 % worse), got "${text}"`);
  return Number(n.toPrecision(12));
}

/** `checkout-conversion:higher:0.02` → {metric, direction, tolerance}. */
export function metricFlag(text: string): { metric: string; direction: "lower" | "higher"; tolerance?: number } {
  const m = /^(.+?):(lower|higher)(?::([^:]+))?$/.exec(text);
  if (!m) throw new UsageError(`--metric must be NAME:lower|higher[:TOLERANCE], e.g. --metric checkout-conversion:higher:2% (got "${text}")`);
  if (m[1] === ERRORS_METRIC) throw new UsageError("--metric errors: the error rate is always watched; set its tolerance with --error-tolerance");
  return { metric: m[1]!, direction: m[2] as "lower" | "higher", ...(m[3] !== undefined ? { tolerance: toleranceOf(m[3], `--metric ${m[1]}`) } : {}) };
}

function statusFlag(value: string | undefined): RolloutStatus | undefined {
  if (value === undefined) return undefined;
  if (!STATUS_NAMES.includes(value as RolloutStatus)) throw new UsageError(`--status must be one of ${STATUS_NAMES.join(", ")} (got "${value}")`);
  return value as RolloutStatus;
}

/** A JSON list of rules, or an object with a `rules` list (what `svc gates get NAME --json` prints per env). */
function rulesOf(parsed: unknown, flag: string): unknown[] {
  if (Array.isArray(parsed)) return parsed;
  if (typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { rules?: unknown }).rules)) return (parsed as { rules: unknown[] }).rules;
  throw new UsageError(`${flag} must hold a JSON list of rules (or an object with a "rules" list), got ${parsed === null ? "null" : typeof parsed}`);
}

/** --rules-file FILE or --rules JSON|@FILE: the gate's new rules. */
function rulesFlags(values: ArgValues): unknown[] | undefined {
  const file = str(values, "rules-file");
  const inline = str(values, "rules");
  if (file !== undefined && inline !== undefined) throw new UsageError("give --rules-file FILE or --rules JSON, not both");
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`--rules-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    try {
      return rulesOf(JSON.parse(text), `--rules-file ${file}`);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--rules-file ${file}: not JSON (${(err as Error).message})`);
    }
  }
  if (inline !== undefined) return rulesOf(jsonFlag(inline, "rules"), "--rules");
  return undefined;
}

/** The create request the flags describe (every mistake a usage error before anything is sent). */
export function createBody(values: ArgValues): CreateBody {
  const gate = str(values, "gate");
  const config = str(values, "config");
  if ((gate === undefined) === (config === undefined)) throw new UsageError("give exactly one of --gate NAME (with --rules-file FILE) or --config NAME (with --value JSON, or its env's draft)");
  const env = requiredEnv(values.env);
  const body: CreateBody = { env };
  const rules = rulesFlags(values);
  if (gate !== undefined) {
    if (values.value !== undefined) throw new UsageError("--value is for --config: a gate's rollout takes --rules-file FILE");
    if (rules === undefined) throw new UsageError("--gate needs its new rules: --rules-file FILE (a JSON list of rules, as `svc gates set-rules` takes)");
    body.gate = gate;
    body.rules = rules;
  } else {
    if (rules !== undefined) throw new UsageError("--rules-file is for --gate: a config's rollout takes --value JSON (or its env's draft)");
    body.config = config;
    if (values.value !== undefined) body.value = jsonFlag(values.value, "value");
  }
  const stages = str(values, "stages");
  if (stages !== undefined) body.stages = stagesFlag(stages);
  const metrics = list(values, "metric").map(metricFlag);
  const seen = new Set<string>();
  for (const m of metrics) {
    if (seen.has(m.metric)) throw new UsageError(`--metric ${m.metric} is given twice`);
    seen.add(m.metric);
  }
  if (metrics.length) body.metrics = metrics;
  const errorTolerance = str(values, "error-tolerance");
  if (errorTolerance !== undefined) body.errorTolerance = toleranceOf(errorTolerance, "--error-tolerance");
  const onRegression = str(values, "on-regression");
  if (onRegression !== undefined) {
    if (onRegression !== "pause" && onRegression !== "rollback") throw new UsageError(`--on-regression must be pause or rollback (got "${onRegression}")`);
    body.onRegression = onRegression;
  }
  if (values["no-notify"]) body.notify = false;
  const falseAlarm = str(values, "false-alarm-rate");
  if (falseAlarm !== undefined) {
    const n = /^\d*\.?\d+$/.test(falseAlarm) ? Number(falseAlarm) : Number.NaN;
    if (!(n > 0 && n <= 0.5)) throw new UsageError(`--false-alarm-rate must be a number above 0, at most 0.5 (got "${falseAlarm}")`);
    body.falseAlarmRate = n;
  }
  const startAt = str(values, "start-at");
  if (startAt !== undefined) {
    if (!Number.isFinite(Date.parse(startAt)) || !/^\d{4}-\d{2}-\d{2}T/.test(startAt)) throw new UsageError(`--start-at must be an ISO 8601 time such as 2026-11-24T09:00:00Z (got "${startAt}")`);
    body.startAt = startAt;
  }
  const description = str(values, "description");
  if (description) body.description = description;
  return body;
}

// ---------------------------------------------------------------------------
// Human output
// ---------------------------------------------------------------------------

const pct = (p: number) => `${Number(p.toFixed(2))} %`;

/** "1 h", "2 h 30 min", "no minimum". */
export function minutesText(minutes: number): string {
  if (minutes === 0) return "no minimum";
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  return [d ? `${d} d` : "", h ? `${h} h` : "", m ? `${m} min` : ""].filter(Boolean).join(" ");
}

/** A number for people: 4 significant digits, a real minus sign. */
function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return String(Number(x.toPrecision(4))).replace(/^-/, "−");
}
const signed = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? "-" : x > 0 ? `+${num(x)}` : num(x));
const intervalText = (ci: readonly number[] | null | undefined) => (ci && ci.length === 2 ? `[${signed(ci[0])}, ${signed(ci[1])}]` : "-");
const metricName = (m: string) => (m === ERRORS_METRIC ? "errors (per unit)" : m);
const toleranceText = (t: number) => (t === 0 ? "0" : `${Number((t * 100).toFixed(2))} %`);
function lagText(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}

/** Where each stage stands: done, current (▶, or ‖ while paused), or to come. */
function stageMark(r: Pick<Rollout, "status" | "stage">, i: number): "done" | "current" | "next" {
  if (r.status === "completed") return "done";
  if (r.status === "scheduled" || r.status === "rolled_back") return i < r.stage ? "done" : "next";
  return i < r.stage ? "done" : i === r.stage ? "current" : "next";
}

/**
 * The stage bar as text: `[✓ 1 % 1 h] → [✓ 5 % 2 h] → [▶ 25 % 4 h] → [ 50 % 8 h] → [ 100 %]`:
 * ✓ done, ▶ current (‖ when paused), nothing for the stages to come.
 */
export function stageBar(r: Pick<Rollout, "status" | "stage" | "stages">): string {
  return r.stages
    .map((s, i) => {
      const mark = stageMark(r, i);
      const sign = mark === "done" ? "✓ " : mark === "current" ? (r.status === "paused" ? "‖ " : "▶ ") : " ";
      return `[${sign}${pct(s.percent)}${s.minutes > 0 ? ` ${minutesText(s.minutes)}` : ""}]`;
    })
    .join(" → ");
}

/** "stage 2 of 5 (5 %)", the position in words. */
export function positionText(r: Pick<Rollout, "status" | "stage" | "stages" | "percent">): string {
  const n = r.stages.length;
  if (r.status === "completed") return `completed: all ${n} stages, 100 %`;
  if (r.status === "scheduled") return `not started: stage 1 of ${n} next (${pct(r.stages[0]!.percent)})`;
  if (r.status === "rolled_back") return `rolled back at stage ${r.stage + 1} of ${n}: 0 %`;
  return `stage ${r.stage + 1} of ${n} (${pct(r.percent)})${r.status === "paused" ? ", paused" : ""}`;
}

function outcomeText(r: Rollout): string {
  const o = r.outcome;
  if (!o) return "-";
  const what = o.kind === "completed" ? "completed" : o.kind === "paused" ? "paused" : "rolled back";
  const by = o.auto ? `${what} automatically (${o.by})` : `${what} by ${o.by}`;
  return `${by} ${when(o.at)}${o.reason ? `: ${o.reason}` : ""}`;
}

const DECISIONS: Record<CheckResult["decision"], string> = {
  none: "nothing to do (the stage's time is not up)",
  wait: "wait (stale data or a metric could not be read)",
  advance: "advance to the next stage",
  complete: "complete (publish for everyone)",
  pause: "pause on a regression",
  rollback: "roll back on a regression",
  start: "start",
};

function metricsTable(metrics: MetricCheck[]): string {
  return table(
    ["METRIC", "BETTER", "TOLERATED", "UNITS WITHOUT/WITH", "MEAN WITHOUT/WITH", "DIFFERENCE", "INTERVAL", "VERDICT"],
    metrics.map((m) => [
      metricName(m.metric),
      m.direction,
      toleranceText(m.tolerance),
      `${m.old.n}/${m.new.n}`,
      `${num(m.old.mean)}/${num(m.new.mean)}`,
      signed(m.estimate),
      intervalText(m.interval),
      m.regression ? "REGRESSION" : m.estimate !== null ? "ok" : Math.min(m.old.n, m.new.n) < MIN_UNITS_PER_GROUP ? `too few units (${MIN_UNITS_PER_GROUP} a group)` : "no spread yet",
    ]),
    { full: ["METRIC", "INTERVAL"] },
  );
}

/** The last check: when, the stage, the ingest lag (STALE over the limit), what it decided, each metric's difference and interval. */
function checkText(c: CheckResult): string[] {
  const stale = c.stale || c.ingestLagMs > MAX_INGEST_LAG_MS;
  const lines = [
    `Last check ${when(c.at)}: stage ${c.stage + 1} (${pct(c.percent)}), ingest lag ${lagText(c.ingestLagMs)}${stale ? " (STALE: the stage holds)" : ""}, decision: ${DECISIONS[c.decision] ?? c.decision}`,
  ];
  for (const p of c.problems) lines.push(`  problem: ${p}`);
  if (c.metrics.length === 0) lines.push(c.percent >= 100 ? "No comparison at 100 % (judged up to the stage before)." : "No comparison at this stage.");
  else lines.push(metricsTable(c.metrics));
  return lines;
}

function changeLines(r: Rollout): string[] {
  if (r.kind === "gate") {
    const rules = (x: unknown[] | undefined) => ((x ?? []) as GateRule[]).map((rule, i) => `    ${i + 1}. ${ruleBody(rule)}`);
    const before = rules(r.previous.rules);
    const after = rules(r.change.rules);
    return [`  before:      version ${r.previous.version}${before.length ? "" : ", no rules"}`, ...before, `  change:      ${after.length ? `${after.length} rule${after.length === 1 ? "" : "s"}` : "no rules"}`, ...after];
  }
  return [`  before:      version ${r.previous.version}: ${JSON.stringify(r.previous.value)}`, `  change:      ${JSON.stringify(r.change.value)}`];
}

export function rolloutText(r: Rollout): string {
  const stage = r.stages[r.stage];
  const lines = [
    `${r.subject} (${r.kind}) on ${r.env}: ${r.status} (${r.id})`,
    `  description: ${r.description ?? "-"}`,
    `  stages:      ${stageBar(r)}`,
    `  position:    ${positionText(r)}`,
  ];
  if ((r.status === "running" || r.status === "paused") && r.stageStartedAt && stage) {
    const at = new Date(Date.parse(r.stageStartedAt) + stage.minutes * 60_000).toISOString();
    lines.push(`  stage began: ${when(r.stageStartedAt)}${r.status === "running" && stage.minutes > 0 ? `; ${r.stage >= r.stages.length - 1 ? "completes" : "advances"} no sooner than ${when(at)}` : ""}`);
  }
  if (r.status === "scheduled") lines.push(`  starts:      ${when(r.startAt) || "-"}`);
  lines.push(
    ...changeLines(r),
    `  watching:    ${r.watch.map((w) => `${metricName(w.metric)} (${w.direction} is better, ${toleranceText(w.tolerance)} tolerated)`).join("; ")}`,
    `  action:      ${r.onRegression === "rollback" ? "roll back" : "pause"} on a regression; connectors ${r.notify ? "told" : "not told"}; false alarm rate ${pct(r.falseAlarmRate * 100)}`,
  );
  if (r.outcome) {
    lines.push(`  outcome:     ${outcomeText(r)}`);
    if (r.outcome.metric !== undefined) lines.push(`  regression:  ${metricName(r.outcome.metric)} difference ${signed(r.outcome.estimate)} ${intervalText(r.outcome.interval)}`);
  }
  lines.push(`  created:     ${when(r.createdAt)} by ${r.createdBy}`, `  updated:     ${when(r.updatedAt)}`, "");
  lines.push(...(r.lastCheck ? checkText(r.lastCheck) : ["Not checked yet (the monitor checks running rollouts every minute)."]));
  return lines.join("\n");
}

/** What an action did, in one line. */
function doneText(verb: string, r: Rollout): string {
  return `${verb} the rollout of ${r.kind} ${r.subject} on ${r.env}: ${positionText(r)}.\n  ${stageBar(r)}`;
}

// ---------------------------------------------------------------------------
// The noun
// ---------------------------------------------------------------------------

const REF = "<rollout>";
const REF_HELP = "A rollout is named by its id, a unique id prefix, or the name of the gate or config it rolls out (while it is unfinished).";
const REASON_FLAG = { type: "string", value: "TEXT", help: "Why, kept with the outcome and in the audit trail" } as const;

export const rolloutsCommand: Command = {
  name: "rollouts",
  summary: "Guarded rollouts of a gate's rules or a config's value in stages: list, get, create, pause, resume, advance, rollback, delete",
  details: [
    "A rollout releases a gate's new rules or a config's new value on one env in stages (a percentage of units and a least duration each); every minute the monitor compares the units that have the change with those that do not, on the error rate (tracked errors per unit, always watched) and the metrics named, with an always-valid sequential test. A regression pauses or rolls back by itself; otherwise a stage advances when its time is up and the data is fresh, and after the last (100 %) the change is published for everyone.",
    `Statuses: ${STATUS_NAMES.map((s) => `${s} (${STATUSES[s]})`).join("; ")}.`,
    REF_HELP,
  ],
  examples: [
    "svc rollouts create --gate new-checkout --rules-file rules.json --env prod --metric checkout-conversion:higher:2%",
    "svc rollouts list --status running",
    "svc rollouts get new-checkout",
    "svc rollouts rollback new-checkout --reason 'support tickets'",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's rollouts, newest first, with env, status and stage",
      details: [`Statuses: ${STATUS_NAMES.join(", ")}.`],
      examples: ["svc rollouts list", "svc rollouts list --status running", "svc rollouts list --query checkout --json"],
      flags: {
        query: { ...QUERY_FLAG, help: "Only rollouts whose gate or config name, description or id contains TEXT (case-insensitive)" },
        status: { type: "string", value: "STATUS", help: `Only rollouts in this state: ${STATUS_NAMES.join(", ")}` },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const q = str(values, "query");
        const status = statusFlag(str(values, "status"));
        const all = await dataOf(rollouts(openClient(values)).get({ query: { q: q || undefined, status } }));
        emit(values.json, all, () => {
          if (all.length === 0) {
            if (q || status) return `No rollouts match${q ? ` "${q}"` : ""}${status ? ` with status ${status}` : ""}.`;
            return "No rollouts yet; start one with `svc rollouts create --gate NAME --rules-file FILE --env prod`.";
          }
          return table(
            ["SUBJECT", "KIND", "ENV", "STATUS", "STAGE", "PERCENT", "CREATED", "ID"],
            all.map((r) => [r.subject, r.kind, r.env, r.status, `${Math.min(r.stage + 1, r.stages.length)}/${r.stages.length}`, pct(r.percent), when(r.createdAt), r.id]),
            { full: ["SUBJECT", "ID"] },
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one rollout: the stage bar, the change, the watched metrics, the outcome and the last check's differences",
      args: [REF],
      details: [REF_HELP, "The last check shows per watched metric the units without and with the change, their means, and the difference (with − without, per unit) with its always-valid interval; a REGRESSION is an interval wholly beyond the tolerated change on the worse side."],
      examples: ["svc rollouts get new-checkout", "svc rollouts get rol_4Kd8 --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const r = await dataOf(rollouts(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, r, () => rolloutText(r));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Start (or schedule) a guarded rollout of a gate's new rules or a config's new value",
      details: [
        "--gate NAME with --rules-file FILE (a JSON list of rules, or an object with a \"rules\" list), or --config NAME with --value JSON (or @FILE; without it, the config's draft on the env).",
        `--stages: ${STAGES_HELP}.`,
        `--metric: ${METRIC_HELP}.`,
        "One rollout per gate or config and env at a time (409 otherwise).",
      ],
      examples: [
        "svc rollouts create --gate new-checkout --rules-file rules.json --env prod",
        "svc rollouts create --gate new-checkout --rules-file rules.json --env prod --stages 10:30,50:60,100:0 --metric checkout-conversion:higher:2% --on-regression pause",
        "svc rollouts create --config search-limits --env prod --value '{\"perMinute\":120}' --start-at 2026-11-24T09:00:00Z --json",
      ],
      flags: {
        gate: { type: "string", value: "NAME", help: "The gate whose new rules it rolls out (name or id)" },
        "rules-file": { type: "string", value: "FILE", help: "The gate's new rules: a JSON list of rules" },
        rules: { type: "string", value: "JSON", help: "The gate's new rules inline (or @FILE), instead of --rules-file" },
        config: { type: "string", value: "NAME", help: "The config whose new value it rolls out (name or id)" },
        value: { type: "string", value: "JSON", help: "The config's new value (or @FILE); default its draft on the env" },
        env: { type: "string", value: "ENV", help: "The env: dev, staging or prod (required)" },
        stages: { type: "string", value: "PLAN", help: STAGES_HELP },
        metric: { type: "string", value: "NAME:DIR[:TOL]", multiple: true, help: METRIC_HELP },
        "error-tolerance": { type: "string", value: "TOL", help: "Rise of the error rate tolerated, relative (0.1 or 10%; default 0)" },
        "on-regression": { type: "string", value: "ACTION", help: "rollback (default) or pause" },
        "no-notify": { type: "boolean", help: "Do not tell the project's connectors (rollout.* events)" },
        "false-alarm-rate": { type: "string", value: "RATE", help: "Chance that a harmless change is stopped, over the whole rollout (default 0.05)" },
        "start-at": { type: "string", value: "TIME", help: "ISO 8601 time to start at (scheduled until then); default now" },
        description: { type: "string", value: "TEXT", help: "What the change is, shown in lists" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const body = createBody(values);
        const r = await dataOf(rollouts(openClient(values)).post(body));
        emit(values.json, r, () => {
          const head = r.status === "scheduled" ? `Scheduled the rollout of ${r.kind} ${r.subject} on ${r.env} (${r.id}) for ${when(r.startAt)}.` : `Started the rollout of ${r.kind} ${r.subject} on ${r.env} (${r.id}): ${positionText(r)}.`;
          return `${head}\n  ${stageBar(r)}\n  watching ${r.watch.map((w) => metricName(w.metric)).join(", ")}; on a regression: ${r.onRegression === "rollback" ? "roll back" : "pause"}.\nFollow it with \`svc rollouts get ${r.id}\`.`;
        });
        return 0;
      },
    },
    {
      name: "pause",
      summary: "Pause a running rollout: units keep what the current stage gives them; nothing advances",
      args: [REF],
      details: [REF_HELP],
      examples: ["svc rollouts pause new-checkout --reason 'checking logs'", "svc rollouts pause rol_4Kd8 --json"],
      flags: { reason: REASON_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const reason = str(values, "reason");
        const r = await dataOf(rollouts(openClient(values))({ id: seg(positionals[0]!) }).pause.post(reason ? { reason } : {}));
        emit(values.json, r, () => doneText("Paused", r));
        return 0;
      },
    },
    {
      name: "resume",
      summary: "Resume a paused rollout: the current stage's minutes count again from now",
      args: [REF],
      details: [REF_HELP],
      examples: ["svc rollouts resume new-checkout", "svc rollouts resume rol_4Kd8 --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const r = await dataOf(rollouts(openClient(values))({ id: seg(positionals[0]!) }).resume.post());
        emit(values.json, r, () => doneText("Resumed", r));
        return 0;
      },
    },
    {
      name: "advance",
      summary: "Advance now: a scheduled rollout starts; a running or paused one moves to its next stage, or completes after the last",
      args: [REF],
      details: [REF_HELP, "Completing publishes the change for everyone (a new version of the gate's rules or the config's value), without waiting for the monitor."],
      examples: ["svc rollouts advance new-checkout", "svc rollouts advance rol_4Kd8 --yes --json"],
      flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const current = await dataOf(rollouts(client)({ id: seg(positionals[0]!) }).get());
        const next = current.stages[current.stage + 1];
        const what =
          current.status === "scheduled"
            ? `start it now at ${pct(current.stages[0]!.percent)}`
            : next && (current.status === "running" || current.status === "paused")
              ? `move it to stage ${current.stage + 2} (${pct(next.percent)} of units)`
              : `complete it: the change is published for everyone on ${current.env}`;
        await confirmChange(values, client, `Advance the rollout of ${current.kind} ${current.subject} on ${current.env} now and ${what}?`);
        const r = await dataOf(rollouts(client)({ id: seg(current.id) }).advance.post());
        emit(values.json, r, () => doneText(r.status === "completed" ? "Completed" : "Advanced", r));
        return 0;
      },
    },
    {
      name: "rollback",
      summary: "Roll back now: every unit gets the old value again (a new snapshot revision, audited, connectors told)",
      args: [REF],
      details: [REF_HELP, "A rolled back rollout cannot restart: create another."],
      examples: ["svc rollouts rollback new-checkout --reason 'support tickets'", "svc rollouts rollback rol_4Kd8 --yes --json"],
      flags: { reason: REASON_FLAG, yes: YES_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const reason = str(values, "reason");
        const client = openClient(values);
        const current = await dataOf(rollouts(client)({ id: seg(positionals[0]!) }).get());
        await confirmChange(values, client, `Roll back the rollout of ${current.kind} ${current.subject} on ${current.env}? Every unit gets the old ${current.kind === "gate" ? "rules" : "value"} again.`);
        const r = await dataOf(rollouts(client)({ id: seg(current.id) }).rollback.post(reason ? { reason } : {}));
        emit(values.json, r, () => `Rolled back the rollout of ${r.kind} ${r.subject} on ${r.env}: every unit gets the old ${r.kind === "gate" ? "rules" : "value"} again.${r.outcome?.reason ? `\n  reason: ${r.outcome.reason}` : ""}`);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a finished or scheduled rollout (a running or paused one: roll it back first)",
      args: [REF],
      details: [REF_HELP],
      examples: ["svc rollouts delete rol_4Kd8", "svc rollouts delete rol_4Kd8 --yes --json"],
      question: (ref) => `Delete rollout ${ref}? It and its checks go; the audit trail keeps what it did.`,
      remove: async (client, ref) => await dataOf(rollouts(client)({ id: seg(ref) }).delete()),
      done: (ref) => [{ rollout: ref, deleted: true }, `Deleted rollout ${ref}.`],
    }),
  ],
};
