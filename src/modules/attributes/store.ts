import type { Queryable } from "../../lib/store";

export type AttributeRow = {
  id: string;
  name: string;
  type: string;
  enum_values: string | null;
  required: number;
  description: string | null;
  sdk_path: string | null;
  source: "manual" | "auto";
  deprecated: number;
  created_at: string;
  last_seen_at: string | null;
};

const COLUMNS = "id, name, type, enum_values, required, description, sdk_path, source, deprecated, created_at, last_seen_at";

export async function attributesOfProject(q: Queryable, projectId: string): Promise<AttributeRow[]> {
  return q.all<AttributeRow>(`SELECT ${COLUMNS} FROM attributes WHERE project_id = ?`, projectId);
}

/** By id, else by name, within the project only. */
export async function findAttribute(q: Queryable, projectId: string, idOrName: string): Promise<AttributeRow | undefined> {
  return (
    (await q.one<AttributeRow>(`SELECT ${COLUMNS} FROM attributes WHERE id = ? AND project_id = ?`, idOrName, projectId)) ??
    (await q.one<AttributeRow>(`SELECT ${COLUMNS} FROM attributes WHERE name = ? AND project_id = ?`, idOrName, projectId))
  );
}

export async function insertAttribute(q: Queryable, projectId: string, a: AttributeRow): Promise<void> {
  await q.run(
    `INSERT INTO attributes (${COLUMNS}, project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    a.id,
    a.name,
    a.type,
    a.enum_values,
    a.required,
    a.description,
    a.sdk_path,
    a.source,
    a.deprecated,
    a.created_at,
    a.last_seen_at,
    projectId,
  );
}

export async function updateAttribute(q: Queryable, a: AttributeRow): Promise<void> {
  await q.run(
    "UPDATE attributes SET type = ?, enum_values = ?, required = ?, description = ?, sdk_path = ?, deprecated = ?, source = ? WHERE id = ?",
    a.type,
    a.enum_values,
    a.required,
    a.description,
    a.sdk_path,
    a.deprecated,
    a.source,
    a.id,
  );
}

/**
 * One seen attribute: created as `auto` when new, else only its last-seen
 * time moves forward (a slower server's older stamp never moves it back).
 * The same statement on both engines.
 */
export async function upsertSeen(q: Queryable, projectId: string, seen: { id: string; name: string; type: string; at: string }): Promise<void> {
  await q.run(
    `INSERT INTO attributes (id, project_id, name, type, enum_values, required, description, sdk_path, source, deprecated, created_at, last_seen_at)
     VALUES (?, ?, ?, ?, NULL, 0, NULL, NULL, 'auto', 0, ?, ?)
     ON CONFLICT (project_id, name) DO UPDATE SET last_seen_at =
       CASE WHEN attributes.last_seen_at IS NULL OR excluded.last_seen_at > attributes.last_seen_at THEN excluded.last_seen_at ELSE attributes.last_seen_at END`,
    seen.id,
    projectId,
    seen.name,
    seen.type,
    seen.at,
    seen.at,
  );
}
