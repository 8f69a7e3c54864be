import { ENVS, type Env } from "../../lib/envs";
import type { Queryable } from "../../lib/store";
import { byText } from "../../lib/versioned";
import type { ConfigRule } from "../../sdk/configs";
import { publicRules } from "./rules";
import type { ActivityRow, Config, Draft, DraftValue, EnvValue } from "./types";

// The configs module's own queries: the entity row, drafts and the activity log. Published values
// and versions are read and published through the shared path (src/lib/versioned.ts, the
// `versioned` tables in service.ts).

export type ConfigRow = {
  id: string;
  name: string;
  description: string;
  schema: string;
  schema_hash: string;
  change_seq: number;
  created_at: string;
  updated_at: string;
};
export type ValueRow = { config_id: string; env: Env; value: string; rules: string; version: number; updated_at: string };
export type VersionRow = { env: Env; version: number; value: string; rules: string; actor_email: string; actor_type: string; created_at: string };
/** `rules` null: the draft keeps the rules published when it is published. */
export type DraftRow = { config_id: string; env: Env; value: string; rules: string | null; base_version: number; updated_at: string };

const DRAFT_COLUMNS = "config_id, env, value, rules, base_version, updated_at";

/** The entity row; its values follow through `versioned.publishFirst` in the same transaction. */
export async function insertConfig(
  q: Queryable,
  config: { id: string; projectId: string; name: string; description: string; schema: string; schemaHash: string; now: string },
): Promise<void> {
  await q.run(
    `INSERT INTO configs (id, project_id, name, description, schema, schema_hash, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    config.id,
    config.projectId,
    config.name,
    config.description,
    config.schema,
    config.schemaHash,
    config.now,
    config.now,
  );
}

export async function setConfigSchema(q: Queryable, configId: string, schema: string, schemaHash: string): Promise<void> {
  await q.run("UPDATE configs SET schema = ?, schema_hash = ? WHERE id = ?", schema, schemaHash, configId);
}

export async function setConfigDescription(q: Queryable, configId: string, description: string): Promise<void> {
  await q.run("UPDATE configs SET description = ? WHERE id = ?", description, configId);
}

/** A change of what is published: `updated_at` and `change_seq` move. */
export async function touchConfig(q: Queryable, configId: string, now: string): Promise<void> {
  await q.run("UPDATE configs SET updated_at = ?, change_seq = change_seq + 1 WHERE id = ?", now, configId);
}

/** A change that publishes nothing (drafts): only `change_seq` moves, so optimistic writers validate again. */
export async function bumpChangeSeq(q: Queryable, configId: string): Promise<void> {
  await q.run("UPDATE configs SET change_seq = change_seq + 1 WHERE id = ?", configId);
}

/** Every draft of the project's configs (for lists). */
export function listDraftsOfProject(q: Queryable, projectId: string): Promise<DraftRow[]> {
  return q.all<DraftRow>(
    "SELECT d.config_id, d.env, d.value, d.rules, d.base_version, d.updated_at FROM config_drafts d JOIN configs c ON c.id = d.config_id WHERE c.project_id = ?",
    projectId,
  );
}

/** The config's drafts, by env name (the order SQLite's primary key gave before PostgreSQL). */
export async function listDrafts(q: Queryable, configId: string): Promise<DraftRow[]> {
  return byEnvName(await q.all<DraftRow>(`SELECT ${DRAFT_COLUMNS} FROM config_drafts WHERE config_id = ?`, configId));
}

export function findDraft(q: Queryable, configId: string, env: Env): Promise<DraftRow | undefined> {
  return q.one<DraftRow>(`SELECT ${DRAFT_COLUMNS} FROM config_drafts WHERE config_id = ? AND env = ?`, configId, env);
}

/** Stores or overwrites the env's draft. */
export async function upsertDraft(
  q: Queryable,
  draft: { configId: string; env: Env; value: string; rules: string | null; baseVersion: number; actorEmail: string; updatedAt: string },
): Promise<void> {
  await q.run(
    `INSERT INTO config_drafts (config_id, env, value, rules, base_version, actor_email, updated_at) VALUES (?1, ?2, ?3, ?7, ?4, ?5, ?6)
     ON CONFLICT (config_id, env) DO UPDATE SET value = ?3, rules = ?7, base_version = ?4, actor_email = ?5, updated_at = ?6`,
    draft.configId,
    draft.env,
    draft.value,
    draft.baseVersion,
    draft.actorEmail,
    draft.updatedAt,
    draft.rules,
  );
}

/** Answers how many rows went (0 or 1). */
export function deleteDraft(q: Queryable, configId: string, env: Env): Promise<number> {
  return q.run("DELETE FROM config_drafts WHERE config_id = ? AND env = ?", configId, env);
}

/** One activity row; `payload` is stored as JSON text. */
export async function insertActivity(
  q: Queryable,
  row: { id: string; projectId: string; configId: string; action: string; actorEmail: string; actorType: string; payload: Record<string, unknown>; createdAt: string },
): Promise<void> {
  await q.run(
    `INSERT INTO config_activity (id, project_id, config_id, action, actor_email, actor_type, payload, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    row.id,
    row.projectId,
    row.configId,
    row.action,
    row.actorEmail,
    row.actorType,
    JSON.stringify(row.payload),
    row.createdAt,
  );
}

/** A config's activity rows, newest first; found by config id, so a deleted config's rows stay readable. */
export async function listActivity(q: Queryable, projectId: string, configId: string, limit: number): Promise<ActivityRow[]> {
  const rows = await q.all<{ id: string; action: string; actor_email: string; actor_type: string; payload: string; created_at: string }>(
    `SELECT id, action, actor_email, actor_type, payload, created_at FROM config_activity
     WHERE project_id = ? AND config_id = ? ORDER BY seq DESC LIMIT ?`,
    projectId,
    configId,
    limit,
  );
  return rows.map((r) => ({
    id: r.id,
    action: r.action,
    actorEmail: r.actor_email,
    actorType: r.actor_type,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    createdAt: r.created_at,
  }));
}

export function groupBy<R extends { config_id: string }>(rows: R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    let list = out.get(r.config_id);
    if (!list) out.set(r.config_id, (list = []));
    list.push(r);
  }
  return out;
}

