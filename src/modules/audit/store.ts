import { AUDIT_COLUMNS, type AuditLogRow, type AuditRow, toAuditRow } from "../../lib/audit";
import type { Param, Queryable } from "../../lib/store";

export type AuditFilter = {
  limit: number;
  before?: number;
  action?: string;
  q?: string;
  /** Lowered (ASCII) email, matched whole. */
  actor?: string;
  /** A resource type (the action's part before its first dot). */
  resource?: string;
  /** One subject's id. */
  subject?: string;
  /** ISO timestamps as stored (`toISOString()`): since inclusive, until exclusive. */
  since?: string;
  until?: string;
};

/**
 * A project's audit rows, newest first, one page at a time (`before` a seq):
 * the project's own rows and those of its organisation that belong to no
 * project (members, sign-ins). Each part is its own indexed, ordered and
 * limited scan (project_id…, or the partial organisation index), merged by
 * seq: one OR over both would leave either engine free to scan the table.
 *
 * `action` matches a whole action or a prefix ending in '.' (`killswitch.`);
 * `q` a case-insensitive substring of the subject's name or the actor's email.
 * LIKE patterns are built here with their wildcards escaped.
 */
export async function listAuditRows(store: Queryable, scope: { projectId: string; organisationId: string | null }, filter: AuditFilter): Promise<AuditRow[]> {
  const where: string[] = [];
  const params: Param[] = [];
  if (filter.before !== undefined) {
    where.push("seq < ?");
    params.push(filter.before);
  }
  if (filter.action) {
    if (filter.action.endsWith(".")) {
      where.push("action LIKE ? ESCAPE '\\'");
      params.push(`${escapeLike(filter.action)}%`);
    } else {
      where.push("action = ?");
      params.push(filter.action);
    }
  }
  if (filter.q) {
    where.push("(LOWER(COALESCE(subject_name, '')) LIKE ? ESCAPE '\\' OR LOWER(actor_email) LIKE ? ESCAPE '\\')");
    const pattern = `%${escapeLike(filter.q.toLowerCase())}%`;
    params.push(pattern, pattern);
  }
  if (filter.actor) {
    where.push("lower(actor_email) = ?");
    params.push(filter.actor);
  }
  if (filter.resource) {
    where.push("resource = ?");
    params.push(filter.resource);
  }
  if (filter.subject) {
    where.push("subject_id = ?");
    params.push(filter.subject);
  }
  if (filter.since) {
    where.push("created_at >= ?");
    params.push(filter.since);
  }
  if (filter.until) {
    where.push("created_at < ?");
    params.push(filter.until);
  }
  const rest = where.map((w) => ` AND ${w}`).join("");
  const part = (scopeSql: string) => `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE ${scopeSql}${rest} ORDER BY seq DESC LIMIT ?`;
  let sql = `SELECT ${AUDIT_COLUMNS} FROM (${part("project_id = ?")}) AS p`;
  const all: Param[] = [scope.projectId, ...params, filter.limit];
  if (scope.organisationId) {
    sql += ` UNION ALL SELECT ${AUDIT_COLUMNS} FROM (${part("organisation_id = ? AND project_id IS NULL")}) AS o`;
    all.push(scope.organisationId, ...params, filter.limit);
  }
  sql += " ORDER BY seq DESC LIMIT ?";
  all.push(filter.limit);
  const rows = await store.all<AuditLogRow>(sql, ...all);
  return rows.map(toAuditRow);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
