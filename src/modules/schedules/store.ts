import { type Queryable, rowsByIdPrefix } from "../../lib/store";
import type { StepState } from "./types";

// The schedules module's own queries (both engines).

export type ScheduleRow = { id: string; project_id: string; state: StepState; summary: string; created_by: string; created_at: string; updated_at: string };
export type StepRow = {
  schedule_id: string;
  step: number | string;
  project_id: string;
  change: string;
  summary: string;
  run_at: string;
  state: StepState;
  ran_at: string | null;
  late_by_ms: number | string | null;
  late: number | string;
  error: string | null;
};

const SCHEDULE_COLUMNS = "id, project_id, state, summary, created_by, created_at, updated_at";
const STEP_COLUMNS = "schedule_id, step, project_id, change, summary, run_at, state, ran_at, late_by_ms, late, error";

export async function insertSchedule(q: Queryable, row: ScheduleRow): Promise<void> {
  await q.run(`INSERT INTO schedules (${SCHEDULE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, row.id, row.project_id, row.state, row.summary, row.created_by, row.created_at, row.updated_at);
}

export async function insertStep(q: Queryable, row: Pick<StepRow, "schedule_id" | "step" | "project_id" | "change" | "summary" | "run_at">): Promise<void> {
  await q.run(
    `INSERT INTO schedule_steps (schedule_id, step, project_id, change, summary, run_at, state) VALUES (?, ?, ?, ?, ?, ?, 'pending')`,
    row.schedule_id,
    Number(row.step),
    row.project_id,
    row.change,
    row.summary,
    row.run_at,
  );
}

/** By id, else by a unique id prefix; within the project only. */
export async function findSchedule(q: Queryable, projectId: string, idOrPrefix: string): Promise<ScheduleRow | undefined> {
  const exact = await q.one<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = ? AND project_id = ?`, idOrPrefix, projectId);
  if (exact) return exact;
  const rows = await rowsByIdPrefix<ScheduleRow>(q, "schedules", SCHEDULE_COLUMNS, projectId, idOrPrefix);
  return rows.length === 1 ? rows[0] : undefined;
}

/** Newest first. */
export function schedulesOf(q: Queryable, projectId: string, state: StepState | undefined, limit: number): Promise<ScheduleRow[]> {
  return state === undefined
    ? q.all<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, projectId, limit)
    : q.all<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE project_id = ? AND state = ? ORDER BY created_at DESC, id DESC LIMIT ?`, projectId, state, limit);
}

export function stepsOf(q: Queryable, scheduleIds: string[]): Promise<StepRow[]> {
  if (scheduleIds.length === 0) return Promise.resolve([]);
  return q.all<StepRow>(`SELECT ${STEP_COLUMNS} FROM schedule_steps WHERE schedule_id IN (${scheduleIds.map(() => "?").join(", ")}) ORDER BY schedule_id, step`, ...scheduleIds);
}

/**
 * Steps whose time has come (`now`, ISO) and whose earlier steps are all finished, oldest first: a ramp's
 * steps run in order even when several are due at once (after downtime).
 */
export function dueSteps(q: Queryable, now: string, limit: number): Promise<Pick<StepRow, "schedule_id" | "step" | "project_id">[]> {
  return q.all(
    `SELECT s.schedule_id, s.step, s.project_id FROM schedule_steps s
     WHERE s.state = 'pending' AND s.run_at <= ?
       AND NOT EXISTS (SELECT 1 FROM schedule_steps e WHERE e.schedule_id = s.schedule_id AND e.step < s.step AND e.state = 'pending')
     ORDER BY s.run_at, s.schedule_id, s.step LIMIT ?`,
    now,
    limit,
  );
}

/** Claims a pending step as done (0 when another server did first, or it was cancelled). */
export function markDone(q: Queryable, scheduleId: string, step: number, ranAt: string, lateByMs: number, late: boolean): Promise<number> {
  return q.run(
    `UPDATE schedule_steps SET state = 'done', ran_at = ?, late_by_ms = ?, late = ? WHERE schedule_id = ? AND step = ? AND state = 'pending'`,
    ranAt,
    lateByMs,
    late ? 1 : 0,
    scheduleId,
    step,
  );
}

export function markFailed(q: Queryable, scheduleId: string, step: number, ranAt: string, lateByMs: number, late: boolean, error: string): Promise<number> {
  return q.run(
    `UPDATE schedule_steps SET state = 'failed', ran_at = ?, late_by_ms = ?, late = ?, error = ? WHERE schedule_id = ? AND step = ? AND state = 'pending'`,
    ranAt,
    lateByMs,
    late ? 1 : 0,
    error,
    scheduleId,
    step,
  );
}

/** Cancels the pending steps (all, or those after `afterStep`); answers which. */
export async function cancelPending(q: Queryable, scheduleId: string, error: string | null, afterStep = 0): Promise<number[]> {
  const rows = await q.all<{ step: number | string }>(`SELECT step FROM schedule_steps WHERE schedule_id = ? AND state = 'pending' AND step > ? ORDER BY step`, scheduleId, afterStep);
  if (rows.length === 0) return [];
  await q.run(`UPDATE schedule_steps SET state = 'cancelled', error = ? WHERE schedule_id = ? AND state = 'pending' AND step > ?`, error, scheduleId, afterStep);
  return rows.map((r) => Number(r.step));
}

export function setScheduleState(q: Queryable, scheduleId: string, state: StepState, updatedAt: string): Promise<number> {
  return q.run(`UPDATE schedules SET state = ?, updated_at = ? WHERE id = ?`, state, updatedAt, scheduleId);
}
