import type { Queryable } from "../../lib/store";

// The universes module's own queries (both engines).

export type UniverseRow = {
  id: string;
  name: string;
  unit_type: string;
  holdout_start: number | null;
  holdout_end: number | null;
  salt: string;
  created_at: string;
  updated_at: string;
};

const COLUMNS = "id, name, unit_type, holdout_start, holdout_end, salt, created_at, updated_at";

export async function universesOfProject(q: Queryable, projectId: string): Promise<UniverseRow[]> {
  return q.all<UniverseRow>(`SELECT ${COLUMNS} FROM universes WHERE project_id = ? ORDER BY name`, projectId);
}

/** By id, else by name, within the project only. */
export async function findUniverse(q: Queryable, projectId: string, idOrName: string): Promise<UniverseRow | undefined> {
  return (
    (await q.one<UniverseRow>(`SELECT ${COLUMNS} FROM universes WHERE id = ? AND project_id = ?`, idOrName, projectId)) ??
    (await q.one<UniverseRow>(`SELECT ${COLUMNS} FROM universes WHERE name = ? AND project_id = ?`, idOrName, projectId))
  );
}

export async function universeByName(q: Queryable, projectId: string, name: string): Promise<UniverseRow | undefined> {
  return q.one<UniverseRow>(`SELECT ${COLUMNS} FROM universes WHERE name = ? AND project_id = ?`, name, projectId);
}

export async function insertUniverse(q: Queryable, projectId: string, u: UniverseRow): Promise<void> {
  await q.run(
    `INSERT INTO universes (${COLUMNS}, project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    u.id,
    u.name,
    u.unit_type,
    u.holdout_start,
    u.holdout_end,
    u.salt,
    u.created_at,
    u.updated_at,
    projectId,
  );
}

export async function updateUniverse(q: Queryable, u: UniverseRow): Promise<void> {
  await q.run(
    "UPDATE universes SET name = ?, holdout_start = ?, holdout_end = ?, updated_at = ? WHERE id = ?",
    u.name,
    u.holdout_start,
    u.holdout_end,
    u.updated_at,
    u.id,
  );
}

export async function deleteUniverse(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM universes WHERE id = ?", id);
}
