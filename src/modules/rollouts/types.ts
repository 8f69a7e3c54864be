import type { AuditActor } from "../../lib/audit";
import type { Env } from "../../lib/envs";
import type { Interval } from "../experiments/stats/types";

// The rollouts module's shapes, limits, defaults and action names: what its routes, store, CLI and dashboard share.

export const STATUSES = ["scheduled", "running", "paused", "completed", "rolled_back"] as const;
export type RolloutStatus = (typeof STATUSES)[number];

export type Stage = { percent: number; minutes: number };

/**
 * The plan a rollout gets when it names none: 1 %, 5 %, 25 %, 50 % for an
 * hour, two, four and eight, then everyone. Each stage with a control group
 * has the time to gather a few thousand units on a site of modest traffic.
 */
export const DEFAULT_STAGES: Stage[] = [
  { percent: 1, minutes: 60 },
  { percent: 5, minutes: 120 },
  { percent: 25, minutes: 240 },
  { percent: 50, minutes: 480 },
  { percent: 100, minutes: 0 },
];
export const STAGES_MAX = 20;
/** A stage lasts at most 30 days. */
export const STAGE_MINUTES_MAX = 30 * 24 * 60;

/** The error rate every rollout watches: tracked errors per exposed unit (any fingerprint). */
export const ERRORS_METRIC = "errors";
/** Its measure: every `$error:<fingerprint>` event (see namePrefix in src/lib/eventstore/plan.ts). */
export const ERROR_EVENTS = "$error:*";

/**
 * One watched metric. `direction` says which way is better; `tolerance` is
 * the regression tolerated, relative to the old group's mean (0.05: the new
 * value may be up to 5 % worse before it counts as a regression).
 */
export type WatchedMetric = { metric: string; metricId: string | null; direction: "lower" | "higher"; tolerance: number };
export const WATCH_MAX = 10;
export const TOLERANCE_MAX = 10;

export const DEFAULT_FALSE_ALARM_RATE = 0.05;
/**
 * Units each group needs in a stage before a difference is judged: the
 * sequential test's normal approximation is sound from a few hundred units,
 * and a stage of 1 % on a small site may never reach that (it then advances
 * on time, judged at the next stage).
 */
export const MIN_UNITS_PER_GROUP = 200;
/** Data older than this (the ingest lag) holds a stage where it is: it never advances on stale numbers. */
export const MAX_INGEST_LAG_MS = 2 * 60_000;

/** How one watched metric looked at one check of the current stage. */
export type MetricCheck = {
  metric: string;
  direction: WatchedMetric["direction"];
  tolerance: number;
  test: "mean" | "proportion" | "ratio";
  old: { n: number; mean: number | null };
  new: { n: number; mean: number | null };
  /** new − old, with its always-valid confidence sequence (null until both groups have MIN_UNITS_PER_GROUP units and a spread). */
  estimate: number | null;
  interval: Interval | null;
  pValue: number | null;
  /** The level this metric is tested at in this stage (the false alarm rate split over stages and metrics). */
  alpha: number;
  regression: boolean;
};

/** One check of a rollout: its stage, the ingest lag, each metric, and what it decided. */
export type CheckResult = {
  at: string;
  stage: number;
  percent: number;
  ingestLagMs: number;
  stale: boolean;
  metrics: MetricCheck[];
  decision: "none" | "wait" | "advance" | "complete" | "pause" | "rollback" | "start";
  /** A metric that could not be read (deleted, upstream down): the stage holds. */
  problems: string[];
};

/** Why a rollout finished or paused by itself (or who did it by hand). */
export type Outcome = {
  kind: "completed" | "paused" | "rolled_back";
  by: string;
  auto: boolean;
  reason: string | null;
  /** The regression that triggered it (automatic pause or rollback). */
  metric?: string;
  estimate?: number;
  interval?: Interval;
  at: string;
};

export type Rollout = {
  id: string;
  env: Env;
  kind: "gate" | "config";
  /** The gate's or config's name, and its id. */
  subject: string;
  subjectId: string;
  description: string | null;
  /** What it releases: `{rules}` for a gate, `{value}` for a config. */
  change: { rules?: unknown[]; value?: unknown };
  /** What was published when it was created (the old value the control group keeps). */
  previous: { rules?: unknown[]; value?: unknown; version: number };
  stages: Stage[];
  stage: number;
  /** The current stage's percentage (0 while scheduled). */
  percent: number;
  stageStartedAt: string | null;
  status: RolloutStatus;
  startAt: string | null;
  watch: WatchedMetric[];
  onRegression: "pause" | "rollback";
  notify: boolean;
  falseAlarmRate: number;
  outcome: Outcome | null;
  lastCheck: CheckResult | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
};

export const ACTIONS = {
  create: "rollout.create",
  start: "rollout.start",
  advance: "rollout.advance",
  complete: "rollout.complete",
  pause: "rollout.pause",
  resume: "rollout.resume",
  rollback: "rollout.rollback",
  update: "rollout.update",
  delete: "rollout.delete",
} as const;

type Regression = Pick<Outcome, "metric" | "estimate" | "interval">;

/**
 * What the monitor asks of the rollouts service: the moves a check decides. Declared here, so that
 * the monitor, which the service creates, need not import the service (RolloutsService implements it).
 */
export interface RolloutMoves {
  startNow(projectId: string, id: string, actor: AuditActor): Promise<Rollout>;
  moveToStage(projectId: string, id: string, stage: number, actor: AuditActor, fromStage: number | null): Promise<Rollout>;
  complete(projectId: string, id: string, actor: AuditActor, byMonitor?: boolean): Promise<Rollout>;
  pauseOnRegression(projectId: string, id: string, reason: string, regression: Regression): Promise<Rollout>;
  rollback(projectId: string, ref: string, actor: AuditActor, reason: string | null, regression?: Regression): Promise<Rollout>;
  recordCheck(projectId: string, id: string, result: CheckResult): Promise<void>;
}
