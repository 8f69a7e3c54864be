import { type BearerResolver, type Credential, READ_ONLY_TOKEN_PERMISSIONS, READ_WRITE_TOKEN_PERMISSIONS } from "../../lib/auth";
import { type Db, writeTransaction } from "../../lib/db";
import { notFound, validation } from "../../lib/errors";
import { newId, nowIso, randomBase62, sha256Hex } from "../../lib/ids";

export const API_TOKEN_PREFIX = "svc_pat_";
export type TokenAccess = "read-only" | "read-write";

export type ApiToken = { id: string; projectId: string; name: string; access: TokenAccess; maskedToken: string; createdBy: string; createdAt: string };

type TokenRow = { id: string; project_id: string; name: string; access: TokenAccess; secret_tail: string; created_by: string; created_at: string };

const COLUMNS = "id, project_id, name, access, secret_tail, created_by, created_at";

/** Project API tokens for non-interactive use (CI): scoped to one project, read-only or read-write, revocable. */
export class TokensService {
  private readonly byHash;

  constructor(private readonly db: Db) {
    this.byHash = db.prepare<TokenRow, [string]>(`SELECT ${COLUMNS} FROM api_tokens WHERE secret_hash = ? AND revoked_at IS NULL`);
  }

  async mint(projectId: string, input: { name: string; access: TokenAccess }, createdBy: string): Promise<ApiToken & { token: string }> {
    const name = input.name.trim();
    if (name === "") throw validation("name must not be empty", "name: at least one non-space character");
    const token = `${API_TOKEN_PREFIX}${randomBase62(40)}`;
    const row: TokenRow = { id: newId("tok"), project_id: projectId, name, access: input.access, secret_tail: token.slice(-4), created_by: createdBy, created_at: nowIso() };
    await writeTransaction(this.db, () =>
      this.db
      .query(
        `INSERT INTO api_tokens (id, project_id, name, access, secret_hash, secret_tail, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.id, projectId, row.name, row.access, sha256Hex(token), row.secret_tail, createdBy, row.created_at));
    return { ...toToken(row), token };
  }

  /** Live tokens of a project, newest first, never their secrets. */
  list(projectId: string): ApiToken[] {
    return this.db
      .query<TokenRow, [string]>(`SELECT ${COLUMNS} FROM api_tokens WHERE project_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`)
      .all(projectId)
      .map(toToken);
  }

  async revoke(projectId: string, id: string): Promise<void> {
    const changed = await writeTransaction(this.db, () =>
      this.db.query("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL").run(nowIso(), id, projectId).changes,
    );
    if (changed === 0) throw notFound(`No live API token ${id} in this project`);
  }

  /** `svc_pat_` on /api/admin: its one project; read-only tokens are refused every write by the admin rule. */
  bearerResolver(): BearerResolver {
    return {
      prefix: API_TOKEN_PREFIX,
      resolve: (secret): Credential | null => {
        const row = this.byHash.get(sha256Hex(secret));
        if (!row) return null;
        const permissions = row.access === "read-only" ? READ_ONLY_TOKEN_PERMISSIONS : READ_WRITE_TOKEN_PERMISSIONS;
        return {
          kind: "api_token",
          credentialId: row.id,
          defaultProjectId: row.project_id,
          access: (projectId) => (projectId === row.project_id ? { permissions } : null),
          actor: { email: `api-token:${row.id}@tokens.local`, type: "token" },
          scopes: [row.access],
          allowedOrigin: null,
        };
      },
    };
  }
}

function toToken(r: TokenRow): ApiToken {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    access: r.access,
    maskedToken: `${API_TOKEN_PREFIX}…${r.secret_tail}`,
    createdBy: r.created_by,
    createdAt: r.created_at,
  };
}
