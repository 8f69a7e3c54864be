import type { AuditRow } from "../../lib/audit";
import { validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { listAuditRows } from "./store";

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 500;

export type AuditQuery = { limit?: number; before?: number; action?: string; q?: string };

/**
 * The audit trail: every module writes its rows through src/lib/audit.ts in
 * the transaction of its change; this module only reads them.
 */
export class AuditService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, query: AuditQuery = {}): Promise<{ entries: AuditRow[]; nextBefore: number | null }> {
    const limit = query.limit ?? AUDIT_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) {
      throw validation(`limit must be an integer from 1 to ${AUDIT_MAX_LIMIT}`, `limit: must be an integer from 1 to ${AUDIT_MAX_LIMIT}`);
    }
    if (query.before !== undefined && (!Number.isSafeInteger(query.before) || query.before < 1)) {
      throw validation("before must be a positive integer", "before: the `nextBefore` of the previous page");
    }
    // One more row than asked tells whether an older page exists.
    const rows = await listAuditRows(this.ctx.store, projectId, { ...query, limit: limit + 1 });
    const entries = rows.slice(0, limit);
    return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1]!.seq : null };
  }
}
