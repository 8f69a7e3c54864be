import { apiOf, call } from "../../../web/dashboard/api";
import type { rolloutRoutes } from "../routes";
// Constants only (types.ts imports nothing at run time): the page and the server share the plan and the limits.
import { DEFAULT_STAGES, ERRORS_METRIC, MAX_INGEST_LAG_MS, MIN_UNITS_PER_GROUP, STATUSES, type Stage } from "../types";

export const rolloutApi = apiOf<ReturnType<typeof rolloutRoutes>>();

export type Rollout = NonNullable<Awaited<ReturnType<typeof rolloutApi.api.admin.rollouts.get>>["data"]>[number];
export type Check = NonNullable<Awaited<ReturnType<ReturnType<typeof rolloutApi.api.admin.rollouts>["checks"]["get"]>>["data"]>[number];
export type MetricCheck = Check["metrics"][number];
export type Status = Rollout["status"];

export { ENVS, type Env } from "../../../lib/envs";
export { DEFAULT_STAGES, ERRORS_METRIC, MAX_INGEST_LAG_MS, MIN_UNITS_PER_GROUP, STATUSES, type Stage };

export const loadRollouts = (query: { q?: string; status?: string } = {}) => call(rolloutApi.api.admin.rollouts.get({ query }));
export const rolloutOf = (id: string) => rolloutApi.api.admin.rollouts({ id });
export const loadChecks = (id: string, limit = 500) => call(rolloutOf(id).checks.get({ query: { limit: String(limit) } }));

/** The rollout's path in the dashboard (by id: a gate or config may have had several rollouts). */
export const rolloutHref = (r: Pick<Rollout, "id">) => `/rollouts/${encodeURIComponent(r.id)}`;

/** Each status in words. */
export const STATUS_TEXT: Record<Status, string> = {
  scheduled: "scheduled",
  running: "running",
  paused: "paused",
  completed: "completed",
  rolled_back: "rolled back",
};

/** The statuses that still serve or wait: the buttons that act on a rollout. */
export const UNFINISHED: readonly Status[] = ["scheduled", "running", "paused"];

/** "60 min", "2 h", "1 h 30 min", "1 d 2 h", "no minimum" (0). */
export function minutesText(minutes: number): string {
  if (minutes === 0) return "no minimum";
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  return [d ? `${d} d` : "", h ? `${h} h` : "", m ? `${m} min` : ""].filter(Boolean).join(" ");
}

/** "1 %", "12.5 %". */
export const pctText = (percent: number) => `${Number(percent.toFixed(2))} %`;

/** Where a stage stands in the rollout: done (passed), current (serving now), next (to come). */
export type StageState = "done" | "current" | "next";
export function stageState(r: Pick<Rollout, "status" | "stage">, i: number): StageState {
  if (r.status === "completed") return "done";
  if (r.status === "scheduled" || r.status === "rolled_back") return i < r.stage ? "done" : "next";
  return i < r.stage ? "done" : i === r.stage ? "current" : "next";
}

/** "stage 2 of 5 (5 %)", the rollout's position in words. */
export function positionText(r: Pick<Rollout, "status" | "stage" | "stages" | "percent">): string {
  const n = r.stages.length;
  if (r.status === "completed") return `completed: all ${n} stages, 100 %`;
  if (r.status === "scheduled") return `not started: stage 1 of ${n} next (${pctText(r.stages[0]!.percent)})`;
  if (r.status === "rolled_back") return `rolled back at stage ${r.stage + 1} of ${n}: 0 %`;
  return `stage ${r.stage + 1} of ${n} (${pctText(r.percent)})`;
}

/** A number for people: 3 significant digits, "−" for minus. */
export function num(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  const text = Number(v.toPrecision(3)).toLocaleString("en", { maximumFractionDigits: 6 });
  return text.replace(/^-/, "−");
}

/** A signed difference: "+0.0123", "−0.5", "0". */
export function signed(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  if (v === 0) return "0";
  return `${v > 0 ? "+" : ""}${num(v)}`;
}

/** "[−0.012, +0.034]", or "n/a" before both groups have enough units. */
export const intervalText = (ci: readonly number[] | null | undefined) => (ci && ci.length === 2 ? `[${signed(ci[0])}, ${signed(ci[1])}]` : "n/a");

/** The difference relative to the old group's mean: "+12.3 %", or "" when that mean is 0 or unknown. */
export function relativeText(estimate: number | null | undefined, oldMean: number | null | undefined): string {
  if (estimate === null || estimate === undefined || !oldMean) return "";
  const rel = (estimate / Math.abs(oldMean)) * 100;
  return `${rel >= 0 ? "+" : "−"}${Math.abs(rel).toFixed(1)} %`;
}

/** "5 % worse tolerated", "no regression tolerated". */
export const toleranceText = (tolerance: number) => (tolerance === 0 ? "none tolerated" : `${Number((tolerance * 100).toFixed(2))} % worse tolerated`);

/** "lower is better". */
export const directionText = (d: "lower" | "higher") => `${d} is better`;

/** The watched metric's name as people read it: the error rate has its own words. */
export const metricLabel = (metric: string) => (metric === ERRORS_METRIC ? "error rate (tracked errors per unit)" : metric);

/** An ingest lag: "0 s", "45 s", "3 min 5 s". */
export function lagText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}

/** What a check decided, in words. */
export const DECISION_TEXT: Record<Check["decision"], string> = {
  none: "nothing to do: the stage's time is not up",
  wait: "waiting: the data is stale or a metric could not be read",
  advance: "advanced to the next stage",
  complete: "completed: published for everyone",
  pause: "paused on a regression",
  rollback: "rolled back on a regression",
  start: "started",
};

/** The request fields a refusal's detail may name, for errorsByPath (web/dashboard/ui.tsx). */
export const ROLLOUT_FIELDS = ["gate", "config", "env", "rules", "value", "stages", "metrics", "errorTolerance", "onRegression", "notify", "falseAlarmRate", "startAt", "description", "reason"] as const;
