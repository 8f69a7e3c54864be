import { type Queryable, rowsByIdPrefix } from "../../lib/store";

// The rollouts module's own queries (both engines).

export type RolloutRow = {
  id: string;
  project_id: string;
  env: string;
  kind: string;
  subject_id: string;
  subject_name: string;
  description: string | null;
  /** JSON: `{rules}` (gate) or `{value}` (config): what the rollout releases. */
  change: string;
  /** JSON: what was published when the rollout was created (`{rules, version}` or `{value, version}`). */
  previous: string;
  /** JSON: `[{percent, minutes}]`. */
  stages: string;
  /** Index of the current stage (0 before the start, too). */
  stage: number;
  stage_started_at: string | null;
  status: string;
  start_at: string | null;
  /** JSON: the watched metrics (see WatchedMetric). */
  watch: string;
  on_regression: string;
  notify: number | string;
  false_alarm_rate: number | string;
  salt: string;
  /** JSON, set when it completed, paused by itself or rolled back. */
  outcome: string | null;
  /** JSON: the newest check's result. */
  last_check: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
};

const FIELDS = [
  "id",
  "project_id",
  "env",
  "kind",
  "subject_id",
  "subject_name",
  "description",
  "change",
  "previous",
  "stages",
  "stage",
  "stage_started_at",
  "status",
  "start_at",
  "watch",
  "on_regression",
  "notify",
  "false_alarm_rate",
  "salt",
  "outcome",
  "last_check",
  "created_by",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof RolloutRow)[];
const COLUMNS = FIELDS.join(", ");

/** Statuses of a rollout that still holds its subject (one such rollout per gate or config and env). */
export const ACTIVE_STATUSES = ["scheduled", "running", "paused"] as const;
/** The unfinished rollouts whose stage the snapshot serves (a scheduled one serves nothing yet). */
export const SERVING_STATUSES = ["running", "paused"] as const;
const sqlList = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(", ");
const ACTIVE = sqlList(ACTIVE_STATUSES);
const SERVING = sqlList(SERVING_STATUSES);

export async function rolloutsOfProject(q: Queryable, projectId: string): Promise<RolloutRow[]> {
  return q.all<RolloutRow>(`SELECT ${COLUMNS} FROM rollouts WHERE project_id = ? ORDER BY created_at DESC, id`, projectId);
}

export async function rolloutById(q: Queryable, projectId: string, id: string): Promise<RolloutRow | undefined> {
  return q.one<RolloutRow>(`SELECT ${COLUMNS} FROM rollouts WHERE id = ? AND project_id = ?`, id, projectId);
}

/** Up to two rollouts whose id starts with `prefix`. */
export async function rolloutsByIdPrefix(q: Queryable, projectId: string, prefix: string): Promise<RolloutRow[]> {
  return rowsByIdPrefix<RolloutRow>(q, "rollouts", COLUMNS, projectId, prefix);
}

/** The unfinished rollout of one gate or config on one env, if any. */
export async function activeOn(q: Queryable, projectId: string, kind: string, subjectId: string, env: string): Promise<RolloutRow | undefined> {
  return q.one<RolloutRow>(`SELECT ${COLUMNS} FROM rollouts WHERE project_id = ? AND kind = ? AND subject_id = ? AND env = ? AND status IN (${ACTIVE})`, projectId, kind, subjectId, env);
}

/** Running and paused rollouts of one env (the snapshot: both serve their stage). */
export async function servingOnEnv(q: Queryable, projectId: string, env: string): Promise<RolloutRow[]> {
  return q.all<RolloutRow>(`SELECT ${COLUMNS} FROM rollouts WHERE project_id = ? AND env = ? AND status IN (${SERVING}) ORDER BY id`, projectId, env);
}

/** Every scheduled or running rollout of every project (the monitor's round). */
export async function allDue(q: Queryable): Promise<RolloutRow[]> {
  return q.all<RolloutRow>(`SELECT ${COLUMNS} FROM rollouts WHERE status IN ('scheduled', 'running') ORDER BY project_id, id`);
}

/** Ids of the project's unfinished rollouts that watch a metric (its deletion is refused meanwhile). */
export async function activeWatching(q: Queryable, projectId: string, metricId: string): Promise<string[]> {
  // watch is JSON text; a project has few unfinished rollouts, so they are read and matched here.
  const rows = await q.all<{ id: string; watch: string }>(`SELECT id, watch FROM rollouts WHERE project_id = ? AND status IN (${ACTIVE}) ORDER BY id`, projectId);
  return rows.filter((r) => (JSON.parse(r.watch) as { metricId: string | null }[]).some((w) => w.metricId === metricId)).map((r) => r.id);
}

