import { type Queryable, rowsByIdPrefix } from "../../lib/store";

export type CatalogRow = {
  id: string;
  name: string;
  folder: string;
  description: string;
  /** JSON array of `{name, type, required, description}`. */
  properties: string;
  pending: number;
  created_at: string;
  updated_at: string;
  last_seen_at: string | null;
};

const COLUMNS = "id, name, folder, description, properties, pending, created_at, updated_at, last_seen_at";

export async function catalogOfProject(q: Queryable, projectId: string): Promise<CatalogRow[]> {
  return q.all<CatalogRow>(`SELECT ${COLUMNS} FROM event_catalog WHERE project_id = ? ORDER BY name`, projectId);
}

export async function catalogEventByName(q: Queryable, projectId: string, name: string): Promise<CatalogRow | undefined> {
  return q.one<CatalogRow>(`SELECT ${COLUMNS} FROM event_catalog WHERE project_id = ? AND name = ?`, projectId, name);
}

/** By exact id, then exact name, then a unique id prefix (two or more matches: none). */
export async function findCatalogEvent(q: Queryable, projectId: string, ref: string): Promise<CatalogRow | undefined> {
  const exact =
    (await q.one<CatalogRow>(`SELECT ${COLUMNS} FROM event_catalog WHERE project_id = ? AND id = ?`, projectId, ref)) ??
    (await catalogEventByName(q, projectId, ref));
  if (exact || !ref.startsWith("evt_")) return exact;
  const rows = await rowsByIdPrefix<CatalogRow>(q, "event_catalog", COLUMNS, projectId, ref);
  return rows.length === 1 ? rows[0] : undefined;
}

export async function insertCatalogEvent(q: Queryable, projectId: string, r: CatalogRow): Promise<void> {
  await q.run(
    `INSERT INTO event_catalog (${COLUMNS}, project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id,
    r.name,
    r.folder,
    r.description,
    r.properties,
    r.pending,
    r.created_at,
    r.updated_at,
    r.last_seen_at,
    projectId,
  );
}

export async function updateCatalogEvent(q: Queryable, r: CatalogRow): Promise<void> {
  await q.run(
    "UPDATE event_catalog SET folder = ?, description = ?, properties = ?, pending = ?, updated_at = ?, last_seen_at = ? WHERE id = ?",
    r.folder,
    r.description,
    r.properties,
    r.pending,
    r.updated_at,
    r.last_seen_at,
    r.id,
  );
}

export async function deleteCatalogEvent(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM event_catalog WHERE id = ?", id);
}

export async function countCatalogEvents(q: Queryable, projectId: string): Promise<number> {
  return Number((await q.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM event_catalog WHERE project_id = ?", projectId))?.n ?? 0);
}

/** Pending rows (names ingest added) of the project created at or after `since` (ISO): what browser keys' allowance counts. */
export async function countPendingSince(q: Queryable, projectId: string, since: string): Promise<number> {
  const row = await q.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM event_catalog WHERE project_id = ? AND pending = 1 AND created_at >= ?", projectId, since);
  return Number(row?.n ?? 0);
}

/** Moves last-seen forward only (a slower server's older stamp never moves it back). */
export async function markCatalogSeen(q: Queryable, projectId: string, name: string, at: string): Promise<void> {
  await q.run(
    "UPDATE event_catalog SET last_seen_at = ? WHERE project_id = ? AND name = ? AND (last_seen_at IS NULL OR last_seen_at < ?)",
    at,
    projectId,
    name,
    at,
  );
}
