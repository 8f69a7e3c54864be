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