/** The unfinished rollouts of the gates or configs (`kind`, or both) named `subjectName`: deletion refusals and lookups by name. */
export async function activeFor(q: Queryable, projectId: string, subjectName: string, kind?: string): Promise<RolloutRow[]> {
  const byKind = kind === undefined ? "" : " AND kind = ?";
  return q.all<RolloutRow>(
    `SELECT ${COLUMNS} FROM rollouts WHERE project_id = ? AND subject_name = ?${byKind} AND status IN (${ACTIVE}) ORDER BY id`,
    ...[projectId, subjectName, ...(kind === undefined ? [] : [kind])],
  );
}

/** The unfinished gate rollouts of a project, with their change (the segments their rules name are in use). */
export async function activeGateRollouts(q: Queryable, projectId: string): Promise<Pick<RolloutRow, "id" | "env" | "status" | "subject_name" | "change">[]> {
  return q.all(`SELECT id, env, status, subject_name, change FROM rollouts WHERE project_id = ? AND kind = 'gate' AND status IN (${ACTIVE}) ORDER BY id`, projectId);
}

/** Unfinished rollouts of configs' rules (issue 29): the segments they name are carried and guarded like a gate rollout's. */
export async function activeConfigRollouts(q: Queryable, projectId: string): Promise<Pick<RolloutRow, "id" | "env" | "status" | "subject_name" | "change">[]> {
  return q.all(`SELECT id, env, status, subject_name, change FROM rollouts WHERE project_id = ? AND kind = 'config' AND status IN (${ACTIVE}) ORDER BY id`, projectId);
}

export async function insertRollout(q: Queryable, row: RolloutRow): Promise<void> {
  await q.run(`INSERT INTO rollouts (${COLUMNS}) VALUES (${FIELDS.map(() => "?").join(", ")})`, ...FIELDS.map((f) => row[f]));
}

/** Writes every field but the id, project, subject, salt, creation and the last check (recordCheck's alone). */
export async function updateRollout(q: Queryable, row: RolloutRow): Promise<void> {
  const changing = FIELDS.filter((f) => !["id", "project_id", "kind", "subject_id", "salt", "created_by", "created_at", "last_check"].includes(f));
  await q.run(`UPDATE rollouts SET ${changing.map((f) => `${f} = ?`).join(", ")} WHERE id = ?`, ...changing.map((f) => row[f]), row.id);
}

export async function deleteRollout(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM rollout_checks WHERE rollout_id = ?", id);
  await q.run("DELETE FROM rollouts WHERE id = ?", id);
}

export type CheckRow = { seq: number | string; at: string; stage: number | string; result: string };

/** Checks kept per rollout: at one a minute, the last 2 days in full. */
export const CHECKS_KEPT = 3000;

/** The rollout's latest check (the monitor's memory of the sequential test; insertCheck keeps the history). */
export async function setLastCheck(q: Queryable, rolloutId: string, result: string): Promise<void> {
  await q.run("UPDATE rollouts SET last_check = ? WHERE id = ?", result, rolloutId);
}

export async function insertCheck(q: Queryable, rolloutId: string, at: string, stage: number, result: string): Promise<void> {
  await q.run("INSERT INTO rollout_checks (rollout_id, at, stage, result) VALUES (?, ?, ?, ?)", rolloutId, at, stage, result);
  // Trim at checks whose minute is a multiple of ten (about one in ten at the default pace), not at every insert.
  if (Number(at.slice(14, 16)) % 10 === 0) {
    await q.run(
      "DELETE FROM rollout_checks WHERE rollout_id = ? AND seq < (SELECT MIN(seq) FROM (SELECT seq FROM rollout_checks WHERE rollout_id = ? ORDER BY seq DESC LIMIT ?) AS kept)",
      rolloutId,
      rolloutId,
      CHECKS_KEPT,
    );
  }
}

/** The newest checks first. */
export async function checksOf(q: Queryable, rolloutId: string, limit: number): Promise<CheckRow[]> {
  return q.all<CheckRow>("SELECT seq, at, stage, result FROM rollout_checks WHERE rollout_id = ? ORDER BY seq DESC LIMIT ?", rolloutId, limit);
}
