import type { Queryable } from "../../lib/store";
import type { TokenAccess } from "./types";

// The queries of the tokens module (table `api_tokens`); writes run in the caller's transaction.

export type TokenRow = { id: string; project_id: string; name: string; access: TokenAccess; secret_tail: string; created_by: string; created_at: string };

const COLUMNS = "id, project_id, name, access, secret_tail, created_by, created_at";

/** Only the secret's SHA-256 is stored (with the row's tail for masking). */
export async function insertToken(q: Queryable, row: TokenRow, secretHash: string): Promise<void> {
  await q.run(
    `INSERT INTO api_tokens (id, project_id, name, access, secret_hash, secret_tail, created_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    row.id,
    row.project_id,
    row.name,
    row.access,
    secretHash,
    row.secret_tail,
    row.created_by,
    row.created_at,
  );
}

/** Live tokens of a project, newest first (then by id, descending). */
export async function listLiveTokens(q: Queryable, projectId: string): Promise<TokenRow[]> {
  const rows = await q.all<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE project_id = ? AND revoked_at IS NULL`, projectId);
  // Sorted here, not by the engine: SQLite compares bytes, PostgreSQL its collation (ids mix cases).
  rows.sort((a, b) => compare(b.created_at, a.created_at) || compare(b.id, a.id));
  return rows;
}

/** The names of these tokens of the project, revoked ones too (an audit row outlives its token). */
export async function tokenNames(q: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await q.all<{ id: string; name: string }>(`SELECT id, name FROM api_tokens WHERE project_id = ? AND id IN (${ids.map(() => "?").join(", ")})`, projectId, ...ids);
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Revokes a live token of the project in one conditional statement; undefined when there was none. */
export function revokeLiveToken(
  q: Queryable,
  projectId: string,
  id: string,
  revokedAt: string,
): Promise<{ name: string; access: TokenAccess } | undefined> {
  return q.one<{ name: string; access: TokenAccess }>(
    "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL RETURNING name, access",
    revokedAt,
    id,
    projectId,
  );
}

/** The live token whose secret has this SHA-256, or undefined. */
export function findLiveTokenByHash(q: Queryable, secretHash: string): Promise<TokenRow | undefined> {
  return q.one<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE secret_hash = ? AND revoked_at IS NULL`, secretHash);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
