import type { Env } from "../../lib/envs";
import type { Queryable } from "../../lib/store";
import type { Killswitch, KillswitchEnvState, Switches } from "./types";

// The killswitches module's own queries. The per-env live state and versions are read and
// published through the shared path (src/lib/versioned.ts, the `versioned` tables in service.ts).

export type KillswitchRow = { id: string; name: string; description: string | null; created_at: string; updated_at: string };
/** The published content columns, as stored: `value` 0 or 1, `switches` JSON text. */
export type Content = { value: number; switches: string };
export type EnvRow = Content & { env: Env; version: number; updated_at: string; updated_by: string };

/** The entity row; its live and version rows follow through `versioned.publishFirst` in the same transaction. */
export async function insertKillswitch(
  q: Queryable,
  ks: { id: string; projectId: string; name: string; description: string | null; now: string },
): Promise<void> {
  await q.run(
    "INSERT INTO killswitches (id, project_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    ks.id,
    ks.projectId,
    ks.name,
    ks.description,
    ks.now,
    ks.now,
  );
}

export async function setKillswitchDescription(q: Queryable, id: string, description: string | null, now: string): Promise<void> {
  await q.run("UPDATE killswitches SET description = ?, updated_at = ? WHERE id = ?", description, now, id);
}

export async function touchKillswitch(q: Queryable, id: string, now: string): Promise<void> {
  await q.run("UPDATE killswitches SET updated_at = ? WHERE id = ?", now, id);
}

export function parseSwitches(json: string): Switches {
  return JSON.parse(json) as Switches;
}

export function toEnvState(row: EnvRow): KillswitchEnvState {
  return {
    value: Number(row.value) === 1,
    switches: parseSwitches(row.switches),
    version: row.version,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

export function toKillswitch(row: KillswitchRow, envs: Record<Env, KillswitchEnvState>): Killswitch {
  const description = row.description === null ? {} : { description: row.description };
  return { id: row.id, name: row.name, ...description, createdAt: row.created_at, updatedAt: row.updated_at, envs };
}
