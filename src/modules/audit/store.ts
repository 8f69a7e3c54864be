import type { AuditRow } from "../../lib/audit";
import type { Queryable } from "../../lib/store";

type AuditLogRow = {
  seq: number | string;
  action: string;
  subject_id: string | null;
  subject_name: string | null;
  env: string | null;
  actor_email: string;
  actor_type: string;
  detail: string | null;
  created_at: string;
};

export type AuditFilter = { limit: number; before?: number; action?: string; q?: string };

/**
 * A project's audit rows, newest first, one page at a time (`before` a seq).
 * `action` matches a whole action or a prefix ending in '.' (`killswitch.`);
 * `q` a case-insensitive substring of the subject's name or the actor's email.
 * LIKE patterns are built here with their wildcards escaped.
 */
export async function listAuditRows(store: Queryable, projectId: string, filter: AuditFilter): Promise<AuditRow[]> {
  const where = ["project_id = ?"];
  const params: (string | number)[] = [projectId];
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
  params.push(filter.limit);
  const rows = await store.all<AuditLogRow>(
    `SELECT seq, action, subject_id, subject_name, env, actor_email, actor_type, detail, created_at FROM audit_log WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`,
    ...params,
  );
  return rows.map((r) => ({
    seq: Number(r.seq),
    action: r.action,
    subjectId: r.subject_id,
    subjectName: r.subject_name,
    env: r.env,
    actorEmail: r.actor_email,
    actorType: r.actor_type,
    detail: r.detail === null ? null : JSON.parse(r.detail),
    createdAt: r.created_at,
  }));
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
