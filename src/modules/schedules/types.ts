/** The schedules feature's own types and limits, shared by its service, runner and store (the store imports no service). */
import type { ChangeTarget, StoredChange } from "../../lib/changes";
import type { Env } from "../../lib/envs";

/** pending → done | failed (with the error) | cancelled; a schedule's state sums its steps' (see scheduleState). */
export const STATES = ["pending", "done", "failed", "cancelled"] as const;
export type StepState = (typeof STATES)[number];

/** Steps of one ramp. */
export const STEPS_MAX = 20;
/** A runAt this far in the past is refused (a little is allowed: the clocks of the CLI and the servers differ). */
export const PAST_GRACE_MS = 60_000;
/** How far ahead a step may be scheduled. */
export const AHEAD_MAX_MS = 366 * 24 * 3_600_000;
/** How often each server looks for due steps unless AppOptions.schedulesEveryMs says otherwise. */
export const SCHEDULES_EVERY_MS = 5_000;
/** A step that ran more than one round plus this after its time ran late (no server was running at its time). */
export const LATE_GRACE_MS = 1_000;
export const LIST_MAX = 500;

export const ACTIONS = { create: "schedule.create", cancel: "schedule.cancel", run: "schedule.run", fail: "schedule.fail" } as const;

export type Step = {
  /** 1-based, in run order. */
  step: number;
  change: StoredChange;
  kind: string;
  target: ChangeTarget;
  env: Env | null;
  summary: string;
  runAt: string;
  state: StepState;
  ranAt: string | null;
  /** How long after runAt it ran (set once it ran). */
  lateByMs: number | null;
  /** Ran later than its servers' rounds explain (downtime): the audit row says so too. */
  late: boolean;
  /** Why it failed, or why it was not run. */
  error: string | null;
};

export type Schedule = {
  id: string;
  state: StepState;
  summary: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  /** The next pending step's time. */
  nextRunAt: string | null;
  steps: Step[];
};

export type CreateInput = { change?: unknown; runAt?: string; steps?: { change: unknown; runAt: string }[] };
