import type { Queryable } from "../../lib/store";

// The segments module's own queries (both engines).

export type SegmentRow = {
  id: string;
  name: string;
  description: string;
  attribute: string;
  conditions: string;
  id_count: number;
  created_at: string;
  updated_at: string;
};

/** The whole row: `ids` is the JSON text of up to 100,000 ids, read only where they are shown or published. */
export type SegmentRowWithIds = SegmentRow & { ids: string };

const COLUMNS = "id, name, description, attribute, conditions, id_count, created_at, updated_at";

export async function segmentsOfProject(q: Queryable, projectId: string): Promise<SegmentRow[]> {
  return q.all<SegmentRow>(`SELECT ${COLUMNS} FROM segments WHERE project_id = ? ORDER BY name`, projectId);
}

/** Whether the project has any segment (one index probe). */
export async function hasSegments(q: Queryable, projectId: string): Promise<boolean> {
  return (await q.one(`SELECT 1 AS x FROM segments WHERE project_id = ? LIMIT 1`, projectId)) !== undefined;
}

/** By id, else by name, within the project only. */
export async function findSegment(q: Queryable, projectId: string, idOrName: string): Promise<SegmentRowWithIds | undefined> {
  return (
    (await q.one<SegmentRowWithIds>(`SELECT ${COLUMNS}, ids FROM segments WHERE id = ? AND project_id = ?`, idOrName, projectId)) ??
    (await q.one<SegmentRowWithIds>(`SELECT ${COLUMNS}, ids FROM segments WHERE name = ? AND project_id = ?`, idOrName, projectId))
  );
}

export async function segmentByName(q: Queryable, projectId: string, name: string): Promise<SegmentRowWithIds | undefined> {
  return q.one<SegmentRowWithIds>(`SELECT ${COLUMNS}, ids FROM segments WHERE name = ? AND project_id = ?`, name, projectId);
}

export async function insertSegment(q: Queryable, projectId: string, s: SegmentRowWithIds): Promise<void> {
  await q.run(
    `INSERT INTO segments (${COLUMNS}, ids, project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    s.id,
    s.name,
    s.description,
    s.attribute,
    s.conditions,
    s.id_count,
    s.created_at,
    s.updated_at,
    s.ids,
    projectId,
  );
}

export async function updateSegment(q: Queryable, s: SegmentRowWithIds): Promise<void> {
  await q.run(
    "UPDATE segments SET name = ?, description = ?, attribute = ?, conditions = ?, ids = ?, id_count = ?, updated_at = ? WHERE id = ?",
    s.name,
    s.description,
    s.attribute,
    s.conditions,
    s.ids,
    s.id_count,
    s.updated_at,
    s.id,
  );
}

export async function deleteSegment(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM segments WHERE id = ?", id);
}
