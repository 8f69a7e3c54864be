import { type Queryable, rowsByIdPrefix } from "../../lib/store";

// The metrics module's own queries (both engines).

export type MetricRow = {
  id: string;
  name: string;
  description: string | null;
  kind: string;
  /** The checked definition as JSON (see compile.ts `MetricDefinition`). */
  definition: string;
  created_at: string;
  updated_at: string;
};

const COLUMNS = "id, name, description, kind, definition, created_at, updated_at";

export async function metricsOfProject(q: Queryable, projectId: string): Promise<MetricRow[]> {
  return q.all<MetricRow>(`SELECT ${COLUMNS} FROM metrics WHERE project_id = ? ORDER BY name`, projectId);
}

export async function metricById(q: Queryable, projectId: string, id: string): Promise<MetricRow | undefined> {
  return q.one<MetricRow>(`SELECT ${COLUMNS} FROM metrics WHERE id = ? AND project_id = ?`, id, projectId);
}

export async function metricByName(q: Queryable, projectId: string, name: string): Promise<MetricRow | undefined> {
  return q.one<MetricRow>(`SELECT ${COLUMNS} FROM metrics WHERE name = ? AND project_id = ?`, name, projectId);
}

/** Up to two metrics whose id starts with `prefix` (compared as text: no LIKE, so `_` is only an underscore). */
export async function metricsByIdPrefix(q: Queryable, projectId: string, prefix: string): Promise<MetricRow[]> {
  return rowsByIdPrefix<MetricRow>(q, "metrics", COLUMNS, projectId, prefix);
}

export async function insertMetric(q: Queryable, projectId: string, m: MetricRow): Promise<void> {
  await q.run(
    `INSERT INTO metrics (${COLUMNS}, project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    m.id,
    m.name,
    m.description,
    m.kind,
    m.definition,
    m.created_at,
    m.updated_at,
    projectId,
  );
}

export async function updateMetric(q: Queryable, m: MetricRow): Promise<void> {
  await q.run("UPDATE metrics SET name = ?, description = ?, kind = ?, definition = ?, updated_at = ? WHERE id = ?", m.name, m.description, m.kind, m.definition, m.updated_at, m.id);
}

export async function deleteMetric(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM metrics WHERE id = ?", id);
}
