import type { Queryable } from "../../lib/store";

// The ops module's own queries (both engines).

export type OpsItemRow = {
  id: string;
  project_id: string;
  number: number;
  type: string;
  status: string;
  priority: string;
  title: string;
  title_key: string;
  steps_to_reproduce: string | null;
  actual_result: string | null;
  expected_result: string | null;
  use_case: string | null;
  source: string;
  source_ref: string | null;
  reported_by: string;
  times_filed: number;
  created_at: string;
  updated_at: string;
  status_changed_at: string;
  status_changed_by: string;
};

const COLUMNS =
  "id, project_id, number, type, status, priority, title, title_key, steps_to_reproduce, actual_result, expected_result, use_case, source, source_ref, reported_by, times_filed, created_at, updated_at, status_changed_at, status_changed_by";

/** The statuses an item is still "open" in, for the intake's dedupe and the platform's one-item-per-subject rule. */
export const ACTIVE_STATUSES_SQL = "('pending_approval', 'open', 'in_progress')";

/**
 * The project's next number: the counter row is created at 1 or bumped, in
 * the caller's transaction (under the project's ops lock), so a rolled-back
 * filing gives its number back and no two filings get the same one.
 */
export async function nextNumber(q: Queryable, projectId: string): Promise<number> {
  const row = await q.one<{ last_number: number }>(
    `INSERT INTO ops_counters (project_id, last_number) VALUES (?, 1)
     ON CONFLICT (project_id) DO UPDATE SET last_number = ops_counters.last_number + 1
     RETURNING last_number`,
    projectId,
  );
  return Number(row!.last_number);
}

export async function insertItem(q: Queryable, r: OpsItemRow): Promise<void> {
  await q.run(
    `INSERT INTO ops_items (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id,
    r.project_id,
    r.number,
    r.type,
    r.status,
    r.priority,
    r.title,
    r.title_key,
    r.steps_to_reproduce,
    r.actual_result,
    r.expected_result,
    r.use_case,
    r.source,
    r.source_ref,
    r.reported_by,
    r.times_filed,
    r.created_at,
    r.updated_at,
    r.status_changed_at,
    r.status_changed_by,
  );
}

/** Every field a person or the platform may change after filing. */
export async function updateItem(q: Queryable, r: OpsItemRow): Promise<void> {
  await q.run(
    `UPDATE ops_items SET status = ?, priority = ?, title = ?, title_key = ?, steps_to_reproduce = ?, actual_result = ?, expected_result = ?,
       use_case = ?, times_filed = ?, updated_at = ?, status_changed_at = ?, status_changed_by = ? WHERE id = ?`,
    r.status,
    r.priority,
    r.title,
    r.title_key,
    r.steps_to_reproduce,
    r.actual_result,
    r.expected_result,
    r.use_case,
    r.times_filed,
    r.updated_at,
    r.status_changed_at,
    r.status_changed_by,
    r.id,
  );
}

/** Every item of the project, pending approval first, then newest (highest number) first. */
export async function itemsOfProject(q: Queryable, projectId: string, filter: { type?: string; status?: string }): Promise<OpsItemRow[]> {
  const where = ["project_id = ?"];
  const params: string[] = [projectId];
  if (filter.type) {
    where.push("type = ?");
    params.push(filter.type);
  }
  if (filter.status) {
    where.push("status = ?");
    params.push(filter.status);
  }
  return q.all<OpsItemRow>(
    `SELECT ${COLUMNS} FROM ops_items WHERE ${where.join(" AND ")}
     ORDER BY CASE WHEN status = 'pending_approval' THEN 0 ELSE 1 END, number DESC`,
    ...params,
  );
}

export async function itemById(q: Queryable, projectId: string, id: string): Promise<OpsItemRow | undefined> {
  return q.one<OpsItemRow>(`SELECT ${COLUMNS} FROM ops_items WHERE id = ? AND project_id = ?`, id, projectId);
}

export async function itemByNumber(q: Queryable, projectId: string, number: number): Promise<OpsItemRow | undefined> {
  return q.one<OpsItemRow>(`SELECT ${COLUMNS} FROM ops_items WHERE number = ? AND project_id = ?`, number, projectId);
}

/**
 * The oldest item filed through the public intake and still open (pending approval, open or in progress)
 * whose folded title is `titleKey`. Only intake items: an answer about an item people or svc filed would tell
 * anyone with a client key that an internal item of that title exists.
 * The few rows of one title are ordered here: with ORDER BY in SQL, SQLite may walk the (project, number)
 * index of the whole project instead of the title index.
 */
export async function activeIntakeItemByTitle(q: Queryable, projectId: string, titleKey: string): Promise<{ id: string; number: number } | undefined> {
  const rows = await q.all<{ id: string; number: number }>(
    `SELECT id, number FROM ops_items WHERE project_id = ? AND title_key = ? AND source = 'intake' AND status IN ${ACTIVE_STATUSES_SQL}`,
    projectId,
    titleKey,
  );
  return lowest(rows);
}

/** The latest item the platform filed about a tracked error or an alert rule (ordered here, as above). */
export async function latestItemFor(q: Queryable, projectId: string, sourceRef: string): Promise<OpsItemRow | undefined> {
  const rows = await q.all<OpsItemRow>(`SELECT ${COLUMNS} FROM ops_items WHERE project_id = ? AND source_ref = ?`, projectId, sourceRef);
  let latest: OpsItemRow | undefined;
  for (const r of rows) if (!latest || Number(r.number) > Number(latest.number)) latest = r;
  return latest;
}

function lowest<T extends { number: number }>(rows: T[]): T | undefined {
  let first: T | undefined;
  for (const r of rows) if (!first || Number(r.number) < Number(first.number)) first = r;
  return first;
}

/** What the intake needs of a project: whether it takes public tickets, and its domain (the allowed browser origin). */
export async function intakeSettings(q: Queryable, projectId: string): Promise<{ public_ticket_creation: number; domain: string } | undefined> {
  return q.one<{ public_ticket_creation: number; domain: string }>("SELECT public_ticket_creation, domain FROM projects WHERE id = ?", projectId);
}

/** Whether some project that takes public tickets has one of these domains (a browser origin, or its bare host for https). */
export async function intakeDomainExists(q: Queryable, domains: string[]): Promise<boolean> {
  const [a, b] = [domains[0] ?? "", domains[1] ?? domains[0] ?? ""];
  const row = await q.one<{ found: number }>("SELECT 1 AS found FROM projects WHERE public_ticket_creation = 1 AND domain IN (?, ?) LIMIT 1", a, b);
  return row !== undefined;
}
