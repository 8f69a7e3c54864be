import type { Env } from "../../lib/envs";
import type { Queryable } from "../../lib/store";
import type { GateRule } from "../../sdk/gates";
import type { Gate, GateEnvState } from "./types";

// The gates module's own queries. The per-env live rules and versions are read and
// published through the shared path (src/lib/versioned.ts, the `versioned` tables in service.ts).

export type GateRow = { id: string; name: string; description: string; salt: string; created_at: string; updated_at: string };
/** The published content column, as stored: the rule list as JSON text. */
export type Content = { rules: string };
export type EnvRow = Content & { env: Env; version: number; updated_at: string; updated_by: string };

export async function insertGate(q: Queryable, g: { id: string; projectId: string; name: string; description: string; salt: string; now: string }): Promise<void> {
  await q.run("INSERT INTO gates (id, project_id, name, description, salt, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)", g.id, g.projectId, g.name, g.description, g.salt, g.now, g.now);
}

export async function touchGate(q: Queryable, id: string, now: string): Promise<void> {
  await q.run("UPDATE gates SET updated_at = ? WHERE id = ?", now, id);
}

export async function setGateDescription(q: Queryable, id: string, description: string, now: string): Promise<void> {
  await q.run("UPDATE gates SET description = ?, updated_at = ? WHERE id = ?", description, now, id);
}

export function parseRules(json: string): GateRule[] {
  return JSON.parse(json) as GateRule[];
}

export function toEnvState(row: EnvRow): GateEnvState {
  return { rules: parseRules(row.rules), version: row.version, updatedAt: row.updated_at, updatedBy: row.updated_by };
}

export function toGate(row: GateRow, envs: Record<Env, GateEnvState>): Gate {
  return { id: row.id, name: row.name, description: row.description, salt: row.salt, createdAt: row.created_at, updatedAt: row.updated_at, envs };
}

export type TemplateRow = { id: string; name: string; description: string; category: string; rules: string; created_at: string; updated_at: string };
const TEMPLATE_COLUMNS = "id, name, description, category, rules, created_at, updated_at";

export async function templatesOfProject(q: Queryable, projectId: string): Promise<TemplateRow[]> {
  return q.all<TemplateRow>(`SELECT ${TEMPLATE_COLUMNS} FROM gate_templates WHERE project_id = ?`, projectId);
}

/** By id, else by name, within the project only. */
export async function findTemplate(q: Queryable, projectId: string, idOrName: string): Promise<TemplateRow | undefined> {
  return (
    (await q.one<TemplateRow>(`SELECT ${TEMPLATE_COLUMNS} FROM gate_templates WHERE id = ? AND project_id = ?`, idOrName, projectId)) ??
    (await q.one<TemplateRow>(`SELECT ${TEMPLATE_COLUMNS} FROM gate_templates WHERE name = ? AND project_id = ?`, idOrName, projectId))
  );
}

export async function insertTemplate(q: Queryable, projectId: string, t: TemplateRow): Promise<void> {
  await q.run(
    "INSERT INTO gate_templates (id, project_id, name, description, category, rules, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    t.id,
    projectId,
    t.name,
    t.description,
    t.category,
    t.rules,
    t.created_at,
    t.updated_at,
  );
}

export async function updateTemplate(q: Queryable, t: TemplateRow): Promise<void> {
  await q.run("UPDATE gate_templates SET name = ?, description = ?, category = ?, rules = ?, updated_at = ? WHERE id = ?", t.name, t.description, t.category, t.rules, t.updated_at, t.id);
}

export async function deleteTemplate(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM gate_templates WHERE id = ?", id);
}
