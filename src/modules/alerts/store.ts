import type { Queryable } from "../../lib/store";

// The alerts module's own queries (both engines).

export type AlertRuleRow = {
  id: string;
  project_id: string;
  name: string;
  metric_id: string;
  threshold: number | string;
  comparator: string;
  window_hours: number | string;
  enabled: number | string;
  /** The delivery target as JSON; null: the project default. */
  notify: string | null;
  state: "ok" | "firing";
  last_value: number | string | null;
  last_checked_at: string | null;
  last_transition_at: string | null;
  created_at: string;
  updated_at: string;
};

const COLUMNS =
  "id, project_id, name, metric_id, threshold, comparator, window_hours, enabled, notify, state, last_value, last_checked_at, last_transition_at, created_at, updated_at";

export async function rulesOfProject(q: Queryable, projectId: string): Promise<AlertRuleRow[]> {
  return q.all<AlertRuleRow>(`SELECT ${COLUMNS} FROM alert_rules WHERE project_id = ? ORDER BY name`, projectId);
}

/** Every enabled rule of every project (the evaluator's round). */
export async function enabledRules(q: Queryable): Promise<AlertRuleRow[]> {
  return q.all<AlertRuleRow>(`SELECT ${COLUMNS} FROM alert_rules WHERE enabled = 1 ORDER BY project_id, id`);
}

/** By id, else by name, within the project only. */
export async function findRule(q: Queryable, projectId: string, idOrName: string): Promise<AlertRuleRow | undefined> {
  return (
    (await q.one<AlertRuleRow>(`SELECT ${COLUMNS} FROM alert_rules WHERE id = ? AND project_id = ?`, idOrName, projectId)) ??
    (await q.one<AlertRuleRow>(`SELECT ${COLUMNS} FROM alert_rules WHERE name = ? AND project_id = ?`, idOrName, projectId))
  );
}

export async function ruleNamesUsingMetric(q: Queryable, projectId: string, metricId: string): Promise<string[]> {
  return (await q.all<{ name: string }>("SELECT name FROM alert_rules WHERE project_id = ? AND metric_id = ? ORDER BY name", projectId, metricId)).map((r) => r.name);
}

/** Names of the project's rules whose notify names this connector. */
export async function ruleNamesNotifying(q: Queryable, projectId: string, connectorId: string): Promise<string[]> {
  // notify is JSON text; a project has few rules, so they are read and matched here rather than by a JSON operator per engine.
  const rows = await q.all<{ name: string; notify: string }>("SELECT name, notify FROM alert_rules WHERE project_id = ? AND notify IS NOT NULL ORDER BY name", projectId);
  return rows.filter((r) => (JSON.parse(r.notify) as { connectorId?: string }).connectorId === connectorId).map((r) => r.name);
}

export async function insertRule(q: Queryable, r: AlertRuleRow): Promise<void> {
  await q.run(
    `INSERT INTO alert_rules (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id,
    r.project_id,
    r.name,
    r.metric_id,
    Number(r.threshold),
    r.comparator,
    Number(r.window_hours),
    Number(r.enabled),
    r.notify,
    r.state,
    r.last_value === null ? null : Number(r.last_value),
    r.last_checked_at,
    r.last_transition_at,
    r.created_at,
    r.updated_at,
  );
}

/** The fields people set (and the state, which disabling resets). */
export async function updateRuleSettings(q: Queryable, r: AlertRuleRow): Promise<void> {
  await q.run(
    "UPDATE alert_rules SET threshold = ?, comparator = ?, window_hours = ?, enabled = ?, notify = ?, state = ?, updated_at = ? WHERE id = ?",
    Number(r.threshold),
    r.comparator,
    Number(r.window_hours),
    Number(r.enabled),
    r.notify,
    r.state,
    r.updated_at,
    r.id,
  );
}

/** An evaluation's outcome: the value seen, when, and the state (with its transition time when it changed). */
export async function recordCheck(q: Queryable, id: string, check: { value: number; checkedAt: string; state?: "ok" | "firing" }): Promise<void> {
  if (check.state === undefined) {
    await q.run("UPDATE alert_rules SET last_value = ?, last_checked_at = ? WHERE id = ?", check.value, check.checkedAt, id);
  } else {
    await q.run("UPDATE alert_rules SET last_value = ?, last_checked_at = ?, state = ?, last_transition_at = ? WHERE id = ?", check.value, check.checkedAt, check.state, check.checkedAt, id);
  }
}

export async function deleteRule(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM alert_rules WHERE id = ?", id);
}
