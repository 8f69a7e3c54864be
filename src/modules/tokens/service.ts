import { type AuditActor, recordAudit } from "../../lib/audit";
import { type BearerResolver, type Credential, READ_ONLY_TOKEN_PERMISSIONS, READ_WRITE_TOKEN_PERMISSIONS } from "../../lib/auth";
import { notFound, validation } from "../../lib/errors";
import { checkNameChars } from "../../lib/validate";
import { newId, nowIso, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { type TokenRow, findLiveTokenByHash, insertToken, listLiveTokens, revokeLiveToken, tokenNames } from "./store";
import { type TokenAccess } from "./types";
export { type TokenAccess };

export const API_TOKEN_PREFIX = "svc_pat_";

export type ApiToken = { id: string; projectId: string; name: string; access: TokenAccess; maskedToken: string; createdBy: string; createdAt: string };

/**
 * Project API tokens for non-interactive use (CI): scoped to one project,
 * read-only or read-write, revocable. A token is read from the store on
 * every request (nothing is cached): a revocation holds on every server at once.
 */
export class TokensService {
  constructor(private readonly ctx: ServiceContext) {}

  /** Mints a token; `actor` is recorded as its creator and in the audit row (never the secret). */
  async mint(projectId: string, input: { name: string; access: TokenAccess }, actor: AuditActor): Promise<ApiToken & { token: string }> {
    const name = input.name.trim();
    if (name === "") throw validation("name must not be empty", "name: at least one non-space character");
    checkNameChars("name", name);
    const token = `${API_TOKEN_PREFIX}${randomBase62(40)}`;
    const row: TokenRow = { id: newId("tok"), project_id: projectId, name, access: input.access, secret_tail: token.slice(-4), created_by: actor.email, created_at: nowIso() };
    await this.ctx.store.write(async (tx) => {
      await insertToken(tx, row, sha256Hex(token));
      await recordAudit(tx, { projectId, action: "token.create", subjectId: row.id, subjectName: row.name, actor, detail: { access: row.access } });
    });
    return { ...toToken(row), token };
  }

  /** Live tokens of a project, newest first, never their secrets. */
  async list(projectId: string): Promise<ApiToken[]> {
    return (await listLiveTokens(this.ctx.store, projectId)).map(toToken);
  }

  /** Token id → name, for the ids of this project among `ids` (revoked ones too): what audit rows show for `api-token:…` actors. */
  async names(projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
    return await tokenNames(this.ctx.store, projectId, ids);
  }

  /** Revokes a live token of the project (one conditional statement: of two revocations, one wins; the other is 404). */
  async revoke(projectId: string, id: string, actor: AuditActor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      const revoked = await revokeLiveToken(tx, projectId, id, nowIso());
      if (!revoked) throw notFound(`No live API token ${id} in this project`);
      await recordAudit(tx, { projectId, action: "token.revoke", subjectId: id, subjectName: revoked.name, actor, detail: { access: revoked.access } });
    });
  }

  /** `svc_pat_` on /api/admin: its one project; read-only tokens are refused every write by the admin rule. */
  bearerResolver(): BearerResolver {
    return {
      prefix: API_TOKEN_PREFIX,
      resolve: async (secret): Promise<Credential | null> => {
        const row = await findLiveTokenByHash(this.ctx.store, sha256Hex(secret));
        if (!row) return null;
        const permissions = row.access === "read-only" ? READ_ONLY_TOKEN_PERMISSIONS : READ_WRITE_TOKEN_PERMISSIONS;
        return {
          kind: "api_token",
          credentialId: row.id,
          defaultProjectId: row.project_id,
          access: async (projectId) => (projectId === row.project_id ? { permissions } : null),
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
