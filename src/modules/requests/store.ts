import { type Queryable, rowsByIdPrefix } from "../../lib/store";
import type { RequestState } from "./types";

// The requests module's own queries (both engines).

export type RequestRow = {
  id: string;
  project_id: string;
  title: string;
  reason: string | null;
  state: RequestState;
  author: string;
  approvals_required: number | string;
  decided_by: string | null;
  note: string | null;
  created_at: string;
  updated_at: string;
  /** The schedule holding it (sch_…). */
  held_by: string | null;
};
export type ChangeRow = { request_id: string; position: number | string; change: string; summary: string; fingerprint: string };
export type ApprovalRow = { request_id: string; approver: string; created_at: string };

const COLUMNS = "id, project_id, title, reason, state, author, approvals_required, decided_by, note, created_at, updated_at, held_by";

export async function insertRequest(q: Queryable, r: RequestRow): Promise<void> {
  await q.run(
    `INSERT INTO change_requests (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id,
    r.project_id,
    r.title,
    r.reason,
    r.state,
    r.author,
    Number(r.approvals_required),
    r.decided_by,
    r.note,
    r.created_at,
    r.updated_at,
    r.held_by,
  );
}

export async function insertChange(q: Queryable, r: ChangeRow): Promise<void> {
  await q.run(`INSERT INTO change_request_changes (request_id, position, change, summary, fingerprint) VALUES (?, ?, ?, ?, ?)`, r.request_id, Number(r.position), r.change, r.summary, r.fingerprint);
}

/** By id, else by a unique id prefix; within the project only. */
export async function findRequest(q: Queryable, projectId: string, idOrPrefix: string): Promise<RequestRow | undefined> {
  const exact = await q.one<RequestRow>(`SELECT ${COLUMNS} FROM change_requests WHERE id = ? AND project_id = ?`, idOrPrefix, projectId);
  if (exact) return exact;
  const rows = await rowsByIdPrefix<RequestRow>(q, "change_requests", COLUMNS, projectId, idOrPrefix);
  return rows.length === 1 ? rows[0] : undefined;
}

/** Newest first. */
export function requestsOf(q: Queryable, projectId: string, state: RequestState | undefined, limit: number): Promise<RequestRow[]> {
  return state === undefined
    ? q.all<RequestRow>(`SELECT ${COLUMNS} FROM change_requests WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, projectId, limit)
    : q.all<RequestRow>(`SELECT ${COLUMNS} FROM change_requests WHERE project_id = ? AND state = ? ORDER BY created_at DESC, id DESC LIMIT ?`, projectId, state, limit);
}

export function changesOf(q: Queryable, ids: string[]): Promise<ChangeRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return q.all<ChangeRow>(`SELECT request_id, position, change, summary, fingerprint FROM change_request_changes WHERE request_id IN (${ids.map(() => "?").join(", ")}) ORDER BY request_id, position`, ...ids);
}

export function approvalsOf(q: Queryable, ids: string[]): Promise<ApprovalRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return q.all<ApprovalRow>(`SELECT request_id, approver, created_at FROM change_request_approvals WHERE request_id IN (${ids.map(() => "?").join(", ")}) ORDER BY created_at, approver`, ...ids);
}

export async function insertApproval(q: Queryable, requestId: string, approver: string, at: string): Promise<void> {
  await q.run(`INSERT INTO change_request_approvals (request_id, approver, created_at) VALUES (?, ?, ?)`, requestId, approver, at);
}

/** Moves a request from one state to another (0 when it was not in `from` any more). */
export function setState(q: Queryable, id: string, from: RequestState, to: RequestState, decidedBy: string | null, note: string | null, at: string): Promise<number> {
  return q.run(`UPDATE change_requests SET state = ?, decided_by = COALESCE(?, decided_by), note = COALESCE(?, note), updated_at = ? WHERE id = ? AND state = ?`, to, decidedBy, note, at, id, from);
}

/** A stale request opened again (rebase): its note and decider cleared (0 when it was not stale any more). */
export function reopenStale(q: Queryable, id: string, at: string): Promise<number> {
  return q.run(`UPDATE change_requests SET state = 'open', note = NULL, decided_by = NULL, updated_at = ? WHERE id = ? AND state = 'stale'`, at, id);
}

/** A change's new fingerprint and summary, taken against what is published now (rebase). */
export async function refingerprint(q: Queryable, requestId: string, position: number, fingerprint: string, summary: string): Promise<void> {
  await q.run(`UPDATE change_request_changes SET fingerprint = ?, summary = ? WHERE request_id = ? AND position = ?`, fingerprint, summary, requestId, position);
}

/** Approvals given to what the request was before a rebase no longer count. */
export async function clearApprovals(q: Queryable, requestId: string): Promise<void> {
  await q.run(`DELETE FROM change_request_approvals WHERE request_id = ?`, requestId);
}

/**
 * The approved requests of a project holding exactly one change, with it and who holds them (the schedules' approval
 * check looks for one covering a step: a request is applied whole, so one that holds more covers no single step).
 */
export function approvedSingleChanges(q: Queryable, projectId: string): Promise<{ id: string; change: string; held_by: string | null }[]> {
  return q.all(
    `SELECT r.id, c.change, r.held_by FROM change_requests r JOIN change_request_changes c ON c.request_id = r.id
     WHERE r.project_id = ? AND r.state = 'approved' AND (SELECT COUNT(*) FROM change_request_changes n WHERE n.request_id = r.id) = 1
     ORDER BY r.created_at, r.id`,
    projectId,
  );
}

/** The approved requests a holder (a schedule) holds, with their one change. */
export function heldRequests(q: Queryable, projectId: string, holderId: string): Promise<{ id: string; change: string; summary: string; title: string }[]> {
  return q.all(
    `SELECT r.id, c.change, c.summary, r.title FROM change_requests r JOIN change_request_changes c ON c.request_id = r.id
     WHERE r.project_id = ? AND r.held_by = ? AND r.state = 'approved' ORDER BY r.created_at, r.id, c.position`,
    projectId,
    holderId,
  );
}

/** Takes an approved, unheld request for a holder (0 when it was taken or decided meanwhile). */
export function holdRequest(q: Queryable, id: string, holderId: string, at: string): Promise<number> {
  return q.run(`UPDATE change_requests SET held_by = ?, updated_at = ? WHERE id = ? AND state = 'approved' AND held_by IS NULL`, holderId, at, id);
}

/** Gives an approved request back (held by nothing). */
export function releaseRequest(q: Queryable, id: string, holderId: string, at: string): Promise<number> {
  return q.run(`UPDATE change_requests SET held_by = NULL, updated_at = ? WHERE id = ? AND state = 'approved' AND held_by = ?`, at, id, holderId);
}

export async function policyOf(q: Queryable, projectId: string): Promise<string | undefined> {
  return (await q.one<{ policy: string }>(`SELECT policy FROM approval_policies WHERE project_id = ?`, projectId))?.policy;
}

export async function savePolicy(q: Queryable, projectId: string, policy: string, by: string, at: string): Promise<void> {
  const updated = await q.run(`UPDATE approval_policies SET policy = ?, updated_by = ?, updated_at = ? WHERE project_id = ?`, policy, by, at, projectId);
  if (updated === 0) await q.run(`INSERT INTO approval_policies (project_id, policy, updated_by, updated_at) VALUES (?, ?, ?, ?)`, projectId, policy, by, at);
}
