import type { SdkKeyInfo } from "../../lib/auth";
import type { Env } from "../../lib/envs";
import type { Queryable } from "../../lib/store";
import type { KeyType, SdkKey } from "./types";

// The queries of the keys module (table `sdk_keys`); writes run in the caller's transaction.

export type KeyRow = {
  id: string;
  project_id: string;
  type: KeyType;
  name: string;
  scopes: string;
  secret_tail: string;
  allowed_origin: string | null;
  env: Env | null;
  created_at: string;
  last_used_at: string | null;
};

const KEY_COLUMNS = "id, project_id, type, name, scopes, secret_tail, allowed_origin, env, created_at, last_used_at";

/** Only the secret's SHA-256 and its last characters are stored. A taken secret is a unique violation. */
export async function insertKey(q: Queryable, key: Omit<SdkKey, "lastUsedAt">, secretHash: string, secretTail: string): Promise<void> {
  await q.run(
    `INSERT INTO sdk_keys (id, project_id, type, name, scopes, secret_hash, secret_tail, allowed_origin, env, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    key.id,
    key.projectId,
    key.type,
    key.name,
    JSON.stringify(key.scopes),
    secretHash,
    secretTail,
    key.allowedOrigin,
    key.env,
    key.createdAt,
  );
}

/** Live keys of a project, newest first. */
export function listLiveKeys(q: Queryable, projectId: string): Promise<KeyRow[]> {
  return q.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE project_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`, projectId);
}

/** Revokes a live key of the project in one conditional statement; undefined when there was none. */
export function revokeLiveKey(q: Queryable, projectId: string, id: string, revokedAt: string): Promise<{ name: string; type: KeyType } | undefined> {
  return q.one<{ name: string; type: KeyType }>(
    "UPDATE sdk_keys SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL RETURNING name, type",
    revokedAt,
    id,
    projectId,
  );
}

/** A live key of the project by id, or undefined. */
export function findLiveKey(q: Queryable, projectId: string, id: string): Promise<KeyRow | undefined> {
  return q.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE id = ? AND project_id = ? AND revoked_at IS NULL`, id, projectId);
}

/** The live key whose secret has this SHA-256, or undefined. */
export function findLiveKeyByHash(q: Queryable, secretHash: string): Promise<KeyRow | undefined> {
  return q.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM sdk_keys WHERE secret_hash = ? AND revoked_at IS NULL`, secretHash);
}

/** The names of these keys of the project, revoked ones too (an audit row outlives its key); unnamed keys are left out. */
export async function keyNames(q: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await q.all<{ id: string; name: string }>(`SELECT id, name FROM sdk_keys WHERE project_id = ? AND id IN (${ids.map(() => "?").join(", ")})`, projectId, ...ids);
  return new Map(rows.filter((r) => r.name !== "").map((r) => [r.id, r.name]));
}

/** Writes last-use stamps (key id → epoch ms), one statement per key, in the caller's transaction. */
export async function markKeysUsed(q: Queryable, uses: Iterable<[id: string, at: number]>): Promise<void> {
  for (const [id, at] of uses) {
    const iso = new Date(at).toISOString();
    // Another server may have written a newer use already: it wins.
    await q.run("UPDATE sdk_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", iso, id, iso);
  }
}

/** Sets the allowed origin of every live key of the project. */
export async function setAllowedOriginOfLiveKeys(q: Queryable, projectId: string, allowedOrigin: string | null): Promise<void> {
  await q.run("UPDATE sdk_keys SET allowed_origin = ? WHERE project_id = ? AND revoked_at IS NULL", allowedOrigin, projectId);
}

export function toKey(r: KeyRow): SdkKey {
  return {
    id: r.id,
    projectId: r.project_id,
    type: r.type,
    name: r.name,
    scopes: JSON.parse(r.scopes) as string[],
    allowedOrigin: r.allowed_origin,
    env: r.env,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

/** What the request path needs of a key (see `KeyDirectory`). */
export function toKeyInfo(r: KeyRow): SdkKeyInfo {
  return { id: r.id, projectId: r.project_id, type: r.type, scopes: JSON.parse(r.scopes) as string[], allowedOrigin: r.allowed_origin, env: r.env };
}