/** Rows in ENVS order (dev, staging, prod), whatever order the engine returned them in. */
export function sortByEnv<R extends { env: Env }>(rows: R[]): R[] {
  return rows.sort((a, b) => ENVS.indexOf(a.env) - ENVS.indexOf(b.env));
}

/**
 * Rows by env name (dev, prod, staging): the primary key's order, in which
 * validation problems of stored values and drafts have always been listed.
 */
export function byEnvName<R extends { env: Env }>(rows: R[]): R[] {
  return rows.sort((a, b) => byText(a.env, b.env));
}

/** Stored rules (JSON text) as the API shows them: without a split's buckets. */
export function parseRules(text: string): ConfigRule[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? (parsed as ConfigRule[]) : [];
}

export function toDraft(d: DraftRow): Draft {
  const draft: Draft = { id: d.config_id, env: d.env, value: JSON.parse(d.value) as unknown, baseVersion: d.base_version, updatedAt: d.updated_at };
  if (d.rules !== null) draft.rules = publicRules(parseRules(d.rules));
  return draft;
}

export function toConfig(row: ConfigRow, values: ValueRow[], drafts: DraftRow[]): Config {
  const envs = {} as Record<Env, EnvValue>;
  for (const env of ENVS) {
    const v = values.find((x) => x.env === env)!;
    envs[env] = { value: JSON.parse(v.value) as unknown, rules: publicRules(parseRules(v.rules)), version: v.version, updatedAt: v.updated_at };
  }
  const byEnv: Partial<Record<Env, DraftValue>> = {};
  for (const env of ENVS) {
    const d = drafts.find((x) => x.env === env);
    if (d) {
      byEnv[env] = { value: JSON.parse(d.value) as unknown, baseVersion: d.base_version, updatedAt: d.updated_at };
      if (d.rules !== null) byEnv[env].rules = publicRules(parseRules(d.rules));
    }
  }
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    schema: JSON.parse(row.schema) as unknown,
    envs,
    drafts: byEnv,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
